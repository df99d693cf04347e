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
}

// ranged records cond, one bound of field, for probeRanges, and returns it
// as the search's condition.
func (w *where) ranged(field, from, order, key, match, cond string) string {
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
// key order to meet them. One round trip, whatever the ranges. A snapshot
// imported before the indexes existed is searched as it was then.
func (w *where) probeRanges(ctx context.Context, d sqlx.QueryerContext) error {
	if len(w.ranges) == 0 || !w.codes.boundIndexes {
		return nil
	}
	limit := strconv.Itoa(collectCap + 1)
	cols := make([]string, len(w.ranges))
	for i, r := range w.ranges {
		scan := " FROM " + r.from + " WHERE " + strings.Join(r.conds, " AND ") + " ORDER BY " + r.order + " LIMIT " + limit
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
