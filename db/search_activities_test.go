package db_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/jmoiron/sqlx"
)

// explainedPages is a Store's search queryer that EXPLAINs each page
// statement (the keys of a page: not a count, which runs under its own
// timeout) and each probe of the bounds' ranges before running it,
// keeping the most buffers one read.
type explainedPages struct {
	sqlx.QueryerContext
	t       *testing.T
	d       *sqlx.DB
	buffers int64
	probes  int // the probes of the bounds' ranges run
}

// explainedStore is a Store on d whose search statements explainedPages
// EXPLAINs.
func explainedStore(t *testing.T, d *sqlx.DB) (*db.Store, *explainedPages) {
	store := db.NewStore(d, db.StoreOptions{})
	pages := &explainedPages{QueryerContext: store.Searches, t: t, d: d}
	store.Searches = pages
	return store, pages
}

// probeStatement begins a probe of the bounds' ranges (probeRanges).
const probeStatement = "SELECT CASE WHEN (SELECT count(*)"

func (e *explainedPages) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	if strings.Contains(query, "statement_timeout") {
		return e.QueryerContext.QueryRowxContext(ctx, query, args...)
	}
	for _, statement := range []string{"SELECT coalesce(array_agg(k ORDER BY k)", probeStatement} {
		if i := strings.Index(query, statement); i >= 0 {
			_, buffers, _ := explainPage(e.t, e.d, query[i:])
			e.buffers = max(e.buffers, buffers)
			if statement == probeStatement {
				e.probes++
			}
		}
	}
	return e.QueryerContext.QueryRowxContext(ctx, query, args...)
}

// TestRareSideActivitiesCollected: 30,000 offices whose side activities
// are 13 common codes, 30 of them with a rare one (21 with it as their
// main activity, 3 of those with it as a side one too, and the sample's
// SERPRO office too) and none with a third; two companies named ZZACME,
// one of them with it. PostgreSQL's statistics list the 10 most common codes and guess
// the others at half the least listed share (1,500 offices here), so it
// would walk the offices in key order for a page, a third of them for the
// rare code and all of them for the absent one. sideActivities.id.in and
// activities.id.in of such codes read their offices through
// offices_side_activities (and activities' main ones through
// offices_activity) and sort them (with a name, the activities are one
// more condition of its branches): every page in at most 100 buffers
// (walked: 7,000 to 30,000), and paging visits every match once, in key
// order.
func TestRareSideActivitiesCollected(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.offices (tax_id, root, head, main_activity, side_activities, state)
		SELECT r || '000100', r, true,
			CASE WHEN g % 4000 = 17 OR g % 3000 = 1000 OR g % 10000 = 1 THEN '9609299' ELSE lpad((g % 5)::text, 7, '0') END,
			CASE WHEN g % 1000 = 1 THEN ARRAY[lpad((g % 10)::text, 7, '0'), '9609299']
				ELSE ARRAY[lpad((g % 10)::text, 7, '0'), lpad((g % 3 + 10)::text, 7, '0')] END,
			CASE WHEN g % 2 = 0 THEN 'SP' ELSE 'RJ' END
		FROM generate_series(1, 30000) g, lpad((90000000 + g)::text, 8, '0') r
		ORDER BY (g * 7919) % 30011;
		UPDATE cnpj.offices SET main_activity = '9609299' WHERE tax_id = '`+dbtest.SerproBranch+`';
		INSERT INTO cnpj.companies (root, name, name_words) VALUES
			('90000001', 'ZZACME UM', '{zzacme,um}'), ('90000002', 'ZZACME DOIS', '{zzacme,dois}')`)
	// The statistics list the 10 most common side activities (a tenth of
	// the default), as on the registry they list 1,000 of some 1,300.
	dbtest.MustExec(t, d, `ALTER TABLE cnpj.offices ALTER side_activities SET STATISTICS 1`)
	dbtest.MustExec(t, d, `VACUUM ANALYZE cnpj.offices`)
	var listed bool
	if err := d.Get(&listed, `SELECT coalesce('9609299' = ANY (most_common_elems::text::text[]), false) FROM pg_stats
		WHERE schemaname = 'cnpj' AND tablename = 'offices' AND attname = 'side_activities'`); err != nil || listed {
		t.Fatalf("the statistics list the rare code (%v): the test's premise does not hold", err)
	}
	store, pages := explainedStore(t, d)
	for _, c := range []struct {
		filters []db.Filter
		where   string
		n       int
	}{
		{[]db.Filter{{Field: "sideActivities.id", Op: db.OpIn, Ints: []int{9609299}}}, `'9609299' = ANY (side_activities)`, 30},
		{[]db.Filter{{Field: "sideActivities.id", Op: db.OpIn, Ints: []int{9609299}}, {Field: "address.state", Op: db.OpIn, Texts: []string{"RJ"}}},
			`'9609299' = ANY (side_activities) AND state = 'RJ'`, 30},
		{[]db.Filter{{Field: "sideActivities.id", Op: db.OpIn, Ints: []int{9609298}}}, `'9609298' = ANY (side_activities)`, 0},
		{[]db.Filter{{Field: "activities.id", Op: db.OpIn, Ints: []int{9609299}}},
			`main_activity = '9609299' OR '9609299' = ANY (side_activities)`, 1 + 21 + 30 - 3},
		{[]db.Filter{{Field: "activities.id", Op: db.OpIn, Ints: []int{9609299}}, {Field: "names", Op: db.OpIn, Words: [][]string{{"zzacme"}}}},
			`(main_activity = '9609299' OR '9609299' = ANY (side_activities)) AND root IN ('90000001', '90000002')`, 1},
		{[]db.Filter{{Field: "activities.id", Op: db.OpIn, Ints: []int{9609299}}, {Field: "address.state", Op: db.OpIn, Texts: []string{"SP"}}},
			`(main_activity = '9609299' OR '9609299' = ANY (side_activities)) AND state = 'SP'`, 10},
	} {
		pagesInFewBuffers(t, d, store, pages, db.Search{Filters: c.filters, Snapshot: snapshot}, c.where, c.n)
	}
}

// pagesInFewBuffers checks that paging through q (store's searches going
// through pages) visits the n offices where holds, once each, in key
// order, each page statement reading at most 100 buffers.
func pagesInFewBuffers(t *testing.T, d *sqlx.DB, store *db.Store, pages *explainedPages, q db.Search, where string, n int) {
	t.Helper()
	var want []string
	if err := d.Select(&want, `SELECT tax_id FROM cnpj.offices WHERE `+where+` ORDER BY tax_id`); err != nil {
		t.Fatal(err)
	}
	if len(want) != n {
		t.Fatalf("%s: %d offices written, want %d", where, len(want), n)
	}
	pages.buffers = 0
	got := pageAll(t, store, q)
	if !slices.Equal(got, want) {
		t.Errorf("%s: paged %d keys, want %d; first difference at %d", where, len(got), len(want), firstDifference(got, want))
	}
	if pages.buffers > 100 {
		t.Errorf("%s: a page read %d buffers, want at most 100", where, pages.buffers)
	}
}
