package db

import (
	"strconv"

	"github.com/cnpjgraph/cnpjgraph/words"
)

// The office signatures (table office_signatures): each office with a
// state, its key, its company name's words signature and its alias's
// (words.Signature), indexed by state and key with the signatures
// included. A name search with one state walks that index, reading a name
// only where its signature holds the value's: about 4 % of the offices
// for a word a name of six words lacks, against every office before (a
// probe of its company's name, ~5 µs, for each). The importer derives the
// table after the load, from companies.name_sig and offices.alias_sig,
// which it computes with the names' words.
const (
	OfficeSignaturesSQL = `CREATE TABLE office_signatures AS
SELECT o.state, o.tax_id, coalesce(c.name_sig, 0) AS name_sig, o.alias_sig
FROM offices o LEFT JOIN companies c ON c.root = o.root
WHERE o.state IS NOT NULL`
	OfficeSignaturesIndexSQL = `CREATE INDEX office_signatures_state ON office_signatures (state, tax_id) INCLUDE (name_sig, alias_sig)`
)

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
