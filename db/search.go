package db

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Searches over the live snapshot (GET /office, GET /person): each filter
// of the contract is one row of OfficeFilters or PersonFilters, its name,
// the value type the service layer parses, the operators it takes and the
// SQL condition it becomes. Matches come in key order (tax id, person id)
// and pages are keyset pages: a page after a key costs what the first does.

// ValueType is how a filter's values are read.
type ValueType uint8

// Value types.
const (
	Words       ValueType = iota // names: each value is the words that must all occur
	Text                         // free text, upper-cased
	Enum                         // one of the spec's Allowed values
	Int                          // whole numbers
	Date                         // YYYY-MM-DD
	Bool                         // true or false
	Number                       // a decimal number
	Zip                          // a CEP: 8 digits
	OfficeID                     // a CNPJ
	PersonTaxID                  // a CPF (11 digits, or masked ***123456**) or a CNPJ
)

// Operators.
const (
	OpIn  = "in"  // any of the values
	OpNin = "nin" // none of the values
	OpGte = "gte" // at least
	OpLte = "lte" // at most
	OpEq  = "eq"  // equals
	OpEx  = "ex"  // has at least one (true) or none (false)
)

// Filter is one parsed condition: Field (e.g. "address.state"), its
// operator and its values, typed by the field's ValueType.
type Filter struct {
	Field  string
	Op     string
	Texts  []string   // Text, Enum, Zip, OfficeID, PersonTaxID; Zip bounds
	Words  [][]string // Words: one list of words per alternative
	Ints   []int      // Int; Int bounds are Ints[0]
	Date   time.Time  // Date bounds
	Bool   bool       // Bool, and every OpEx
	Number string     // Number bounds, as decimal text
}

// FilterSpec is a filter the search accepts.
type FilterSpec struct {
	Field   string
	Type    ValueType
	Ops     []string
	Allowed []string // Enum's values
	cond    func(w *where, f Filter) string
}

// where collects a search's conditions, their values written in them as
// literals (arg).
type where struct {
	conds      []string
	codes      *Codes
	catalog    *Catalog
	company    bool       // conditions read c (companies)
	simples    bool       // conditions read s (simples)
	names      [][]string // names.in: the company name or the alias holds one of these word lists
	state      string     // the address.state condition, as in conds
	oneState   string     // that condition's state when it names one: an equality
	personName []string   // a person search's name.in of one value, read through person_words
	personIn   [][]string // a person search's name.in, however it is read
	// collect: a filter's offices are few by the statistics (a side
	// activity they do not list: Codes.UnlistedSideActivities) or by its
	// index (a bound's range: probeRanges), so a page
	// of a search without names.in reads them whole through that filter's
	// index and sorts them, never walking the offices in key order for
	// them (a name's branches choose their own ways).
	collect bool
	// activities: activities.id.in of such side activities, as an array
	// literal, not among conds: its main activities and its side ones are
	// a branch each, the side one collected (SearchOffices).
	activities string
	// ranges: the bounded columns, probed before the search is shaped
	// (probeRanges).
	ranges []*rangeScan
	// factActivity and facts: mainActivity.id.in and the company's facts
	// the search asks for (company.size.id.in, company.nature.id...), as
	// conditions on office_lookups (l), for activityFacts.
	factActivity string
	facts        []string
	// nameFacts: the search's conditions on a company's facts as the
	// indexes of the names read them (each an operator and its operand
	// on companyFacts: factsOf), for the collect and the tried count of a
	// company's name or an alias (names.in, company.name.in:
	// companyNames, companyName).
	nameFacts    []string
	companyNames [][]string
	companyName  string // company.name.in's condition
	filters      int    // the search's filters, its conditions or not
	after        string // the key a page starts after, as a literal; "" on a first page
}

// sel is "SELECT cols" of a branch under the search's conditions and
// extra ones.
func (w *where) sel(b branch, cols string, extra ...string) string {
	conds := slices.Concat(w.conds, []string{b.cond}, extra)
	conds = slices.DeleteFunc(conds, func(c string) bool { return c == "" })
	where := "true"
	if len(conds) > 0 {
		where = strings.Join(conds, " AND ")
	}
	return "SELECT " + cols + " FROM " + b.from + " WHERE " + where
}

// arg is v as an SQL literal. Search statements carry their values as
// literals, not parameters: sent without parameters, a statement is one
// round trip (lib/pq's simple query), planned for its values (whether a
// search should walk an index in key order or collect its matches depends
// on how many the values match: a generic plan took 200 ms where the
// right one takes 1), and led by its own settings (searchSettings).
func (w *where) arg(v any) string {
	return literal(v)
}

// literal is v (a string, bool, int, int64, or an array of pq.Array) as
// an SQL literal. Text that PostgreSQL would refuse (a NUL, bytes that are
// not UTF-8) becomes U+FFFD, which no registry value holds: such a value
// matches nothing, as it could not match before.
func literal(v any) string {
	switch v := v.(type) {
	case string:
		return quoteText(v)
	case bool:
		return strconv.FormatBool(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case driver.Valuer:
		x, err := v.Value()
		if err == nil {
			switch x := x.(type) {
			case nil:
				return "NULL"
			case string:
				return quoteText(x)
			case []byte:
				return quoteText(string(x))
			}
		}
	}
	panic(fmt.Sprintf("search: no SQL literal for %T", v)) // a programming error: every filter's values are one of these
}

func quoteText(s string) string {
	return pq.QuoteLiteral(strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD"))
}

// anyOf is "expr = ANY(values)", or its negation for nin; a NULL column
// is none of the values.
func anyOf(w *where, expr string, op string, values []string) string {
	if len(values) == 1 {
		// An equality: the planner then reads an index that starts with
		// expr as ordered by its next columns (= ANY would need a sort).
		return negate(op, expr+" = "+w.arg(values[0]))
	}
	return negate(op, expr+" = ANY("+w.arg(pq.Array(values))+")")
}

// negate turns a condition into its nin form: NULL (no value) counts as
// "none of them".
func negate(op, cond string) string {
	if op == OpNin {
		return "NOT coalesce(" + cond + ", false)"
	}
	return cond
}

// bound is "expr >= v" or "expr <= v".
func bound(w *where, expr, op string, v any) string {
	if op == OpGte {
		return expr + " >= " + w.arg(v)
	}
	return expr + " <= " + w.arg(v)
}

// wordsOf is "column holds every word of one of the alternatives".
func wordsOf(w *where, column, op string, alternatives [][]string) string {
	return wordsIn(column, op, wordArgs(w, alternatives))
}

// wordArgs are the arguments of the alternatives' word lists, for wordsIn.
func wordArgs(w *where, alternatives [][]string) []string {
	args := make([]string, len(alternatives))
	for i, ws := range alternatives {
		args[i] = w.arg(pq.Array(ws))
	}
	return args
}

// wordsIn is wordsOf over arguments already given (wordArgs): conditions
// on several columns share them.
func wordsIn(column, op string, args []string) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = column + " @> " + a + "::text[]"
	}
	return negate(op, "("+strings.Join(parts, " OR ")+")")
}

func textSpec(field, expr string, ops ...string) FilterSpec {
	return FilterSpec{Field: field, Type: Text, Ops: ops, cond: func(w *where, f Filter) string {
		return anyOf(w, expr, f.Op, f.Texts)
	}}
}

// padded codes: the dump writes codes zero-padded to a fixed width.
func padded(ints []int, width int) []string {
	out := make([]string, len(ints))
	for i, n := range ints {
		out[i] = fmt.Sprintf("%0*d", width, n)
	}
	return out
}

func codeSpec(field, expr string, width int, ops ...string) FilterSpec {
	return FilterSpec{Field: field, Type: Int, Ops: ops, cond: func(w *where, f Filter) string {
		return anyOf(w, expr, f.Op, padded(f.Ints, width))
	}}
}

// dateSpec bounds a date column of the offices, which has its index (see
// rangeScan).
func dateSpec(field, column string) FilterSpec {
	return FilterSpec{Field: field, Type: Date, Ops: []string{OpGte, OpLte}, cond: func(w *where, f Filter) string {
		return w.ranged(field, LiveSchema+".offices o", column, "o.tax_id", "o.tax_id", bound(w, column, f.Op, f.Date.Format(time.DateOnly)))
	}}
}

func boolSpec(field, expr string) FilterSpec {
	return FilterSpec{Field: field, Type: Bool, Ops: []string{OpEq}, cond: func(w *where, f Filter) string {
		return expr + " = " + w.arg(f.Bool)
	}}
}

// contains is a case- and accent-insensitive substring match of
// free-text address fields (the values arrive upper-cased, accents
// dropped: Text).
func containsSpec(field, column string) FilterSpec {
	return FilterSpec{Field: field, Type: Text, Ops: []string{OpIn, OpNin}, cond: func(w *where, f Filter) string {
		patterns := make([]string, len(f.Texts))
		for i, t := range f.Texts {
			patterns[i] = "%" + escapeLike(t) + "%"
		}
		return negate(f.Op, "translate(upper("+column+"), '"+accented+"', '"+unaccented+"') LIKE ANY("+w.arg(pq.Array(patterns))+")")
	}}
}

const (
	accented   = "ÁÀÂÃÄÉÈÊËÍÌÎÏÓÒÔÕÖÚÙÛÜÇÑ"
	unaccented = "AAAAAEEEEIIIIOOOOOUUUUCN"
)

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// The office's e-mail domain, as the offices_email_domain index holds it.
const emailDomain = "lower(split_part(o.email, '@', 2))"

// PersonalMailDomains are the free mail providers: an office e-mail at one
// of them is PERSONAL (docs/api.md, "Search").
var PersonalMailDomains = []string{"gmail.com", "hotmail.com", "hotmail.com.br", "outlook.com", "outlook.com.br",
	"live.com", "msn.com", "yahoo.com", "yahoo.com.br", "ymail.com", "icloud.com", "me.com", "bol.com.br",
	"uol.com.br", "terra.com.br", "ig.com.br", "globo.com", "globomail.com", "r7.com", "zipmail.com.br", "aol.com",
	"protonmail.com", "proton.me", "gmx.com"}

// emailOwnership is the SQL of the rule EmailOwnership states.
func emailOwnership(w *where) string {
	return "CASE WHEN " + emailDomain + " = ANY(" + w.arg(pq.Array(PersonalMailDomains)) + ") THEN 'PERSONAL'" +
		" WHEN " + emailDomain + " LIKE '%contab%' OR " + emailDomain + " LIKE '%contador%' THEN 'ACCOUNTING'" +
		" ELSE 'CORPORATE' END"
}

// EmailOwnership is who an address belongs to, decided from its domain: a
// free mail provider's is PERSONAL, an accountant's (the domain names
// "contab…" or "contador…") ACCOUNTING, any other CORPORATE.
func EmailOwnership(domain string) string {
	d := strings.ToLower(domain)
	switch {
	case slices.Contains(PersonalMailDomains, d):
		return "PERSONAL"
	case strings.Contains(d, "contab") || strings.Contains(d, "contador"):
		return "ACCOUNTING"
	}
	return "CORPORATE"
}

// PhoneType is MOBILE for a number whose first digit is 6 to 9 (every
// Brazilian mobile number, 8 digits before 2016 and 9 since), LANDLINE
// otherwise (landlines start with 2 to 5).
func PhoneType(number string) string {
	if number != "" && number[0] >= '6' && number[0] <= '9' {
		return "MOBILE"
	}
	return "LANDLINE"
}

// anyPhone is "some phone of the office (area o.phones[i], number
// o.phones[i+1]) satisfies cond".
func anyPhone(cond string) string {
	return "EXISTS (SELECT 1 FROM generate_series(1, coalesce(array_length(o.phones, 1), 0), 2) i WHERE " + cond + ")"
}

const phoneArea = "(CASE WHEN o.phones[i] ~ '^[0-9]{1,4}$' THEN o.phones[i]::int END)"

// OfficeFilters are the filters of GET /office and GraphQL searchOffices.
var OfficeFilters = []FilterSpec{
	{Field: "names", Type: Words, Ops: []string{OpIn, OpNin}, cond: func(w *where, f Filter) string {
		if f.Op == OpIn {
			// The company's name or the office's alias: the query becomes
			// two branches, each read through its own index (see search).
			w.names = f.Words
			return ""
		}
		// None of the alternatives in the name nor in the alias: a
		// per-row check, as "none of" never narrows a search by index.
		return "NOT (EXISTS (SELECT 1 FROM " + LiveSchema + ".companies c2 WHERE c2.root = o.root AND " +
			wordsOf(w, "c2.name_words", OpIn, f.Words) + ") OR coalesce(" + wordsOf(w, "o.alias_words", OpIn, f.Words) + ", false))"
	}},
	{Field: "company.name", Type: Words, Ops: []string{OpIn, OpNin}, cond: func(w *where, f Filter) string {
		w.company = true
		c := wordsOf(w, "c.name_words", f.Op, f.Words)
		if f.Op == OpIn {
			w.companyNames, w.companyName = f.Words, c
		}
		return c
	}},
	{Field: "alias", Type: Words, Ops: []string{OpIn, OpNin}, cond: func(w *where, f Filter) string {
		return wordsOf(w, "o.alias_words", f.Op, f.Words)
	}},
	{Field: "company.equity", Type: Number, Ops: []string{OpGte, OpLte}, cond: func(w *where, f Filter) string {
		w.company = true
		return w.ranged(f.Field, LiveSchema+".companies c", "c.equity", "c.root", "o.root", bound(w, "c.equity", f.Op, f.Number))
	}},
	companyCode("company.nature.id", "nature", 4, OpIn, OpNin),
	companyCode("company.size.id", "size", 2, OpIn),
	simplesSpec("company.simples.optant", "simples_optant"),
	simplesDates("company.simples.since", "s.simples_optant", "s.simples_since"),
	simplesSpec("company.simei.optant", "simei_optant"),
	simplesDates("company.simei.since", "s.simei_optant", "s.simei_since"),
	{Field: "taxId", Type: OfficeID, Ops: []string{OpNin}, cond: func(w *where, f Filter) string {
		return "o.tax_id <> ALL(" + w.arg(pq.Array(f.Texts)) + ")"
	}},
	dateSpec("founded", "o.founded"),
	boolSpec("head", "o.head"),
	dateSpec("statusDate", "o.status_date"),
	codeSpec("status.id", "o.status", 2, OpIn),
	codeSpec("reason.id", "o.reason", 2, OpIn),
	dateSpec("specialDate", "o.special_date"),
	{Field: "special.id", Type: Int, Ops: []string{OpIn}, cond: func(w *where, f Filter) string {
		return anyOf(w, "o.special", f.Op, w.catalog.specialTexts(f.Ints))
	}},
	{Field: "address.municipality", Type: Int, Ops: []string{OpIn, OpNin}, cond: func(w *where, f Filter) string {
		return anyOf(w, "o.municipality", f.Op, w.codes.municipalityCodes(f.Ints))
	}},
	containsSpec("address.street", "o.street"),
	textSpec("address.number", "upper(o.number)", OpIn, OpNin),
	containsSpec("address.details", "o.details"),
	containsSpec("address.district", "o.district"),
	{Field: "address.state", Type: Enum, Ops: []string{OpIn}, Allowed: append(slices.Clone(states), "EX"), cond: func(w *where, f Filter) string {
		w.state = anyOf(w, "o.state", f.Op, f.Texts)
		if len(f.Texts) == 1 {
			w.oneState = f.Texts[0]
		}
		return w.state
	}},
	{Field: "address.zip", Type: Zip, Ops: []string{OpIn, OpGte, OpLte}, cond: func(w *where, f Filter) string {
		if f.Op == OpIn {
			return anyOf(w, "o.zip", f.Op, f.Texts)
		}
		return bound(w, "o.zip", f.Op, f.Texts[0])
	}},
	{Field: "address.country.id", Type: Int, Ops: []string{OpIn, OpNin}, cond: func(w *where, f Filter) string {
		// Brazil (76) is every address not abroad; abroad, the RFB country
		// codes the M49 codes stand for.
		var parts []string
		if slices.Contains(f.Ints, Brazil.ID) {
			parts = append(parts, "o.state IS DISTINCT FROM 'EX'")
		}
		parts = append(parts, "(o.state = 'EX' AND ltrim(o.country, '0') = ANY("+w.arg(pq.Array(w.codes.countryKeys(f.Ints)))+"))")
		return negate(f.Op, "("+strings.Join(parts, " OR ")+")")
	}},
	{Field: "phones", Type: Bool, Ops: []string{OpEx}, cond: func(w *where, f Filter) string {
		return "(o.phones IS NOT NULL) = " + w.arg(f.Bool)
	}},
	{Field: "phones.type", Type: Enum, Ops: []string{OpIn}, Allowed: []string{"LANDLINE", "MOBILE"}, cond: func(w *where, f Filter) string {
		var parts []string
		for _, t := range f.Texts {
			if t == "MOBILE" {
				parts = append(parts, "left(o.phones[i+1], 1) BETWEEN '6' AND '9'")
			} else {
				parts = append(parts, "left(o.phones[i+1], 1) NOT BETWEEN '6' AND '9'")
			}
		}
		return anyPhone(strings.Join(parts, " OR "))
	}},
	{Field: "phones.area", Type: Int, Ops: []string{OpIn, OpGte, OpLte}, cond: func(w *where, f Filter) string {
		if f.Op == OpIn {
			return anyPhone(phoneArea + " = ANY(" + w.arg(pq.Array(f.Ints)) + "::int[])")
		}
		return anyPhone(bound(w, phoneArea, f.Op, f.Ints[0]))
	}},
	{Field: "phones.number", Type: Text, Ops: []string{OpIn, OpNin}, cond: func(w *where, f Filter) string {
		// An office has at most two phones (the importer leaves the fax
		// out): each number has its index (offices_phone1, offices_phone2).
		a := w.arg(pq.Array(f.Texts))
		return negate(f.Op, "(o.phones[2] = ANY("+a+") OR o.phones[4] = ANY("+a+"))")
	}},
	{Field: "emails", Type: Bool, Ops: []string{OpEx}, cond: func(w *where, f Filter) string {
		return "(o.email IS NOT NULL) = " + w.arg(f.Bool)
	}},
	{Field: "emails.ownership", Type: Enum, Ops: []string{OpIn}, Allowed: []string{"CORPORATE", "ACCOUNTING", "PERSONAL"}, cond: func(w *where, f Filter) string {
		return "o.email IS NOT NULL AND (" + emailOwnership(w) + ") = ANY(" + w.arg(pq.Array(f.Texts)) + ")"
	}},
	{Field: "emails.address", Type: Text, Ops: []string{OpIn, OpNin}, cond: func(w *where, f Filter) string {
		return anyOf(w, "upper(o.email)", f.Op, f.Texts)
	}},
	{Field: "emails.domain", Type: Text, Ops: []string{OpIn, OpNin}, cond: func(w *where, f Filter) string {
		lower := make([]string, len(f.Texts))
		for i, t := range f.Texts {
			lower[i] = strings.ToLower(t)
		}
		return anyOf(w, emailDomain, f.Op, lower)
	}},
	{Field: "mainActivity.id", Type: Int, Ops: []string{OpIn, OpNin}, cond: func(w *where, f Filter) string {
		codes := padded(f.Ints, 7)
		if f.Op == OpIn {
			w.factActivity = anyOf(w, "l.main_activity", f.Op, codes)
		}
		return anyOf(w, "o.main_activity", f.Op, codes)
	}},
	{Field: "sideActivities.id", Type: Int, Ops: []string{OpIn, OpNin}, cond: func(w *where, f Filter) string {
		codes := padded(f.Ints, 7)
		if f.Op == OpIn && w.codes.UnlistedSideActivities(codes) {
			w.collect = true
		}
		return negate(f.Op, sideActivitiesIn(w.arg(pq.Array(codes))))
	}},
	{Field: "activities.id", Type: Int, Ops: []string{OpIn, OpNin}, cond: func(w *where, f Filter) string {
		codes := padded(f.Ints, 7)
		a := w.arg(pq.Array(codes))
		if f.Op == OpIn && w.codes.UnlistedSideActivities(codes) {
			w.activities = a // a branch each (SearchOffices)
			return ""
		}
		return negate(f.Op, activitiesIn(a))
	}},
}

// activitiesIn is activities.id.in of the codes a (an array literal): the
// main activity or a side one.
func activitiesIn(a string) string {
	return "(" + mainActivityIn(a) + " OR " + sideActivitiesIn(a) + ")"
}

// mainActivityIn and sideActivitiesIn are each half of activitiesIn.
func mainActivityIn(a string) string   { return "o.main_activity = ANY(" + a + "::text[])" }
func sideActivitiesIn(a string) string { return "o.side_activities && " + a + "::text[]" }

// companyCode is a code of the company (c.column), which office_lookups
// (l) holds too: a fact of activityFacts.
func companyCode(field, column string, width int, ops ...string) FilterSpec {
	s := codeSpec(field, "c."+column, width, ops...)
	cond := s.cond
	s.cond = func(w *where, f Filter) string {
		w.company = true
		w.facts = append(w.facts, anyOf(w, "l."+column, f.Op, padded(f.Ints, width)))
		c := cond(w, f)
		if f.Op == OpIn {
			terms := make([]string, len(f.Ints))
			for i, code := range padded(f.Ints, width) {
				terms[i] = column + code
			}
			w.nameFacts = append(w.nameFacts, "&& "+w.arg(pq.Array(terms))+"::text[]")
		}
		return c
	}
	return s
}

// companyFacts is the facts of the company c as words: "simples" and
// "simei" where it opts in, its size and its legal nature as "size" and
// "nature" before their codes ("size01", "nature2062"). It is the second
// column of companies_name_words (db/snapshot/indexes.sql spells the same
// expression, without the alias), so that a name with a company's fact
// reads the companies holding both from the index: "igreja" with the
// Simples optants read the word's 9,788 companies to find none (7,819
// heap pages, 40 ms warm), where the index says none at once (122
// buffers, 1.9 ms). An index built without it (a snapshot imported
// before) leaves the condition a filter, as true as the fact's own.
func companyFacts(c string) string {
	return "array_remove(ARRAY[CASE WHEN " + c + ".simples_optant THEN 'simples' END, CASE WHEN " + c +
		".simei_optant THEN 'simei' END, 'size' || " + c + ".size, 'nature' || " + c + ".nature], NULL)"
}

// factsOf is nameFacts as conditions on the facts of the company or
// office_lookups row named r (companyFacts).
func (w *where) factsOf(r string) []string {
	conds := make([]string, len(w.nameFacts))
	for i, f := range w.nameFacts {
		conds[i] = companyFacts(r) + " " + f
	}
	return conds
}

// simplesSpec is an option of the company's Simples enrolment, as its
// row folds it in (c.column) and office_lookups (l) holds it: a fact of
// activityFacts. The company's, not its root's Simples row: an office
// whose company row is missing shows none (its record's company is null),
// and matched one when the walk joined the Simples rows by root.
func simplesSpec(field, column string) FilterSpec {
	return FilterSpec{Field: field, Type: Bool, Ops: []string{OpEq}, cond: func(w *where, f Filter) string {
		w.company = true
		w.facts = append(w.facts, "coalesce(l."+column+", false) = "+w.arg(f.Bool))
		c := "coalesce(c." + column + ", false) = " + w.arg(f.Bool)
		if f.Bool {
			w.nameFacts = append(w.nameFacts, "@> '{"+strings.TrimSuffix(column, "_optant")+"}'::text[]")
		}
		return c
	}}
}

// simplesDates bounds the date an optant enrolled; a company no longer
// enrolled has no such date (the answer's since is null). Its index holds
// the optants alone (see rangeScan), on the Simples rows; the company's
// join keeps out a root without a company row (see simplesSpec).
func simplesDates(field, optant, column string) FilterSpec {
	return FilterSpec{Field: field, Type: Date, Ops: []string{OpGte, OpLte}, cond: func(w *where, f Filter) string {
		w.simples, w.company = true, true
		return w.ranged(field, LiveSchema+".simples s", column, "s.root", "o.root",
			optant+" AND "+bound(w, column, f.Op, f.Date.Format(time.DateOnly)))
	}}
}

// PersonFilters are the filters of GET /person and GraphQL searchPersons.
var PersonFilters = []FilterSpec{
	{Field: "type", Type: Enum, Ops: []string{OpIn}, Allowed: []string{"NATURAL", "LEGAL", "FOREIGN", "UNKNOWN"}, cond: func(w *where, f Filter) string {
		return anyOf(w, "p.type", f.Op, f.Texts)
	}},
	{Field: "name", Type: Words, Ops: []string{OpIn, OpNin}, cond: func(w *where, f Filter) string {
		if f.Op == OpIn {
			w.personIn = f.Words
		}
		if f.Op == OpIn && len(f.Words) == 1 && w.codes.personWords {
			w.personName = f.Words[0] // the shape reads it (SearchPersons)
			return ""
		}
		return wordsOf(w, "p.name_words", f.Op, f.Words)
	}},
	{Field: "taxId", Type: PersonTaxID, Ops: []string{OpIn}, cond: func(w *where, f Filter) string {
		return anyOf(w, "p.tax_id", f.Op, f.Texts)
	}},
	{Field: "age", Type: Enum, Ops: []string{OpIn}, Allowed: AgeBands, cond: func(w *where, f Filter) string {
		codes := make([]string, len(f.Texts))
		for i, band := range f.Texts {
			codes[i] = strconv.Itoa(slices.Index(AgeBands, band) + 1)
		}
		return anyOf(w, "p.age", f.Op, codes)
	}},
	{Field: "country.id", Type: Int, Ops: []string{OpIn, OpNin}, cond: func(w *where, f Filter) string {
		return anyOf(w, "ltrim(p.country, '0')", f.Op, w.codes.countryKeys(f.Ints))
	}},
}

// AgeBands are the age bands of the registry, codes 1 to 9 in order.
var AgeBands = []string{"0-12", "13-20", "21-30", "31-40", "41-50", "51-60", "61-70", "71-80", "81+"}

var states = []string{"AC", "AL", "AM", "AP", "BA", "CE", "DF", "ES", "GO", "MA", "MG", "MS", "MT",
	"PA", "PB", "PE", "PI", "PR", "RJ", "RN", "RO", "RR", "RS", "SC", "SP", "SE", "TO"}

// specialTexts are the "situação especial" texts of the stable ids.
func (c *Catalog) specialTexts(ids []int) []string {
	c.specialMu.RLock()
	defer c.specialMu.RUnlock()
	out := []string{}
	for text, id := range c.special {
		if slices.Contains(ids, id) {
			out = append(out, text)
		}
	}
	return out
}

// municipalityCodes are the RFB codes of the IBGE codes.
func (c *Codes) municipalityCodes(ibge []int) []string {
	out := []string{}
	for code, m := range c.municipalities {
		if slices.Contains(ibge, m.IBGE) {
			out = append(out, code)
		}
	}
	return out
}

// countryKeys are the unpadded RFB codes of the M49 codes.
func (c *Codes) countryKeys(m49 []int) []string {
	out := []string{}
	for key, cc := range c.countries {
		if cc.M49 != 0 && slices.Contains(m49, cc.M49) {
			out = append(out, key)
		}
	}
	return out
}

// Search is a search to run: its filters, the page size and where the page
// starts (after the key After; "" for the first).
type Search struct {
	Filters  []Filter
	Limit    int
	After    string
	Snapshot int64 // the snapshot it belongs to
	// CountLimit bounds the exact count and CountBudget the time it may
	// take; past either, the count is PostgreSQL's estimate (see count).
	CountLimit  int
	CountBudget time.Duration
	// CollectBelow: a search counted exactly at most this many matches
	// is read whole and sorted, never walked in key order (see search).
	CollectBelow int
	// WalkBudget is how long a page may walk in key order before it is
	// collected instead, where an index narrows the matches (see
	// budgetedPage); 0: no budget, the walk runs to its end.
	WalkBudget time.Duration
	// Count and Exact, on a page after the first, are the first page's.
	Count int64
	Exact bool
	// Collected, on a page after the first: an earlier page was collected
	// past the walk budget, and this one is collected at once rather than
	// spending the budget again on the same walk.
	Collected bool
}

// SearchPage is a page of keys and, on a first page, the count.
type SearchPage struct {
	Keys    []string // at most Limit
	HasNext bool
	Count   int64 // the first page's: counted there, carried by the token after
	Exact   bool  // Count is every match; false: PostgreSQL's estimate, at least what the page proves
	// Collected: the page was collected past the walk budget (or carried
	// Search.Collected); the next page's Search carries it.
	Collected bool
}

// ErrSnapshotChanged means the live snapshot is not the search's any more.
var ErrSnapshotChanged = errors.New("the live snapshot changed")

// shape is a search as SQL: its key, the order of a branch (the key's
// order, spelled the way an index gives it) and its branches, whose
// matches are united.
type shape struct {
	key      string
	order    string
	branches []branch
	// walk, when set, is how a page is read unless it is collected: the
	// offices of the search's one state in key order, each checked against
	// this condition, and the branches only after Codes.stateWalkLength of them
	// that held too few (see stateWalkPage).
	walk string
	// estimate, when not 0, is the matches by the statistics
	// (Codes.NamesEstimate): past the count's limit, or always when
	// uncounted, count says it without asking PostgreSQL.
	estimate  int64
	uncounted bool
	// unpriced: estimate is the statistics' (0 included), and the
	// branches read their matches alone, through an index of the words:
	// a count within the limit reads about as many rows as estimated,
	// so count runs it without an EXPLAIN to price it first.
	unpriced bool
	// guessed (with unpriced): estimate rests on words the statistics do
	// not list (the planner's guess for them), so the count runs whatever
	// it says: it reads at most the limit plus one of each branch's
	// matches.
	guessed bool
	// walkCompanies and walkAliases, when set, split the walk: the walk
	// checks the company names alone (walkCompanies), and the aliases'
	// branch (walkAliases) is collected, at most collectCap (see
	// stateWalkPage).
	walkCompanies string
	walkAliases   *branch
	// factsTried: a company's name with its facts (nameFacts), counted
	// whatever PostgreSQL expects, within half the count's budget, as a
	// collect reads it (branch.collected: the companies that have both
	// from the index of their names, then their offices). PostgreSQL
	// multiplies the words' share by the facts' as if they were
	// independent, where a fact may exclude a word's companies (no church
	// is a Simples optant): "igreja" with the optants was expected in
	// 5,000 offices, so its first page walked the budget and was
	// collected (107 ms), where the count reads the index for none (see
	// companyFacts) and gives the first page (6 ms). Only for words of few
	// companies (factsTriedWords): the index reads all of a word's to
	// intersect them with a fact's, and a count of a common name's
	// plentiful matches ran out of its budget (4.5 ms pages took 15).
	factsTried bool
	// signatures: the walk reads office_signatures (stateSignatures)
	// instead of the offices, and walk checks the signatures before it
	// reads a name (see OfficeSignaturesSQL).
	signatures bool
	// signedWalk: a page walks the name's companies by the signatures in
	// their primary key, reading a company's row only where its
	// signature holds the name's (see windowedPage).
	signedWalk bool
}

// branch is one way to reach matches: its tables, its own condition (""
// for none) and its keyset condition for the keys after a.
type branch struct {
	from, cond string
	after      func(a string) string
	order      string // "": the shape's
	// walk, when set, is from with its offices replaced by the given
	// relation: the page reads the next walkLength offices in key order
	// for matches, and collects and sorts the matches after them only
	// when those offices held too few (see walkPage).
	walk func(offices string) string
	// walkCond, when set, is the walk's condition on the offices walked
	// (as o: their tax_id, root and alias_sig), for cond.
	walkCond string
	// capped: a walk branch whose matches are first collected, at most
	// collectCap of them, and walked only past that (see cappedPage).
	capped bool
	// paged, when set, is how a page (not a count, nor a collect) reads
	// this branch's matches; collected, how a collect reads them.
	paged, collected *branch
	// upTo, when set, is paged reading only the matches from the
	// keyset to last (an SQL literal) inclusive: the other branches are
	// read first, and when they fill a page this branch needs no key
	// past theirs (see boundedPage).
	upTo func(last string) *branch
	// windowed, when set, is paged walking at most the next n companies
	// in key order (shape.signedWalk; see windowedPage).
	windowed func(n int) *branch
}

// factsTriedWords bounds the companies of a name whose count is tried
// with a company's fact (shape.factsTried): the index's intersection of
// "igreja" (9,809 companies on the bench dump) with the Simples optants
// took 1.9 ms, of "silva" (11,394) with the micro companies 4.1.
const factsTriedWords = 10000

// indexCollected says whether every branch has a collected form, which
// reads its matches through indexes (a name's companies with their facts,
// the aliases with their companies').
func (sh shape) indexCollected() bool {
	return !slices.ContainsFunc(sh.branches, func(b branch) bool { return b.collected == nil })
}

// collecting is the shape with each branch read as a collect reads it.
func (sh shape) collecting() shape {
	branches := make([]branch, len(sh.branches))
	for i, b := range sh.branches {
		branches[i] = b.collecting()
	}
	sh.branches = branches
	return sh
}

// collecting is how a collect reads the branch: b, or its collected
// form with b's own condition (an activity's, beside a company's name).
func (b branch) collecting() branch {
	if b.collected == nil {
		return b
	}
	c := *b.collected
	c.cond = b.cond
	return c
}

// walkLength is how many offices a walk branch reads in key order before
// it reads the matches after them (walkPage), which the other branches'
// keys usually bound to a short range. Interleaved over the bench mix's
// 100 name words, 2,000 → 1,000 → 500 → 250 offices: 420–438 → 481–499
// → 493–513 → 515–539 req/s; 500, as 250 gained within the noise.
const walkLength = 500

// SearchOffices runs an office search on the live snapshot. Offices come in
// tax id order, spelled (root, tax id): the tax id begins with the root,
// so the order is the same, and a branch that walks the companies by root
// (a name word shared by many) gives it with no sort.
func (s *Store) SearchOffices(ctx context.Context, q Search) (SearchPage, error) {
	return s.search(ctx, q, OfficeFilters, func(w *where) shape {
		// offices is the offices' relation, named o (and joined: "... o ON ...").
		fromOffices := func(offices string, company bool) string {
			f := offices
			if company {
				f += " JOIN " + LiveSchema + ".companies c ON c.root = o.root"
			}
			if w.simples {
				f += " LEFT JOIN " + LiveSchema + ".simples s ON s.root = o.root"
				if w.after != "" {
					// The keyset on the Simples rows too, in the join (in
					// WHERE it would drop the offices without one): a merge
					// join read them from the first, 12,862 for a page 51
					// of São Paulo's (5.0 ms; from the keyset, 0.1 ms).
					f += " AND s.root >= left(" + w.after + ", 8)"
				}
			}
			return f
		}
		from := func(company bool) string { return fromOffices(LiveSchema+".offices o", company) }
		after := func(company bool) func(string) string {
			return func(a string) string {
				c := "o.tax_id > " + a + " AND o.root >= left(" + a + ", 8)"
				if company { // the join's equality does not carry the bound over
					c += " AND c.root >= left(" + a + ", 8)"
				}
				return c
			}
		}
		// namedCollect is how a collect reads a company's name (nameCond)
		// with the search's facts of the company: the companies that
		// have both, from the index of their names (companyFacts), then
		// each one's offices by root. Left to join them, PostgreSQL
		// expected the companies as many as independent shares make them
		// and read every office with a status for "associacao" with the
		// Simples optants (none): a collect it would not narrow, so the
		// page walked on past its budget (0.6 s).
		namedCollect := func(nameCond string) *branch {
			conds := append([]string{nameCond}, w.factsOf("c")...)
			companies := "(SELECT c.* FROM " + LiveSchema + ".companies c WHERE " + strings.Join(conds, " AND ") +
				" OFFSET 0) c CROSS JOIN LATERAL (SELECT o.* FROM " + LiveSchema + ".offices o WHERE o.root = c.root OFFSET 0) o"
			return &branch{from: fromOffices(companies, false), after: after(false)}
		}
		sh := shape{key: "o.tax_id", order: "o.root, o.tax_id"}
		// A name of few companies (below factsTriedWords) with a fact: its
		// count is tried (shape.factsTried).
		if len(w.nameFacts) > 0 {
			sh.factsTried = w.codes.FewCompanyWords(w.names, factsTriedWords) || w.codes.FewCompanyWords(w.companyNames, factsTriedWords)
		}
		if w.activities != "" && w.names != nil {
			// The name's branches read the offices; the activities are
			// one more condition on them.
			w.conds = append(w.conds, activitiesIn(w.activities))
		}
		if w.names == nil {
			b := branch{from: from(w.company), after: after(w.company)}
			if w.collect {
				b.order = sh.key + " || ''"
			}
			if w.companyName != "" && len(w.nameFacts) > 0 {
				b.collected = namedCollect(w.companyName)
			}
			sh.branches = []branch{b}
			if w.activities != "" {
				// Offices of the main activities, as PostgreSQL chooses
				// to read them (its statistics of them are right), and
				// offices of the side ones, which it would walk in key
				// order for codes rarer than it knows: collected.
				main, side := b, b
				main.cond, side.cond = mainActivityIn(w.activities), sideActivitiesIn(w.activities)
				side.order = sh.key + " || ''"
				sh.branches = []branch{main, side}
			}
			return sh
		}
		if len(w.names) == 1 && w.codes.wordTables {
			sh.branches = []branch{officeWords(w, w.names[0], fromOffices, after)}
			return sh
		}
		// names.in: the company's name (its index, or a walk of the
		// companies by root when the words are common) or the office's
		// alias, each branch choosing its own plan.
		//
		// The alias branch collects its matches through its index and
		// sorts them: PostgreSQL cannot estimate a word absent from its
		// statistics (1,260 expected), and a walk in key order read all
		// 1M offices for a word no alias had (700 ms). Alone, names.in
		// walks a bounded stretch of offices first: collecting read
		// 18,500 pages for a word in 27,000 aliases (85 ms). With other
		// filters, the collect intersects their indexes, and a walk
		// would rarely fill a page.
		names := wordArgs(w, w.names)
		alias := branch{from: from(w.company), cond: wordsIn("o.alias_words", OpIn, names), after: after(w.company),
			order: "o.tax_id || ''"}
		if len(w.conds) == 0 {
			alias.order, alias.walk = "", func(offices string) string { return fromOffices(offices+" o", w.company) }
			alias.capped = !w.codes.CommonAliasWords(w.names)
			if w.codes.signatures && w.codes.walkIndex {
				// The walk reads the offices' alias signatures from
				// offices_walk alone, and an alias only where its
				// signature holds the name's (see walkPage).
				alias.walkCond = signedWords("o.alias_sig", officeAliasWords("o.tax_id"), w.names, names)
			}
		}
		// The offices whose alias holds the name, as a relation's SELECT.
		aliased := "SELECT o.* FROM " + LiveSchema + ".offices o WHERE " + alias.cond
		if w.company {
			// With a company's filter, a page's aliases are sorted first,
			// then each one's company read in that order until the page
			// is full. Left to join them, PostgreSQL hashed every company
			// of the filter (264,147 of a legal nature read whole) for
			// the 6,487 offices whose alias holds "portal": 147 ms, here
			// 12 (the mix's name words with a fact, one at a time on the
			// bench dump: "jorge" 187 → 21, "auto" 314 → 120). The sort
			// inside is planned for every alias (the join above it), so it
			// reads them through their index, never walks all offices.
			sorted := "(" + aliased + " ORDER BY o.tax_id OFFSET 0) o"
			alias.paged = &branch{from: fromOffices(sorted, true), order: "o.tax_id", after: after(true)}
			// When the company names fill a page first, only the aliases
			// up to its last key: "estrela" with the Simples optants
			// sorted 6,832 aliases (6,116 heap pages) where 13 lie
			// before the names' eleventh match.
			alias.upTo = func(last string) *branch {
				conds := aliased + " AND o.tax_id <= " + last + " AND o.root <= left(" + last + ", 8)"
				if w.after != "" {
					conds += " AND " + after(false)(w.after)
				}
				bounded := "(" + conds + " ORDER BY o.tax_id OFFSET 0) o"
				return &branch{from: fromOffices(bounded, true), order: "o.tax_id", after: after(true)}
			}
		}
		nameCond := wordsIn("c.name_words", OpIn, names)
		company := branch{from: from(true), cond: nameCond, after: after(true)}
		if w.codes.RareCompanyWords(w.names) || (len(w.conds) > 0 && !w.codes.StateWalkWords(w.names)) {
			// The word's companies, read whole through the GIN index and
			// sorted by root, then each one's offices in key order until
			// a page: reading every office of "empresa" (790 companies,
			// 6,693 offices) to sort them took 10.6 ms, this 3.5. Left
			// to walk the companies by root, PostgreSQL read 11/n of all
			// companies for a page of a word of n, far more with a filter
			// on the offices (see Codes.RareCompanyWords). The sort
			// is on root || '' so that no index walk stands in for it.
			sorted := "(SELECT c.*, c.root || '' AS rk FROM " + LiveSchema + ".companies c WHERE " + company.cond +
				" ORDER BY c.root || '') c JOIN " + LiveSchema + ".offices o ON o.root = c.root"
			// The keyset's bound on the companies is on rk, which no index
			// reads: on root, PostgreSQL ANDed the word's bitmap with the
			// primary key's range after the bound, 483,000 roots of a 10M
			// dump (48 ms of a page 51's 62), where the word's 12,730
			// companies are read and filtered in 18 ("rural" in PR).
			company = branch{from: fromOffices(sorted, false), order: "c.rk, o.tax_id", after: func(a string) string {
				return after(false)(a) + " AND c.rk >= left(" + a + ", 8)"
			}}
		}
		if len(w.conds) == 0 && w.codes.signatures && w.codes.companySignatures && !w.codes.RareCompanyWords(w.names) {
			// A name alone: a page walks the companies by root from their
			// primary key alone (it includes the signatures), reads a
			// name only where the signature holds the value's, and each
			// match's offices ("cristovao": 48 names read of 8,911
			// companies walked, 4.4 → 2.1 ms; see OfficeSignaturesSQL).
			// OFFSET 0 keeps the companies' walk first, its keyset in it:
			// joined freely, PostgreSQL walked 11,217 offices of a page
			// 51 and probed each one's company (14 ms, against 3.4). A
			// count reads the GIN index as before.
			companies := "SELECT c.root FROM " + LiveSchema + ".companies c WHERE " +
				signedWords("c.name_sig", companyNameWords("c.root"), w.names, names)
			if w.after != "" {
				companies += " AND c.root >= left(" + w.after + ", 8)"
			}
			signed := "(" + companies + " ORDER BY c.root OFFSET 0) c JOIN " + LiveSchema + ".offices o ON o.root = c.root"
			company.paged = &branch{from: fromOffices(signed, false), after: after(false)}
		} else if company.order == "" && w.company && !w.simples && len(w.conds) == len(w.nameFacts) &&
			w.codes.signatures && w.codes.companySignatures && w.codes.companyWords != nil {
			// A common name with a company's facts and nothing else (each
			// fact a condition and a fact of the names' index): walked as
			// a name alone is, by the signatures in the companies' primary
			// key, each name read where its signature holds the value's,
			// then each match's company row for the facts and its offices.
			// PostgreSQL walked the companies by root reading each one's
			// row: "iguacu" with the large companies read 1,550 rows (1,438
			// heap pages, 15 ms) for a page; this reads the ~1/30 of them
			// whose signature holds the word's.
			//
			// Each joined laterally, in the walk's order: joined freely,
			// PostgreSQL expected 20 companies of the signatures' walk and
			// made it the inner side of a loop over every office by root
			// (1.05 s).
			signed := func(window int) *branch { // window: the companies walked at most, 0 for all
				companies, cond := LiveSchema+".companies c", signedWords("c.name_sig", companyNameWords("c.root"), w.names, names)
				keyset := ""
				if w.after != "" {
					keyset = "c.root >= left(" + w.after + ", 8)"
				}
				if window > 0 {
					// The window's companies numbered in key order: the
					// condition on the number stops the walk there (a run
					// condition), and PostgreSQL still expects the
					// companies by the thousand, so that the page's
					// sort is incremental and the walk stops at a page.
					// Under a LIMIT it expected a few dozen and sorted
					// the whole window (3,222 buffers, where a page of
					// "iguacu" with the large companies reads 273).
					if keyset != "" {
						companies += " WHERE " + keyset
					}
					companies = "(SELECT c.root, c.name_sig, row_number() OVER (ORDER BY c.root) AS rn FROM " + companies + ") c"
					cond = "c.rn <= " + strconv.Itoa(window) + " AND " + cond
				} else if keyset != "" {
					// Not in a subquery: there PostgreSQL sorted every
					// company after the key whose signature holds the
					// name's (1,245 buffers for a page).
					cond += " AND " + keyset
				}
				from := "(SELECT c.root FROM " + companies + " WHERE " + cond +
					" ORDER BY c.root OFFSET 0) cs CROSS JOIN LATERAL (SELECT c.* FROM " + LiveSchema +
					".companies c WHERE c.root = cs.root OFFSET 0) c CROSS JOIN LATERAL (SELECT o.* FROM " + LiveSchema +
					".offices o WHERE o.root = cs.root OFFSET 0) o"
				return &branch{from: from, order: "cs.root, o.tax_id", after: after(false)}
			}
			company.paged, company.windowed = signed(0), signed
			sh.signedWalk = true
		}
		if len(w.nameFacts) > 0 {
			company.collected = namedCollect(nameCond)
			// The aliases' offices, then each one's company by root: left
			// to join them, PostgreSQL hashed every SIMEI optant (146,841
			// companies read whole, 196 ms) for the 6,919 offices whose
			// alias holds "nordeste".
			//
			// With the index of both (office_lookups holds each office's
			// alias words beside its company's facts), only the aliases
			// whose company has the fact too: "luzia" with the SIMEI
			// optants, none, read 20,000 companies one by one to find none
			// (100 ms), where the index says none. Not for a page: for a
			// common fact (the Simples optants) the index names thousands
			// of offices to read from office_lookups, where a page of the
			// aliases sorted first reads a few companies (0.4-1.3 s
			// against 10-30 ms).
			withFacts := aliased
			if w.codes.aliasFacts {
				withFacts = "SELECT o.* FROM " + LiveSchema + ".office_lookups l JOIN " + LiveSchema + ".offices o ON o.tax_id = l.tax_id WHERE " +
					strings.Join(append([]string{wordsIn("l.alias_words", OpIn, names)}, w.factsOf("l")...), " AND ")
			}
			byRoot := "(" + withFacts + " OFFSET 0) o CROSS JOIN LATERAL (SELECT c.* FROM " +
				LiveSchema + ".companies c WHERE c.root = o.root OFFSET 0) c"
			alias.collected = &branch{from: fromOffices(byRoot, false), after: after(true)}
		}
		sh.branches = []branch{company, alias}
		if len(w.conds) == 0 {
			// A name alone: an estimate past the count's limit is said,
			// and a count within it run, without an EXPLAIN (see count);
			// a name of words too rare to be listed is counted.
			sh.estimate, sh.unpriced = w.codes.NamesEstimate(w.names, "")
			sh.guessed = sh.unpriced && w.codes.UnlistedCompanyWords(w.names)
		}
		if w.oneState != "" && !w.company && !w.simples && w.codes.StateWalkWords(w.names) {
			// With one state, the state's offices in key order, each office's
			// alias checked, then its company's name (Codes.StateWalkWords).
			// Left to PostgreSQL, a word of 10,821 companies with RJ merged
			// the state's offices with a walk of all companies by root,
			// 34,114 of them for a page (20 ms; this walk, 2.5 ms).
			name := companyNameWords("o.root")
			sh.walk = alias.cond + " OR " + wordsIn(name, OpIn, names)
			if w.codes.signatures && len(w.conds) == 1 {
				// The state alone: the signatures first, then the name
				// or alias they say may hold the value (6 ms → 0.8 for
				// "cooperativa" in PR: 1,331 of 33,317 offices read).
				root, taxID := signedOffice(w.codes.signaturePairs)
				aliasWords := "(SELECT x.alias_words FROM " + LiveSchema + ".offices x WHERE x.tax_id = " + taxID + ")"
				sh.signatures = true
				sh.walk = signedWords("o.name_sig", companyNameWords(root), w.names, names) + " OR " +
					signedWords("o.alias_sig", aliasWords, w.names, names)
			} else if !w.codes.CommonAliasWords(w.names) {
				// Aliases few by the statistics: collected, and the walk
				// checks the company names alone (stateWalkPage).
				sh.walkCompanies, sh.walkAliases = wordsIn(name, OpIn, names), &sh.branches[1]
			}
			if len(w.conds) == 1 { // the state alone
				// Never counted: PostgreSQL priced 81 of 82 of such counts
				// (a word's thousands of companies joined with the
				// state's offices) past their budget (see count).
				if est, ok := w.codes.NamesEstimate(w.names, w.oneState); ok {
					sh.estimate, sh.uncounted = est, true
				}
			}
		}
		return sh
	})
}

// officeWords is names.in of one value through office_words (see the
// importer): the offices whose company name or alias holds the value's
// first word, in key order from its index, the state filtered there too.
// The value's further words join on the key, and, as they must all be in
// one name, are checked again on the alias or the company's name. The
// offices are joined only when a filter or that check reads them: a word
// with a state then counts by index alone.
func officeWords(w *where, words []string, fromOffices func(offices string, company bool) string, after func(bool) func(string) string) branch {
	others := slices.DeleteFunc(slices.Clone(w.conds), func(c string) bool { return c == w.state })
	if len(others) == 0 && len(words) == 1 && !w.company && !w.simples {
		// office_words has tax_id and state: it stands for the offices.
		return branch{
			from:  LiveSchema + ".office_words o",
			cond:  "o.word = " + w.arg(words[0]),
			order: "o.tax_id",
			after: func(a string) string { return "o.tax_id > " + a },
		}
	}
	from := LiveSchema + ".office_words ow0"
	cond := "ow0.word = " + w.arg(words[0])
	for i, word := range words[1:] {
		a := "ow" + strconv.Itoa(i+1)
		from += " JOIN " + LiveSchema + ".office_words " + a + " ON " + a + ".tax_id = ow0.tax_id AND " + a + ".word = " + w.arg(word)
	}
	from += " JOIN " + fromOffices(LiveSchema+".offices o ON o.tax_id = ow0.tax_id", w.company)
	if len(words) > 1 {
		one := [][]string{words}
		cond += " AND (" + wordsOf(w, "o.alias_words", OpIn, one) + " OR EXISTS (SELECT 1 FROM " + LiveSchema +
			".companies c2 WHERE c2.root = o.root AND " + wordsOf(w, "c2.name_words", OpIn, one) + "))"
	}
	if w.state != "" {
		// Read from the index, not the offices: left on o.state, PostgreSQL
		// hashed every office of the state to meet 451 matches.
		w.conds = others
		cond += " AND " + strings.Replace(w.state, "o.state", "ow0.state", 1)
	}
	return branch{
		from:  from,
		cond:  cond,
		order: "ow0.tax_id",
		after: func(a string) string { return after(w.company)(a) + " AND ow0.tax_id > " + a },
	}
}

// SearchPersons runs a person search on the live snapshot.
func (s *Store) SearchPersons(ctx context.Context, q Search) (SearchPage, error) {
	return s.search(ctx, q, PersonFilters, func(w *where) shape {
		sh := shape{key: "p.id", order: "p.id", branches: []branch{{
			from:  LiveSchema + ".persons p",
			after: func(a string) string { return "p.id > " + a },
		}}}
		if w.personName != nil {
			sh.branches = []branch{personWords(w, w.personName)}
		}
		if w.personIn != nil && w.filters == 1 {
			// A name alone, read through the words' index (GIN, or
			// person_words): its estimate past the count's limit is said,
			// and a count within it run, without an EXPLAIN (see count);
			// a name of words too rare to be listed is counted.
			sh.estimate, sh.unpriced = w.codes.PersonNamesEstimate(w.personIn)
			sh.guessed = sh.unpriced && w.codes.UnlistedPersonWords(w.personIn)
		}
		return sh
	})
}

// personWords is name.in of one value through person_words (see the
// importer): the persons whose name holds the value's first word, in id
// order from its index, the further words joined on the id (a person has
// one name). The persons are joined only when another filter reads them.
func personWords(w *where, words []string) branch {
	p := "p"
	if len(w.conds) > 0 {
		p = "pw0"
	}
	from := LiveSchema + ".person_words " + p
	for i, word := range words[1:] {
		a := "pw" + strconv.Itoa(i+1)
		from += " JOIN " + LiveSchema + ".person_words " + a + " ON " + a + ".id = " + p + ".id AND " + a + ".word = " + w.arg(word)
	}
	if p != "p" {
		from += " JOIN " + LiveSchema + ".persons p ON p.id = pw0.id"
	}
	return branch{
		from:  from,
		cond:  p + ".word = " + w.arg(words[0]),
		order: p + ".id",
		after: func(a string) string { return p + ".id > " + a },
	}
}

// searchSettings lead every search statement (sent as one simple query,
// each setting for that statement alone): no JIT (compiling costs more
// than these short statements); no parallel workers (on a busy server they
// take the cores other searches need). A statement is planned for its
// literal values (where.arg) whatever the pool's plan_cache_mode.
const searchSettings = "SET LOCAL jit = off; SET LOCAL max_parallel_workers_per_gather = 0; "

// queryRow runs one search statement on the pool: no transaction, as each
// statement checks that its snapshot is live (search), and none holds the
// snapshot's tables against a swap, which renames schemas.
func queryRow(ctx context.Context, d sqlx.QueryerContext, query string) *sqlx.Row {
	return d.QueryRowxContext(ctx, searchSettings+query)
}

func (s *Store) search(ctx context.Context, q Search, specs []FilterSpec, shapeOf func(*where) shape) (SearchPage, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return SearchPage{}, err
	}
	w := &where{codes: codes, catalog: s.Catalog, filters: len(q.Filters)}
	for _, f := range q.Filters {
		i := slices.IndexFunc(specs, func(sp FilterSpec) bool { return sp.Field == f.Field })
		if i < 0 {
			return SearchPage{}, fmt.Errorf("search: unknown filter %q", f.Field)
		}
		if c := specs[i].cond(w, f); c != "" {
			w.conds = append(w.conds, c)
		}
	}
	if err := w.probeRanges(ctx, s.Searches); err != nil {
		return SearchPage{}, err
	}
	if q.After != "" {
		w.after = w.arg(q.After)
	}
	sh := shapeOf(w)
	var p SearchPage
	// The keys are read only on the snapshot the search belongs to (live:
	// that condition), so a swap between the catalog's check and the
	// statement that reads them is seen: an empty page on another snapshot.
	live := func() string { return w.arg(q.Snapshot) + " = (SELECT id FROM snapshots WHERE state = 'live')" }
	var keys pq.StringArray
	if q.After == "" {
		// An exact count has read every match: it gives the first page too.
		if p.Count, p.Exact, keys, err = count(ctx, s.Searches, q, sh, w, q.Limit+1, live); err != nil {
			return SearchPage{}, errOr(ctx, err)
		}
	} else {
		p.Count, p.Exact = q.Count, q.Exact
	}
	if keys == nil {
		if keys, err = page(ctx, s.Searches, q, sh, w, &p, live()); err != nil {
			return SearchPage{}, err
		}
	}
	if len(keys) == 0 {
		if err := stillLive(ctx, s.Searches, q.Snapshot); err != nil {
			return SearchPage{}, err
		}
	}
	p.Keys, p.HasNext = keys, len(keys) > q.Limit
	if p.HasNext {
		p.Keys = keys[:q.Limit]
	}
	switch {
	case q.After != "":
	case !p.HasNext: // the first page holds every match
		p.Count, p.Exact = int64(len(keys)), true
	case !p.Exact: // never below what the page proves: its keys and one more
		p.Count = max(p.Count, int64(len(keys)))
	}
	return p, nil
}

// page reads the keys of a page (at most q.Limit+1, the one more saying
// there is a next page) after q.After: each branch's first keys in order,
// united. live is the condition that the search's snapshot is live. It
// sets p.Collected when the page was collected past the walk budget (or
// as q.Collected asked), and, when so a first page counted its matches,
// p.Count exactly.
func page(ctx context.Context, d sqlx.QueryerContext, q Search, sh shape, w *where, p *SearchPage, live string) (pq.StringArray, error) {
	limit := w.arg(q.Limit + 1)
	if q.Collected {
		p.Collected = true
		return branchesPage(ctx, d, q, sh, w, live, limit, true)
	}
	if w.collect && w.after == "" && !p.Exact && sh.walk == "" {
		// A search whose matches a probe found few (a bound's range, an
		// activity's offices with a company's fact) or the statistics
		// did (an unlisted side activity) reads all of them to sort them:
		// a first page whose count ran out of its budget and said the
		// estimate counts them on the way (6 said for 586 offices, cold).
		if keys, ok, err := countedCollect(ctx, d, sh, w, p, live, limit); err != nil || ok {
			return keys, err
		}
	}
	// A search known to be small is collected: read whole through the
	// indexes of its filters and sorted. Left to choose, PostgreSQL may
	// walk the offices in key order, expecting matches spread evenly,
	// and read half of them when the matches sit together (887 offices
	// of an e-mail domain, estimated right, read 512,749: 450 ms).
	collect := p.Exact && p.Count <= int64(q.CollectBelow)
	if sh.walk != "" && !collect {
		return stateWalkPage(ctx, d, q, sh, w, live, limit)
	}
	if collect || q.WalkBudget <= 0 {
		return branchesPage(ctx, d, q, sh, w, live, limit, collect)
	}
	return budgetedPage(ctx, d, q, sh, w, p, live, limit)
}

// branchesPage reads a page from the shape's branches: each one's first
// keys, or a walked branch's stretch (walkPage, cappedPage); collected,
// every branch's matches read whole and sorted.
func branchesPage(ctx context.Context, d sqlx.QueryerContext, q Search, sh shape, w *where, live, limit string, collect bool) (pq.StringArray, error) {
	// A collected search walks none of its branches.
	walked := slices.IndexFunc(sh.branches, func(b branch) bool { return b.walk != nil && !collect })
	parts := pageParts(sh, w, live, limit, collect, walked)
	if walked >= 0 && sh.branches[walked].capped {
		return cappedPage(ctx, d, q, sh, w, live, limit, walked, parts)
	}
	if walked >= 0 {
		return walkPage(ctx, d, q, sh, w, live, limit, walked, parts)
	}
	if collect {
		return queryKeys(ctx, d, w, collectMemory+keysOf(parts, limit))
	}
	if bounded := slices.IndexFunc(sh.branches, func(b branch) bool { return b.upTo != nil }); bounded >= 0 {
		return boundedPage(ctx, d, q, sh, w, live, limit, bounded, parts)
	}
	return queryKeys(ctx, d, w, keysOf(parts, limit))
}

// boundedPage reads a page whose branch bounded has an upTo form: the
// other branches' keys first, then bounded's up to their page's last key
// when they fill a page (a key past it cannot be on the page), else whole.
// Read in one statement, the aliases' branch of a name with a company's
// filter sorted every alias of the name (see SearchOffices) where the
// company names alone held a page.
func boundedPage(ctx context.Context, d sqlx.QueryerContext, q Search, sh shape, w *where, live, limit string, bounded int, parts []string) (pq.StringArray, error) {
	others := slices.Delete(slices.Clone(parts), bounded, bounded+1)
	keys, err := queryKeys(ctx, d, w, keysOf(others, limit))
	if err != nil {
		return nil, err
	}
	part := parts[bounded]
	if needed := q.Limit + 1; len(keys) >= needed {
		part = pagePart(sh, w, *sh.branches[bounded].upTo(w.arg(keys[needed-1])), live, limit)
	}
	more, err := queryKeys(ctx, d, w, keysOf([]string{part}, limit))
	if err != nil {
		return nil, err
	}
	keys = append(keys, more...) // a key may be in both: a company name and its office's alias
	slices.Sort(keys)
	keys = slices.Compact(keys)
	return keys[:min(len(keys), q.Limit+1)], nil
}

// collectMemory leads a collect's statement: the memory to keep the
// filters' bitmaps exact. A bound's 233,000 offices ANDed with an
// activity's 150,000 at ten times the bench dump went lossy in the default
// 4 MB, and the collect read 45,000 heap pages for 3,458 offices (457 ms;
// with 32 MB, 3,409 pages, 108–165).
const collectMemory = "SET LOCAL work_mem = '32MB'; "

// pageParts are the branches' statements of a page's first keys (each a
// parenthesized SELECT of k, ordered and limited), but the walked one's
// ("": walkPage's). Collected, each reads its matches whole through its
// filters' indexes and sorts them: the order is written so that no index
// gives it.
func pageParts(sh shape, w *where, live, limit string, collect bool, walked int) []string {
	parts := make([]string, len(sh.branches))
	for i, b := range sh.branches {
		if i == walked {
			continue // walkPage's
		}
		if b.paged != nil && !collect {
			b = *b.paged
		}
		if collect {
			b = b.collecting()
			b.order = sh.key + " || ''"
		}
		parts[i] = pagePart(sh, w, b, live, limit)
	}
	return parts
}

// pagePart is branch b's statement of a page's first keys: a
// parenthesized SELECT of k after the keyset, ordered and limited.
func pagePart(sh shape, w *where, b branch, live, limit string) string {
	return "(" + w.sel(b, sh.key+" AS k", live, w.keyset(b)) + " ORDER BY " + cmp.Or(b.order, sh.order) + " LIMIT " + limit + ")"
}

// budgetedPage reads a page whose statements each run within
// q.WalkBudget, then, if one ran out, collected. PostgreSQL, multiplying
// the shares of a search's filters as if they were independent, may walk
// the offices (or a name's companies) in key order expecting a page soon
// where filters that exclude each other leave none to find: no company of
// a religious organization's activity is a Simples optant, and the walk
// read every office to say so (0.7 s on the bench dump, 8.2 s at ten
// times it). Collected, the page reads the activity's offices through
// their index and sorts the matches. A search no index narrows (a
// street's name, a word of 6 % of the companies) would read every
// office collected, sequentially, where the walk may meet a rare match
// early: it walks on, ten times the budget, before it is collected all
// the same (at ten times the bench dump "associacao" with Simples
// optants answered 504 after 10 s, walked). Collected, it sets
// p.Collected (the search's next page is collected at once:
// Search.Collected), and a first page whose count is PostgreSQL's
// estimate counts the matches it reads anyway (boundedCollect). A
// collect that finds more than collectMax matches stops there, and the
// page walks to its end instead.
//
// A shape whose every branch has an index's collected form (a name with
// a company's fact) walks a fifth of the budget and is collected without
// asking PostgreSQL's plan: its collect reads the matches from the
// indexes of the names with the facts, and its walks of plentiful
// matches end in a few milliseconds. "do" with the Simples optants (none
// of its 27,513 companies) walked 100 ms, then was collected in 10. One
// whose companies are walked by their signatures (shape.signedWalk)
// walks a window of them instead (windowedPage), as far as it goes
// whatever the machine's load, and past it its companies' matches are
// collected, the aliases read as a page reads them.
func budgetedPage(ctx context.Context, d sqlx.QueryerContext, q Search, sh shape, w *where, p *SearchPage, live, limit string) (pq.StringArray, error) {
	ms := max(q.WalkBudget.Milliseconds(), 1)
	indexed := sh.indexCollected()
	if sh.signedWalk {
		return windowedPage(ctx, d, q, sh, w, p, live, limit)
	}
	if indexed {
		ms = max(ms/indexCollectedWalkShare, 1)
	}
	keys, err := branchesPage(ctx, budgeted{d, strconv.FormatInt(ms, 10)}, q, sh, w, live, limit, false)
	if !outOfBudget(ctx, err) {
		return keys, err
	}
	narrowed := indexed
	if !indexed {
		// Asked of the first page: a later page's keyset is an index
		// condition on the key, narrowing nothing.
		first := *w
		first.after = ""
		if narrowed, err = indexNarrowed(ctx, d, keysOf(pageParts(sh, &first, live, limit, true, -1), limit)); err != nil {
			return nil, err
		}
	}
	if !narrowed {
		keys, err := branchesPage(ctx, budgeted{d, strconv.FormatInt(walkOnFactor*ms, 10)}, q, sh, w, live, limit, false)
		if !outOfBudget(ctx, err) {
			return keys, err
		}
	}
	keys, ok, err := countedCollect(ctx, d, sh, w, p, live, limit)
	if err != nil {
		return nil, err
	}
	if !ok {
		// Matches by the ten thousand: a walk meets a page of them soon,
		// and this one ran out for another reason (a machine slow at
		// that moment). It walks to its end, as PostgreSQL chose, and
		// the next page walks too.
		return branchesPage(ctx, d, q, sh, w, live, limit, false)
	}
	p.Collected = true
	return keys, nil
}

// countedCollect reads a page collected (boundedCollect), and a first
// page whose count said PostgreSQL's estimate takes the collect's exact
// count; ok is false past collectMax matches, the keys then not the page's.
func countedCollect(ctx context.Context, d sqlx.QueryerContext, sh shape, w *where, p *SearchPage, live, limit string) (keys pq.StringArray, ok bool, err error) {
	most := sh.maxCollected(w)
	keys, n, err := boundedCollect(ctx, d, sh, w, live, limit, most)
	if err != nil || n > int64(most) {
		return nil, false, err
	}
	if w.after == "" && !p.Exact {
		p.Count, p.Exact = n, true
	}
	return keys, true, nil
}

// collectMax is how many matches a page collected past the walk budget
// reads at most. Without a bound, a search of 200,854 offices (personal
// e-mails of micro companies) whose walk ran out on a moment's slow disk
// was collected whole: 4.7 to 11 s a page, where its walk takes 2 ms.
var collectMax = 10_000

// maxCollected is how many matches a page of sh collected past its walk
// budget reads at most: collectMax, or, where the collect reads indexes
// alone (indexCollected), about as many as make a walk cheaper. A walk of
// a name's companies reads about 11/m of the N companies for a page of m
// matches, one heap page each (they lie in no order of root); a collect
// two a match (its company, its office): equal at m = sqrt(5.5 N), 2,100
// of the bench dump's 806,000. Such a shape walks a fifth of the budget,
// which a walk of many matches overruns on a busy machine: under 8
// connections, "era" with the limited companies (7,616, a page walked in
// 8 ms alone) was collected whole (1.0 s).
func (sh shape) maxCollected(w *where) int {
	if !sh.indexCollected() || w.codes.companyWords == nil {
		return collectMax
	}
	return min(collectMax, max(1000, int(math.Sqrt(5.5*w.codes.companyWords.rows))))
}

// companiesCollected is how many matches of its companies' branch a page
// walked by the signatures (shape.signedWalk) collects at most: such a
// walk reads the row of one company in signatureMisses or fewer, and is
// cheaper than a collect of more than sqrt(5.5 N / 30), 385 on the bench
// dump (at least 100). Measured there, on a slow machine: a window of
// 8,868 companies walked in 3.3 ms (0.37 µs a company), where a collect
// of 1,613 matches took 77 (48 µs a match).
func companiesCollected(w *where) int {
	return max(100, int(math.Sqrt(5.5*w.codes.companyWords.rows/signatureMisses)))
}

// signatureMisses: about one company in this many has a signature that
// holds a name's without the name (see holdsSignature).
const signatureMisses = 30

// walkWindow is how many companies a walk by the signatures
// (shape.signedWalk) reads before their matches are collected: as many
// as hold a page of matches as few as a collect reads
// (companiesCollected), 11 N / m, 23,000 of the bench dump's 806,000. A
// window, not a time: the budget's fifth (20 ms) let a walk of 3 ms alone
// run out under 8 connections on two slow cores, and its page read 1,000
// matches collected (0.2-1 s).
func walkWindow(w *where) int {
	return int(11 * w.codes.companyWords.rows / float64(companiesCollected(w)))
}

// windowedPage reads a page of a shape walked by the signatures: its
// companies' branch walks the next walkWindow companies alone. When they
// hold less than a page, the page is collected as one walked past its
// budget is (countedCollect, p.Collected); past what that collect reads,
// the companies' matches after the keyset are collected alone, as many as
// companiesCollected, else walked to the end. The other branches are then
// read up to the page's last key when the companies fill it (as
// boundedPage reads them), else whole. A name whose companies have no
// match and whose aliases have thousands ("padaria" with the
// associations: 1,768) was otherwise left to a walk of every company
// (0.6 s).
func windowedPage(ctx context.Context, d sqlx.QueryerContext, q Search, sh shape, w *where, p *SearchPage, live, limit string) (pq.StringArray, error) {
	walked := slices.IndexFunc(sh.branches, func(b branch) bool { return b.windowed != nil })
	b := sh.branches[walked]
	keys, err := queryKeys(ctx, d, w, keysOf([]string{pagePart(sh, w, *b.windowed(walkWindow(w)), live, limit)}, limit))
	if err != nil {
		return nil, err
	}
	needed := q.Limit + 1
	if len(keys) < needed {
		collected, ok, err := countedCollect(ctx, d, sh, w, p, live, limit)
		if err != nil || ok {
			p.Collected = ok
			return collected, err
		}
		companies := sh
		companies.branches = []branch{b}
		var n int64
		most := companiesCollected(w)
		if keys, n, err = boundedCollect(ctx, d, companies, w, live, limit, most); err == nil && n > int64(most) {
			keys, err = queryKeys(ctx, d, w, keysOf([]string{pagePart(sh, w, *b.paged, live, limit)}, limit))
		}
		if err != nil {
			return nil, err
		}
	}
	for i, b := range sh.branches {
		if i == walked {
			continue
		}
		if b.upTo != nil && len(keys) >= needed {
			b = *b.upTo(w.arg(keys[needed-1]))
		} else if b.paged != nil {
			b = *b.paged
		}
		more, err := queryKeys(ctx, d, w, keysOf([]string{pagePart(sh, w, b, live, limit)}, limit))
		if err != nil {
			return nil, err
		}
		keys = append(keys, more...) // a key may be in both: a company name and its office's alias
	}
	return pageOfKeys(ctx, d, q, keys)
}

// boundedCollect reads a page collected, as branchesPage does, and counts
// the matches it reads on the way: n, the matches after the page's keyset
// (every match on a first page), or more than most when there are, the
// read stopping there (keys then not the page's). Each branch's matches
// are a common table expression, planned to be read whole (as a collect
// is, through the filters' indexes: a LIMIT inside would let PostgreSQL
// choose a walk in key order again), and read only as far as most+1. Its
// count is nearly free where the count before it ran out of its budget
// and said PostgreSQL's estimate (23 for 586 offices of an activity, a
// nature and a size).
func boundedCollect(ctx context.Context, d sqlx.QueryerContext, sh shape, w *where, live, limit string, most int) (keys pq.StringArray, n int64, err error) {
	with := make([]string, len(sh.branches))
	bounded := make([]string, len(sh.branches))
	for i, b := range sh.branches {
		b = b.collecting()
		name := "c" + strconv.Itoa(i)
		with[i] = name + " AS MATERIALIZED (" + w.sel(b, sh.key+" AS k", live, w.keyset(b)) + ")"
		bounded[i] = "(SELECT k FROM " + name + " LIMIT " + strconv.Itoa(most+1) + ")"
	}
	query := collectMemory + "WITH " + strings.Join(with, ", ") +
		", m AS MATERIALIZED (" + strings.Join(bounded, " UNION ") + ")" +
		" SELECT (SELECT count(*) FROM m), coalesce((SELECT array_agg(k ORDER BY k) FROM (SELECT k FROM m ORDER BY k LIMIT " + limit + ") p), '{}')"
	if err := queryRow(ctx, d, query).Scan(&n, &keys); err != nil {
		return nil, 0, fmt.Errorf("search: %w", errOr(ctx, err))
	}
	return keys, n, nil
}

// indexCollectedWalkShare divides the walk budget of a shape whose
// collect reads indexes alone (shape.indexCollected): over the bench
// mix's names with a company's fact, one at a time, 100 ms → 20 took the
// p90 from 111 ms to 32 (most of the slow ones were names a fact excludes
// walking the whole budget); 10 left a name with many matches to a collect
// of thousands (435 ms).
const indexCollectedWalkShare = 5

// walkOnFactor is how many times its budget a walk no index would narrow
// runs on before it is collected anyway.
const walkOnFactor = 10

// budgeted is a search queryer whose statements each run under a
// statement timeout of ms milliseconds, set and ended in the same round
// trip. A timeout that fires as the statement ends (its timer is still
// armed) stays pending in the session and failed whatever statement came
// next on the connection, as many as one in ten after a count at its
// budget under load: pg_sleep(0), with no timeout of its own, meets it
// within this round trip, where it reads as the statement out of budget.
type budgeted struct {
	sqlx.QueryerContext
	ms string
}

func (b budgeted) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	if len(args) > 0 { // a statement with parameters is one statement
		return b.QueryerContext.QueryRowxContext(ctx, query, args...)
	}
	return b.QueryerContext.QueryRowxContext(ctx, "SET LOCAL statement_timeout = "+b.ms+"; "+query+
		"; SET LOCAL statement_timeout = 0; SELECT pg_sleep(0)")
}

// outOfBudget says whether err is a statement's own timeout (the budget
// it was given ran out), not the request's end.
func outOfBudget(ctx context.Context, err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Code == "57014" && ctx.Err() == nil
}

// walkedTables are the tables a page walks in key order.
var walkedTables = []string{"offices", "office_signatures", "persons"}

// planNode is a node of an EXPLAIN (FORMAT JSON) plan, as far as
// indexNarrowed reads it.
type planNode struct {
	Type      string     `json:"Node Type"`
	Relation  string     `json:"Relation Name"`
	IndexCond string     `json:"Index Cond"`
	Plans     []planNode `json:"Plans"`
}

// narrowed says whether every read of a walked table in the plan goes
// through an index condition: not a sequential scan, nor an index read
// whole (in its order, for a join). Another table read whole (the
// companies, hashed for a company's size) costs a fraction of a walk
// that tests every office against them.
func (n planNode) narrowed() bool {
	if slices.Contains(walkedTables, n.Relation) {
		switch n.Type {
		case "Seq Scan":
			return false
		case "Index Scan", "Index Only Scan":
			if n.IndexCond == "" {
				return false
			}
		}
	}
	for _, c := range n.Plans {
		if !c.narrowed() {
			return false
		}
	}
	return true
}

// indexNarrowed says whether PostgreSQL would read query's matches through
// an index condition on the walked table, not reading it whole.
func indexNarrowed(ctx context.Context, d sqlx.QueryerContext, query string) (bool, error) {
	var plan []byte
	if err := queryRow(ctx, d, "EXPLAIN (FORMAT JSON) "+query).Scan(&plan); err != nil {
		return false, fmt.Errorf("search plan: %w", errOr(ctx, err))
	}
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(plan, &plans); err != nil || len(plans) != 1 {
		return false, fmt.Errorf("search plan: unexpected plan %.200q", plan)
	}
	return plans[0].Plan.narrowed(), nil
}

// keysOf is the statement of the first limit keys of parts (each a
// parenthesized SELECT of k, ordered and limited), united, as one sorted
// array.
func keysOf(parts []string, limit string) string {
	if len(parts) == 1 {
		return "SELECT coalesce(array_agg(k ORDER BY k), '{}') FROM " + parts[0] + " p"
	}
	return "SELECT coalesce(array_agg(k ORDER BY k), '{}') FROM (SELECT k FROM (" +
		strings.Join(parts, " UNION ") + ") u ORDER BY k LIMIT " + limit + ") p"
}

// queryKeys runs a statement of keysOf.
func queryKeys(ctx context.Context, d sqlx.QueryerContext, w *where, query string) (pq.StringArray, error) {
	var keys pq.StringArray
	if err := queryRow(ctx, d, query).Scan(&keys); err != nil {
		return nil, fmt.Errorf("search: %w", errOr(ctx, err))
	}
	return keys, nil
}

// keyset is branch b's condition for the keys after the page's key; "" on
// a first page.
func (w *where) keyset(b branch) string {
	if w.after == "" {
		return ""
	}
	return b.after(w.after)
}

// walkKeyset is a walk of the offices' condition for the keys after the
// page's key, "" on a first page: one row comparison, which the indexes
// (root, tax_id) and (state, root, tax_id) read from the keyset on. As two
// conditions, PostgreSQL multiplied their shares, expected 471 offices
// after a key near the end where there were 26,359, and sorted them all
// (32 ms; walked, 1.4 ms).
func (w *where) walkKeyset() string {
	if w.after == "" {
		return ""
	}
	return "(o.root, o.tax_id) > (left(" + w.after + ", 8), " + w.after + ")"
}

// stateWalkPage reads a page by walking the offices of the search's one
// state in key order (the index offices_state: state, root, tax_id) and
// checking each against sh.walk, streamed: the walk stops at a page of
// matches. When Codes.stateWalkLength offices held fewer, a second statement
// collects the matches after the last of them through the branches'
// indexes and sorts them. Two statements, as PostgreSQL plans every part
// of one: the collect's joins took 1 to 2.5 ms to plan, the walk 0.1.
func stateWalkPage(ctx context.Context, d sqlx.QueryerContext, q Search, sh shape, w *where, live, limit string) (pq.StringArray, error) {
	n := strconv.Itoa(w.codes.stateWalkLength())
	// The walk's matches (m) up to a page, and its last office (rn = n)
	// when it got there.
	// taxID is a walked key as a tax id: the signatures' keys are
	// state_tax_id, read back only for the page's keys.
	taxID := func(k string) string { return k }
	walked := func(cond string) string {
		return w.sel(branch{from: LiveSchema + ".offices o"}, sh.key+" AS k, ("+cond+") AS m", live, w.walkKeyset()) +
			" ORDER BY o.root, o.tax_id LIMIT " + n
	}
	if sh.signatures && w.codes.signaturePairs {
		// Imported before state_tax_id: the state and the tax id.
		walked = func(cond string) string {
			after := ""
			if w.after != "" {
				after = "o.tax_id > " + w.after
			}
			return w.sel(branch{from: LiveSchema + ".office_signatures o"}, sh.key+" AS k, ("+cond+") AS m", live, after) +
				" ORDER BY o.tax_id LIMIT " + n
		}
	} else if sh.signatures {
		taxID = func(k string) string { return "right(" + k + ", 14)" }
		walked = func(cond string) string {
			// The state's range in key order, after the keyset: the
			// search's one condition.
			return "SELECT o.state_tax_id AS k, (" + cond + ") AS m FROM " + LiveSchema + ".office_signatures o WHERE " +
				stateSignatures(w.oneState, w.after) + " AND " + live + " ORDER BY o.state_tax_id LIMIT " + n
		}
	}
	walkOf := func(cond string) string {
		return "SELECT k, m, rn FROM (SELECT k, m, row_number() OVER () AS rn FROM (" + walked(cond) + ") o) o" +
			" WHERE m OR rn = " + n + " LIMIT " + limit
	}
	var (
		keys   pq.StringArray
		last   sql.NullString
		capped int
	)
	if sh.walkAliases != nil {
		// Split: the walk reads the state's offices from their index
		// alone and each one's company (10 ms for "individual" in SP,
		// against 13–14 checking each office's alias too), and the
		// aliases, few, are collected; up to the walk's last office when
		// it got there, both are every match. Past collectCap aliases,
		// the walk checks them after all.
		a := *sh.walkAliases
		split := "WITH capped AS MATERIALIZED (" + w.sel(a, sh.key+" AS k", live, w.keyset(a)) + " LIMIT " + strconv.Itoa(collectCap+1) + ")," +
			" walk AS MATERIALIZED (" + walkOf(sh.walkCompanies) + ")," +
			" bound AS (SELECT max(k) AS l FROM walk WHERE rn = " + n + ")" +
			" SELECT (SELECT coalesce(array_agg(k ORDER BY k), '{}') FROM (SELECT k FROM (SELECT k FROM walk WHERE m UNION SELECT k FROM capped) u" +
			" WHERE k <= coalesce((SELECT l FROM bound), k) ORDER BY k LIMIT " + limit + ") p)," +
			" (SELECT l FROM bound), (SELECT count(*) FROM capped)"
		if err := queryRow(ctx, d, split).Scan(&keys, &last, &capped); err != nil {
			return nil, fmt.Errorf("search: %w", errOr(ctx, err))
		}
	}
	if sh.walkAliases == nil || capped > collectCap {
		walk := "SELECT coalesce(array_agg(" + taxID("k") + " ORDER BY k) FILTER (WHERE m), '{}'), " +
			taxID("max(k) FILTER (WHERE rn = "+n+")") + " FROM (" + walkOf(sh.walk) + ") o"
		if err := queryRow(ctx, d, walk).Scan(&keys, &last); err != nil {
			return nil, fmt.Errorf("search: %w", errOr(ctx, err))
		}
	}
	if len(keys) > q.Limit || !last.Valid {
		return keys, nil // a page, or every match of the state
	}
	// After the last office walked; written so that no index reads the
	// bound (see walkPage).
	bound := sh.key + " || '' > " + w.arg(last.String)
	rest := make([]string, len(sh.branches))
	for i, b := range sh.branches {
		// The keyset is implied by the bound, but a statement must name
		// every argument.
		rest[i] = "(" + w.sel(b, sh.key+" AS k", live, w.keyset(b), bound) + " ORDER BY " + sh.key + " || '' LIMIT " + limit + ")"
	}
	after, err := queryKeys(ctx, d, w, keysOf(rest, limit))
	if err != nil {
		return nil, err
	}
	keys = append(keys, after...)[:min(len(keys)+len(after), q.Limit+1)]
	if len(keys) <= q.Limit {
		return keys, stillLive(ctx, d, q.Snapshot)
	}
	return keys, nil
}

// collectCap is how many matches cappedPage collects at most.
const collectCap = 1000

// cappedPage reads a page whose branch sh.branches[walked] is expected to
// be small: its matches, at most collectCap+1 of them read in no order,
// then sorted, united with the other branches' first keys, in one
// statement. Only past the cap, with as many matches as they may be (a
// word's frequency below what the statistics list can still be 100,000
// aliases of the whole registry), does walkPage read the page instead.
func cappedPage(ctx context.Context, d sqlx.QueryerContext, q Search, sh shape, w *where, live, limit string, walked int, parts []string) (pq.StringArray, error) {
	b := sh.branches[walked]
	capped := slices.Clone(parts)
	capped[walked] = "(SELECT k FROM capped ORDER BY k LIMIT " + limit + ")"
	page := "WITH capped AS MATERIALIZED (" + w.sel(b, sh.key+" AS k", live, w.keyset(b)) + " LIMIT " + strconv.Itoa(collectCap+1) + ")" +
		" SELECT (" + keysOf(capped, limit) + "), (SELECT count(*) FROM capped)"
	var (
		keys pq.StringArray
		n    int
	)
	if err := queryRow(ctx, d, page).Scan(&keys, &n); err != nil {
		return nil, fmt.Errorf("search: %w", errOr(ctx, err))
	}
	if n <= collectCap {
		return keys, nil
	}
	return walkPage(ctx, d, q, sh, w, live, limit, walked, parts)
}

// walkPage reads a page whose branch sh.branches[walked] walks: the next
// walkLength offices in key order, and that branch's matches among them,
// united with the other branches' parts (their first keys). When the
// walked stretch holds fewer than a page of those keys up to its last
// office, a second statement reads the branch's matches after that office
// and before the page's last key so far (if it has a page's worth), which
// PostgreSQL, given both bounds as values, reads from the primary key's
// range or the branch's index, as the range says. With a page in the
// stretch, every key of the page is in it. In one statement the matches
// after the stretch were read whole when needed: 2,685 aliases of
// "francisca" after a stretch that held 10 of the 11 keys (6.4 ms of 11).
func walkPage(ctx context.Context, d sqlx.QueryerContext, q Search, sh shape, w *where, live, limit string, walked int, parts []string) (pq.StringArray, error) {
	b := sh.branches[walked]
	// The columns the walk branch reads (its alias condition, its keyset):
	// materializing whole rows took 7 % longer.
	cols, cond := "o.tax_id, o.root, o.alias_words", b.cond
	if b.walkCond != "" {
		// Index-only: each walked office's alias was a heap page of its
		// own ("antonia": 524 buffers a page, nearly all the page's).
		cols, cond = "o.tax_id, o.root, o.alias_sig", b.walkCond
	}
	scan := w.sel(branch{from: LiveSchema + ".offices o"}, cols, w.walkKeyset())
	parts[walked] = "(" + w.sel(branch{from: b.walk("walk"), cond: cond}, sh.key+" AS k", live) + ")"
	page := "WITH walk AS MATERIALIZED (" + scan + " ORDER BY o.root, o.tax_id LIMIT " + strconv.Itoa(walkLength) + ")" +
		" SELECT (" + keysOf(parts, limit) + "), (SELECT max(tax_id) FROM walk), (SELECT count(*) FROM walk)"
	var (
		keys   pq.StringArray
		last   sql.NullString
		walks  int
		needed = q.Limit + 1
	)
	if err := queryRow(ctx, d, page).Scan(&keys, &last, &walks); err != nil {
		return nil, fmt.Errorf("search: %w", errOr(ctx, err))
	}
	inWalk := 0
	for _, k := range keys {
		if k <= last.String {
			inWalk++
		}
	}
	// The walk reached the last office, or holds a page; a page's last
	// key (needed: one more) says only that there is a next page.
	if walks < walkLength || (inWalk >= q.Limit && len(keys) >= needed) {
		return keys, nil
	}
	// The keyset is implied by the bounds, but a statement must name every
	// argument.
	conds := []string{live, w.keyset(b)}
	order := "o.tax_id"
	if len(keys) >= needed {
		conds = append(conds, "o.tax_id > "+w.arg(last.String), "o.tax_id <= "+w.arg(keys[needed-1]))
	} else {
		// No end: written so that no index reads the bound, which as a
		// bitmap of the primary key read every key past it (60 ms).
		conds = append(conds, "o.tax_id || '' > "+w.arg(last.String))
		order = "o.tax_id || ''"
	}
	after, err := queryKeys(ctx, d, w, keysOf([]string{"(" + w.sel(b, sh.key+" AS k", conds...) +
		" ORDER BY " + order + " LIMIT " + limit + ")"}, limit))
	if err != nil {
		return nil, err
	}
	keys = append(keys, after...) // a key may be in both: a company name and its office's alias
	return pageOfKeys(ctx, d, q, keys)
}

// pageOfKeys is a page of keys read in more than one statement: sorted,
// each once, the first Limit+1. A page short of them ended the search,
// and asks whether the snapshot is still the live one (stillLive).
func pageOfKeys(ctx context.Context, d sqlx.QueryerContext, q Search, keys pq.StringArray) (pq.StringArray, error) {
	slices.Sort(keys)
	keys = slices.Compact(keys)
	if needed := q.Limit + 1; len(keys) >= needed {
		return keys[:needed], nil
	}
	return keys, stillLive(ctx, d, q.Snapshot)
}

// stillLive is ErrSnapshotChanged unless snapshot is the live one. A page
// read in two statements asks it when the second ended the search: a swap
// between them leaves the second reading nothing.
func stillLive(ctx context.Context, d sqlx.QueryerContext, snapshot int64) error {
	live, err := LiveSnapshot(ctx, d)
	if err != nil {
		return err
	}
	if live.ID != snapshot {
		return ErrSnapshotChanged
	}
	return nil
}

// errOr is the context's error when it ended: the driver's error then
// says only that the statement was canceled.
func errOr(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return err
}

// countCostPerMillisecond is how much of PostgreSQL's plan cost a
// millisecond of a count's budget buys: a count priced past the budget
// times this is not started, as it would run out of the budget and say
// the estimate after all. On the bench dump (auto_explain, the search
// mix's first pages), the counts priced 500 to 2,700 took 0.3 to 2.2 ms,
// and 81 of the 82 priced 8,800 to 17,000 (a name word with a state: a
// hash join of the word's companies and the state's offices) ran out of
// their 10 ms, a tenth of a core's time spent for nothing each.
const countCostPerMillisecond = 1000

// planTop reads a text plan's top node: "Sort  (cost=1.00..2.50 rows=40
// width=32)" has a total cost of 2.50 and 40 rows.
var planTop = regexp.MustCompile(`\(cost=[0-9.]+\.\.([0-9.]+) rows=([0-9]+) `)

// count is a first page's count, before its page. PostgreSQL estimates
// the matches (its planner, from the table statistics: no row is read),
// unless the shape's estimate stands for it (unpriced: the same statistics,
// read by the server, without the round trip); a search expected to have
// more than q.CountLimit (unless that estimate is a guess: guessed), or
// whose count PostgreSQL prices past q.CountBudget
// (countCostPerMillisecond), says that estimate. One
// expected to have fewer is counted exactly if that takes at most
// q.CountBudget, and says the estimate if not; a count that finds more
// than the limit says the limit plus one. Counting reads every match
// where a page reads a few, so an exact count of a large search would
// cost many times its page. search then raises an estimate to what the
// page proves, and a first page that holds every match counts itself.
//
// An exact count has read every match, so it also gives the first page:
// keys, the first pageLimit keys in order (non-nil only when exact), read
// where live (a condition it adds; nil for none) holds.
func count(ctx context.Context, d sqlx.QueryerContext, q Search, sh shape, w *where, pageLimit int, live func() string) (n int64, exact bool, keys pq.StringArray, err error) {
	if sh.estimate > 0 && (sh.uncounted || (sh.estimate > int64(q.CountLimit) && !sh.guessed)) {
		return sh.estimate, false, nil, nil
	}
	budget := max(q.CountBudget.Milliseconds(), 1)
	estimate := sh.estimate
	if !sh.unpriced {
		var cost float64
		if estimate, cost, err = explain(ctx, d, sh, w); err != nil {
			return 0, false, nil, err
		}
		if estimate > int64(q.CountLimit) || cost > float64(budget*countCostPerMillisecond) {
			if !sh.factsTried {
				return estimate, false, nil, nil
			}
			budget, sh = max(budget/2, 1), sh.collecting()
		}
	}

	var extra []string
	if live != nil {
		extra = append(extra, live())
	}
	countQuery := boundedCount(w, sh, q.CountLimit, pageLimit, extra...)
	// The budget is the statement's own timeout, set in the same round
	// trip (budgeted).
	err = queryRow(ctx, budgeted{d, strconv.FormatInt(budget, 10)}, countQuery).Scan(&n, &keys)
	stopped := outOfBudget(ctx, err)
	if err != nil && !stopped {
		return 0, false, nil, fmt.Errorf("search count: %w", err)
	}
	switch {
	case stopped:
		return estimate, false, nil, nil
	case n > int64(q.CountLimit): // at least one past the limit
		return max(estimate, int64(q.CountLimit)+1), false, nil, nil
	}
	if keys == nil {
		keys = pq.StringArray{}
	}
	return n, true, keys, nil
}

// explain is PostgreSQL's estimate of a search's matches and its price
// (the plan's total cost), from the top node of its plan.
func explain(ctx context.Context, d sqlx.QueryerContext, sh shape, w *where) (estimate int64, cost float64, err error) {
	parts := make([]string, len(sh.branches))
	for i, b := range sh.branches {
		parts[i] = w.sel(b, sh.key)
	}
	// The plan's first line is its top node, with the total cost and rows.
	// Not FORMAT JSON: decoding the whole plan of a name search took 9 %
	// of the server's time on a name word + state.
	var top string
	if err := queryRow(ctx, d, "EXPLAIN "+strings.Join(parts, " UNION ")).Scan(&top); err != nil {
		return 0, 0, fmt.Errorf("search estimate: %w", err)
	}
	m := planTop.FindStringSubmatch(top)
	if m == nil {
		return 0, 0, fmt.Errorf("search estimate: unexpected plan %q", top)
	}
	cost, _ = strconv.ParseFloat(m[1], 64)
	estimate, _ = strconv.ParseInt(m[2], 10, 64)
	return estimate, cost, nil
}

// boundedCount is the count statement: the number of distinct keys of the
// branches, at most limit+1 of them, and, when that is at most limit, the
// first pageLimit keys in order (otherwise they are not the first).
// Each branch's keys (at most limit+1) are a common table expression,
// counted on its own first: a branch past the limit answers limit+1 and
// the branches after it are never read (PostgreSQL evaluates a CASE's
// subqueries, and so the expressions they read, only when reached). A name
// word of 828 companies and 1,001+ aliases: 9.6 ms for the union of both,
// 3.9 ms stopping after the first.
func boundedCount(w *where, sh shape, limit, pageLimit int, extra ...string) string {
	bound := w.arg(limit + 1)
	first := w.arg(pageLimit)
	keys := func(from string) string {
		return "(SELECT array_agg(k ORDER BY k) FROM (SELECT k FROM " + from + " ORDER BY k LIMIT " + first + ") p)"
	}
	if len(sh.branches) == 1 {
		return "WITH u AS MATERIALIZED (" + w.sel(sh.branches[0], sh.key+" AS k", extra...) + " LIMIT " + bound + ") " +
			"SELECT (SELECT count(*) FROM u), " + keys("u")
	}
	with := make([]string, len(sh.branches))
	past := make([]string, len(sh.branches))
	union := make([]string, len(sh.branches))
	over, stop := strconv.Itoa(limit), strconv.Itoa(limit+1)
	for i, b := range sh.branches {
		name := "c" + strconv.Itoa(i)
		with[i] = name + " AS MATERIALIZED (" + w.sel(b, sh.key+" AS k", extra...) + " LIMIT " + bound + ")"
		past[i] = "WHEN (SELECT count(*) FROM " + name + ") > " + over + " THEN "
		union[i] = "SELECT k FROM " + name
	}
	// u is read only in the ELSE: after every branch was found within the
	// limit.
	with = append(with, "u AS MATERIALIZED ("+strings.Join(union, " UNION ")+")")
	return "WITH " + strings.Join(with, ", ") +
		" SELECT CASE " + strings.Join(past, stop+" ") + stop + " ELSE (SELECT count(*) FROM u) END," +
		" CASE " + strings.Join(past, "NULL ") + "NULL ELSE " + keys("u") + " END"
}

// SearchToken is a page token: the page after key After of the search
// Params (canonical query text) of Kind, on the snapshot it started on.
type SearchToken struct {
	Token     string    `db:"token"`
	Kind      string    `db:"kind"`
	Params    string    `db:"params"`
	Snapshot  int64     `db:"snapshot_id"`
	After     string    `db:"after_key"`
	Count     int64     `db:"total"`
	Exact     bool      `db:"exact"`
	Limit     int       `db:"page_limit"`
	Collected bool      `db:"collected"` // the next page is collected at once (Search.Collected)
	CreatedAt time.Time `db:"created_at"`
}

// SaveSearchTokens stores tokens in one statement. A page's one token
// rides on the statement of its records instead (withToken).
func (s *Store) SaveSearchTokens(ctx context.Context, ts []SearchToken) error {
	if len(ts) == 0 {
		return nil
	}
	n := len(ts)
	tokens, kinds, params, afters := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	snaps, counts, limits := make([]int64, n), make([]int64, n), make([]int64, n)
	exact, collected := make([]bool, n), make([]bool, n)
	for i, t := range ts {
		tokens[i], kinds[i], params[i], afters[i] = t.Token, t.Kind, t.Params, t.After
		snaps[i], counts[i], limits[i], exact[i], collected[i] = t.Snapshot, t.Count, int64(t.Limit), t.Exact, t.Collected
	}
	const q = `INSERT INTO search_tokens (token, kind, params, snapshot_id, after_key, total, exact, page_limit, collected)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::bigint[], $7::bool[], $8::int[], $9::bool[])`
	rows, err := s.Q.QueryContext(ctx, q, pq.Array(tokens), pq.Array(kinds), pq.Array(params), pq.Array(snaps),
		pq.Array(afters), pq.Array(counts), pq.Array(exact), pq.Array(limits), pq.Array(collected))
	if err == nil {
		err = errors.Join(rows.Err(), rows.Close())
	}
	if err != nil {
		return fmt.Errorf("save search tokens: %w", err)
	}
	return nil
}

// withToken is a page's records statement (its one parameter $1, the
// keys) that first stores the page's token ($2 to $10, scalars: encoding
// arrays cost a name search 8 % of the server's time): one round trip
// where the token's own statement was a second, with a transaction of its
// own. Interleaved on a PVM machine, first pages 11-16 % more req/s
// (docs/benchmarks.md, "A page's token in its records' statement").
func withToken(records string) string {
	return `WITH saved_token AS (INSERT INTO search_tokens (token, kind, params, snapshot_id, after_key, total, exact, page_limit, collected)
	VALUES ($2, $3, $4, $5, $6, $7, $8, $9, $10))
` + records
}

// recordsQuery is a page's records statement for keys with its
// arguments: saved (withToken's form of records) with one token, and
// records with none or more (GraphQL's cursors, a token per record), which
// are stored first by their own statement.
func (s *Store) recordsQuery(ctx context.Context, records, saved string, keys []string, tokens []SearchToken) (string, []any, error) {
	args := []any{pq.Array(keys)}
	if len(tokens) != 1 {
		return records, args, s.SaveSearchTokens(ctx, tokens)
	}
	t := tokens[0]
	return saved, append(args, t.Token, t.Kind, t.Params, t.Snapshot, t.After, t.Count, t.Exact, t.Limit, t.Collected), nil
}

// SearchTokenOf returns a stored token; NotFoundError when there is none.
func (s *Store) SearchTokenOf(ctx context.Context, token string) (SearchToken, error) {
	var t SearchToken
	err := s.DB.GetContext(ctx, &t, `SELECT token, kind, params, snapshot_id, after_key, total, exact, page_limit, collected, created_at
FROM search_tokens WHERE token = $1`, token)
	if errors.Is(err, sql.ErrNoRows) {
		return t, &NotFoundError{What: "search token", Key: token}
	}
	if err != nil {
		return t, fmt.Errorf("read search token: %w", err)
	}
	return t, nil
}

// DeleteSearchTokens removes the tokens created before t, at most
// tokenDeleteBatch a statement with a pause between: in one statement, a
// minute of the bench's tokens (35,000-48,000) took 26 ms of a core on an
// idle server and 129 ms under the search mix, a stall for the requests
// beside it; a batch takes 1-2 ms.
func (s *Store) DeleteSearchTokens(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for {
		res, err := s.DB.ExecContext(ctx, `DELETE FROM search_tokens WHERE ctid = ANY (ARRAY(
			SELECT ctid FROM search_tokens WHERE created_at < $1 LIMIT $2))`, before, tokenDeleteBatch)
		if err != nil {
			return total, fmt.Errorf("delete search tokens: %w", err)
		}
		n, _ := res.RowsAffected()
		total += n
		if n < tokenDeleteBatch {
			return total, nil
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(tokenDeletePause):
		}
	}
}

const (
	tokenDeleteBatch = 2000
	tokenDeletePause = 10 * time.Millisecond
)
