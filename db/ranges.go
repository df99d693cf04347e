package db

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// A rangeScan is a bounded column of a search (founded, company.equity...)
// read alone through its own index: the rows within the bounds, in the
// column's order.
//
// A bound's matches are few where the column's values thin out (the oldest
// companies, the largest equities, last month's status changes), and
// there PostgreSQL's histogram spreads its last bucket evenly over a range
// that may span orders of magnitude: it expects thousands where there are
// ten, walks the offices in key order for a page, and reads the whole
// registry for 11 (a 10M dump: 7 s, or past the deadline). probeRanges
// asks the index instead.
type rangeScan struct {
	field string
	from  string   // its table, under the search's alias: "cnpj.offices o"
	order string   // the indexed column, as the conditions name it
	key   string   // what a row is to its offices: o.tax_id, c.root
	match string   // the offices' column equal to key: o.tax_id, o.root
	conds []string // the bounds (and the table's own conditions)
	// covered: the index holds key, so the probe reads the range once,
	// counting and keeping the keys together; otherwise it counts from
	// the index alone first and reads the rows' keys only for a small
	// range (a large one's would cost a row read each).
	covered bool
}

// ranged records cond, one bound of field, for probeRanges, and returns it
// as the search's condition. A snapshot imported before the bounds'
// indexes existed is searched as it was then: without them a probe would
// sort the whole table.
func (w *where) ranged(field, from, order, key, match, cond string) string {
	if !w.codes.boundIndexes {
		return cond
	}
	for _, r := range w.ranges {
		if r.field == field {
			r.conds = append(r.conds, cond)
			return cond
		}
	}
	w.ranges = append(w.ranges, &rangeScan{field: field, from: from, order: order, key: key, match: match, conds: []string{cond}})
	return cond
}

// probeRanges reads each bounded column's range from its index, at most
// collectCap+1 entries of it (the index alone: a count). A range of at most
// collectCap rows is read whole (their keys) and becomes one more condition
// of the search, its keys as values: PostgreSQL then knows how few they
// are, and a page collects its offices and sorts them. A larger range
// leaves the search as it was: its matches are common enough for a walk in
// key order to meet them. One round trip, whatever the ranges.
func (w *where) probeRanges(ctx context.Context, d sqlx.QueryerContext) error {
	w.activityFacts()
	if len(w.ranges) == 0 {
		return nil
	}
	limit := strconv.Itoa(collectCap + 1)
	cols := make([]string, len(w.ranges))
	for i, r := range w.ranges {
		scan := " FROM " + r.from + " WHERE " + strings.Join(r.conds, " AND ")
		if r.order != "" {
			scan += " ORDER BY " + r.order
		}
		scan += " LIMIT " + limit
		if r.covered {
			cols[i] = "(SELECT CASE WHEN count(*) <= " + strconv.Itoa(collectCap) + " THEN coalesce(array_agg(k), '{}') END FROM (SELECT " + r.key + " AS k" + scan + ") r)"
			continue
		}
		// A CASE reads its ARRAY only when reached (see boundedCount).
		cols[i] = "CASE WHEN (SELECT count(*) FROM (SELECT" + scan + ") r) <= " + strconv.Itoa(collectCap) +
			" THEN ARRAY(SELECT " + r.key + scan + ") END"
	}
	keys := make([]pq.StringArray, len(w.ranges))
	dest := make([]any, len(w.ranges))
	for i := range keys {
		dest[i] = &keys[i]
	}
	if err := queryRow(ctx, d, "SELECT "+strings.Join(cols, ", ")).Scan(dest...); err != nil {
		return fmt.Errorf("search ranges: %w", errOr(ctx, err))
	}
	for i, r := range w.ranges {
		if keys[i] == nil {
			continue // past collectCap (NULL)
		}
		w.conds = append(w.conds, r.match+" = ANY("+w.arg(keys[i])+"::text[])")
		w.collect = true
	}
	return nil
}

// activityFacts adds to the ranges probed a main activity's offices whose
// companies have the search's facts (a size, a nature, a Simples or SIMEI
// option), read from office_lookups_activity alone. An activity's offices
// are many (252,550 of 9492800 at ten times the bench dump), those of its
// companies with such a fact often few or none (churches with the Simples,
// micro companies, a nature they do not have), and PostgreSQL, multiplying
// the two shares, walked the offices in key order for them until the walk
// budget, then collected the activity's offices and hashed the companies
// or the Simples rows to test each (1.1-3.8 s a page). The probe answers
// in the index's range of the activity; a few become the page's keys, as
// a bound's do.
//
// activities.id.in (main or side) of side activities the statistics do
// not list (w.activities: few offices have them as side ones) is probed
// the same way, its side activities' offices added, read through
// offices_side_activities with their rows of office_lookups (its offices'
// side activities are not beside the facts): churches or micro companies
// at ten times the bench dump took 2.3-2.8 s a page, walked and then
// collected as the main activity alone was.
func (w *where) activityFacts() {
	if len(w.facts) == 0 || !w.codes.activityFacts {
		return
	}
	switch {
	case w.factActivity != "":
		w.ranges = append(w.ranges, &rangeScan{field: "mainActivity.id", from: LiveSchema + ".office_lookups l",
			key: "l.tax_id", match: "o.tax_id", conds: append([]string{w.factActivity}, w.facts...), covered: true})
	case w.activities != "":
		// The side activities' offices whose main activity is not among
		// the codes, so that an office is read once (UNION ALL: a UNION's
		// deduplication would read the whole union before the first
		// row, where a common main activity's probe stops at its limit),
		// each office's row of office_lookups read by its key: the
		// fenced LATERAL keeps PostgreSQL from reading office_lookups
		// whole for a fact it expects rare (a nature none has).
		const facts = "l.tax_id, l.size, l.simples_optant, l.simei_optant, l.nature"
		from := "(SELECT " + facts + " FROM " + LiveSchema + ".office_lookups l WHERE " +
			strings.Replace(mainActivityIn(w.activities), "o.", "l.", 1) +
			" UNION ALL SELECT " + facts + " FROM " + LiveSchema + ".offices o, LATERAL (SELECT " + facts +
			" FROM " + LiveSchema + ".office_lookups l WHERE l.tax_id = o.tax_id OFFSET 0) l WHERE " +
			sideActivitiesIn(w.activities) + " AND NOT coalesce(" + mainActivityIn(w.activities) + ", false)) l"
		w.ranges = append(w.ranges, &rangeScan{field: "activities.id", from: from,
			key: "l.tax_id", match: "o.tax_id", conds: w.facts, covered: true})
	}
}
