package db

import (
	"strconv"

	"github.com/cnpjgraph/cnpjgraph/words"
)

// The office signatures (table office_signatures): each office with a
// state, its state and key as one column (state_tax_id: the state's two
// letters and the tax id), its company name's words signature and its
// alias's (words.Signature), indexed by that column with the signatures
// included. A name search with one state walks that index over the
// state's range, reading a name only where its signature holds the
// value's: about 4 % of the offices for a word a name of six words lacks,
// against every office before (a probe of its company's name, ~5 µs, for
// each). One column, not (state, tax_id): every office of a state ties on
// the state, and the index on the two columns took 4.6 s to build against
// 1.6 (the 1M-establishment bench dump). The importer derives the table
// after the load, from companies.name_sig and offices.alias_sig, which it
// computes with the names' words.
const (
	OfficeSignaturesSQL = `CREATE TABLE office_signatures AS
SELECT o.state || o.tax_id AS state_tax_id, coalesce(c.name_sig, 0) AS name_sig, o.alias_sig
FROM offices o LEFT JOIN companies c ON c.root = o.root
WHERE o.state IS NOT NULL`
	OfficeSignaturesIndexSQL = `CREATE UNIQUE INDEX office_signatures_state ON office_signatures (state_tax_id) INCLUDE (name_sig, alias_sig) WITH (fillfactor = 100)`
)

// stateSignatures is the condition on office_signatures (as o) of the
// signatures of state's offices after the key after (an SQL literal; ""
// for all): a range of their index. A tax id has 14 characters, so a key
// of 16 bytes in the range is the state's, and one whose state is not two
// letters is left out.
func stateSignatures(state, after string) string {
	from := quoteText(state)
	if after != "" {
		from += " || " + after
	}
	return "o.state_tax_id > " + from + " AND o.state_tax_id < " + quoteText(state+"~") + " AND octet_length(o.state_tax_id) = 16"
}

// signedOffice is the root and the tax id of a signatures' row (o) as SQL:
// cut from state_tax_id, or, in snapshots imported before it (pairs), the
// tax id's own column.
func signedOffice(pairs bool) (root, taxID string) {
	if pairs {
		return "left(o.tax_id, 8)", "o.tax_id"
	}
	return "substr(o.state_tax_id, 3, 8)", "right(o.state_tax_id, 14)"
}

// holdsSignature is "column's signature holds one of the alternatives'":
// every row that holds all the words of one has it (and about one in 30
// more, which the caller checks against the words themselves).
func holdsSignature(column string, alternatives [][]string) string {
	cond := ""
	for i, ws := range alternatives {
		if i > 0 {
			cond += " OR "
		}
		// Quoted: the bigint literal of a negative signature would
		// otherwise be read as minus a numeric.
		m := "'" + strconv.FormatInt(int64(words.Signature(ws)), 10) + "'::bigint"
		cond += column + " & " + m + " = " + m
	}
	return "(" + cond + ")"
}

// signedWords is "the signature in sigColumn holds one of the
// alternatives', and words (an expression read only then) holds every word
// of one of them" (args: their wordArgs).
func signedWords(sigColumn, words string, alternatives [][]string, args []string) string {
	return "(" + holdsSignature(sigColumn, alternatives) + " AND " + wordsIn(words, OpIn, args) + ")"
}

// companyNameWords is the name words of the company whose root is root, as
// a scalar subquery: read per row, where a join would be planned first.
func companyNameWords(root string) string {
	return "(SELECT cw.name_words FROM " + LiveSchema + ".companies cw WHERE cw.root = " + root + ")"
}

// officeAliasWords is the alias words of the office whose tax id is taxID,
// as a scalar subquery (see companyNameWords).
func officeAliasWords(taxID string) string {
	return "(SELECT ow.alias_words FROM " + LiveSchema + ".offices ow WHERE ow.tax_id = " + taxID + ")"
}
