package db_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/jmoiron/sqlx"
)

// recordedSearches is a Store's search queryer that keeps every statement
// it runs.
type recordedSearches struct {
	sqlx.QueryerContext
	statements []string
}

func (r *recordedSearches) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	r.statements = append(r.statements, query)
	return r.QueryerContext.QueryRowxContext(ctx, query, args...)
}

// probedSearch is a search of an activity's offices with their companies'
// facts, the offices it finds (where, on cnpj.offices) and how many.
type probedSearch struct {
	filters []db.Filter
	where   string
	n       int  // -1: more than a page
	probed  bool // few enough to be the page's keys
}

// recordingStore is a Store on d whose searches are recorded.
func recordingStore(d *sqlx.DB) (*db.Store, *recordedSearches) {
	store := db.NewStore(d, db.StoreOptions{})
	searches := &recordedSearches{QueryerContext: store.Searches}
	store.Searches = searches
	return store, searches
}

// factsProbePlans are the plans (EXPLAIN on d) of the recorded probes of
// an activity's facts (activityFacts), which read office_lookups as l.
func (r *recordedSearches) factsProbePlans(t *testing.T, d *sqlx.DB) []string {
	t.Helper()
	var plans []string
	for _, s := range r.statements {
		parts := strings.Split(s, ";")
		i := slices.IndexFunc(parts, func(p string) bool { return strings.Contains(p, "office_lookups l") })
		if i < 0 {
			continue
		}
		var plan []string
		if err := d.Select(&plan, "EXPLAIN "+parts[i]); err != nil {
			t.Fatal(err)
		}
		plans = append(plans, strings.Join(plan, "\n"))
	}
	return plans
}

// walkedOn counts the statements run under ten times a budget of 1 ms:
// a walk no index would narrow, run on.
func (r *recordedSearches) walkedOn() int { return r.underTimeout(10) }

// budgeted counts the statements run within a budget of 1 ms: walks of a
// page (a count's budget is its own, 1 s: withPageOf).
func (r *recordedSearches) budgeted() int { return r.underTimeout(1) }

// underTimeout counts the statements run under a statement timeout of ms
// milliseconds (budgeted's form: the timeout first).
func (r *recordedSearches) underTimeout(ms int) int {
	n := 0
	for _, s := range r.statements {
		if strings.HasPrefix(s, "SET LOCAL statement_timeout = "+strconv.Itoa(ms)+";") {
			n++
		}
	}
	return n
}

// windowed counts the walks of a window of companies by their signatures
// (windowedPage).
func (r *recordedSearches) windowed() int {
	return r.containing("row_number() OVER (ORDER BY c.root)")
}

// explained counts the plans asked of PostgreSQL whether an index narrows
// a collect (indexNarrowed).
func (r *recordedSearches) explained() int { return r.containing("EXPLAIN (FORMAT JSON)") }

// containing counts the statements that contain part.
func (r *recordedSearches) containing(part string) int {
	n := 0
	for _, s := range r.statements {
		if strings.Contains(s, part) {
			n++
		}
	}
	return n
}

// collected counts the statements that read a page's keys collected:
// sorted on an order no index gives (pageParts), or read whole and
// counted (boundedCollect); not an EXPLAIN of one.
func (r *recordedSearches) collected() int {
	n := 0
	for _, s := range r.statements {
		collect := strings.Contains(s, "SELECT coalesce(array_agg(k ORDER BY k)") && strings.Contains(s, "o.tax_id || '' LIMIT")
		bounded := strings.Contains(s, "FROM m ORDER BY k LIMIT") // boundedCollect's
		if (collect || bounded) && !strings.Contains(s, "EXPLAIN") {
			n++
		}
	}
	return n
}

// pagesRead counts the statements that read a page's keys, walked or
// collected (a count that found every match gives the page too, and is
// none of these); not an EXPLAIN of one.
func (r *recordedSearches) pagesRead() int {
	n := 0
	for _, s := range r.statements {
		page := strings.Contains(s, "SELECT coalesce(array_agg(k ORDER BY k)") || strings.Contains(s, "FROM m ORDER BY k LIMIT")
		if page && !strings.Contains(s, "EXPLAIN") {
			n++
		}
	}
	return n
}

// TestExclusiveFiltersCollectedPastTheWalkBudget: the offices of
// dbtest.LoadExclusiveFilters, where PostgreSQL walks every office in key
// order for a page of a religious organization's activity with Simples
// optants or micro companies (on the bench dump, where none is, 0.7 s).
// Past the walk's budget the page is collected, the activity's offices
// read through offices_activity and sorted: paging visits every match
// once, in key order, the first page counts them exactly, and the pages after the first collected one are
// collected at once, their walk not tried again (SearchPage.Collected,
// carried to the next page as a token carries it). Without a budget the
// walk runs to its end. A contradiction no index narrows (not a Simples
// optant, but a SIMEI one) walks on past the budget, ten times it, before
// it is collected all the same: the walk might have met a rare match
// early, which a collect would have read every office for.
func TestExclusiveFiltersCollectedPastTheWalkBudget(t *testing.T) {
	d, snapshot := dbtest.Exclusive(t)
	dbtest.WithoutActivityFacts(t, d) // walked and collected, as a sparse search it does not answer
	store, searches := recordingStore(d)

	activity := db.Filter{Field: "mainActivity.id", Op: db.OpIn, Ints: []int{dbtest.ExclusiveActivity}}
	optant := func(field string, v bool) db.Filter { return db.Filter{Field: field, Op: db.OpEq, Bool: v} }
	inSimples := "root IN (SELECT root FROM cnpj.simples WHERE "
	for _, c := range []struct {
		filters []db.Filter
		where   string
		n       int
		walkOn  bool // past the budget: no index narrows it
	}{
		{[]db.Filter{activity, {Field: "status.id", Op: db.OpIn, Ints: []int{2}}, optant("company.simples.optant", true)},
			"main_activity = '9492800' AND status = '02' AND " + inSimples + "simples_optant)", 4, false},
		{[]db.Filter{activity, {Field: "company.size.id", Op: db.OpIn, Ints: []int{1}}},
			"main_activity = '9492800' AND root IN (SELECT root FROM cnpj.companies WHERE size = '01')", 6, false},
		{[]db.Filter{optant("company.simples.optant", false), optant("company.simei.optant", true)},
			inSimples + "NOT simples_optant AND simei_optant)", 1, true},
	} {
		var want []string
		if err := d.Select(&want, `SELECT tax_id FROM cnpj.offices WHERE `+c.where+` ORDER BY tax_id`); err != nil {
			t.Fatal(err)
		}
		if len(want) != c.n {
			t.Fatalf("%s: %d offices written, want %d", c.where, len(want), c.n)
		}
		for _, budget := range []time.Duration{0, time.Millisecond} {
			searches.statements = nil
			q := db.Search{Filters: c.filters, Snapshot: snapshot, WalkBudget: budget}
			got := pageThrough(t, store.SearchOffices, withPageOf(q, 2))
			if !slices.Equal(got, want) {
				t.Errorf("%s, budget %s: paged %v, want %v", c.where, budget, got, want)
			}
			collected, walkedOn, budgeted := searches.collected(), searches.walkedOn(), searches.budgeted()
			switch {
			case budget > 0 && budgeted != 1:
				t.Errorf("%s past a budget of %s: %d pages walked within it, want 1 (the pages after it collected at once)", c.where, budget, budgeted)
			case budget == 0 && collected+walkedOn > 0:
				t.Errorf("%s without a budget: %d pages collected, %d walked on, want every page walked", c.where, collected, walkedOn)
			case budget > 0 && !c.walkOn && collected == 0:
				t.Errorf("%s past a budget of %s: no page collected", c.where, budget)
			case budget > 0 && !c.walkOn && walkedOn > 0:
				t.Errorf("%s past a budget of %s: %d walks on, want the activity's offices read through its index at once", c.where, budget, walkedOn)
			case budget > 0 && c.walkOn && walkedOn == 0:
				t.Errorf("%s past a budget of %s: collected at once, want the walk run on first (no index narrows it)", c.where, budget)
			}
			// A first page collected counts its matches: exact where the
			// count (up to one match: withPageOf) said an estimate.
			first, err := store.SearchOffices(context.Background(), withPageOf(q, 2))
			switch {
			case err != nil:
				t.Fatal(err)
			case budget > 0 && (first.Count != int64(c.n) || !first.Exact):
				t.Errorf("%s past a budget of %s: first page count %d (exact %v), want %d exactly", c.where, budget, first.Count, first.Exact, c.n)
			case budget == 0 && first.HasNext && first.Exact:
				t.Errorf("%s without a budget: first page count %d exact, want the estimate (walked, its count limited to one)", c.where, first.Count)
			}
		}
	}
}

// withPageOf is q with pages of limit keys, counted only up to one match
// (so that no page is collected for its count).
func withPageOf(q db.Search, limit int) db.Search {
	q.Limit, q.CountLimit, q.CountBudget, q.CollectBelow = limit, 1, time.Second, 0
	return q
}

// TestCollectPastTheBudgetBounded: a collect past the walk budget reads
// at most collectMax matches. Bounded at 3, the activity's 4 Simples
// optants (dbtest.LoadExclusiveFilters) are too many to collect: every
// page, past its budget, walks to its end as PostgreSQL chose, none is
// collected nor carries a collect, and the count stays the estimate.
// Paging still visits the 4 once each, in key order.
func TestCollectPastTheBudgetBounded(t *testing.T) {
	d, snapshot := dbtest.Exclusive(t)
	dbtest.WithoutActivityFacts(t, d) // walked and collected, as a sparse search it does not answer
	var want []string
	if err := d.Select(&want, `SELECT tax_id FROM cnpj.offices WHERE main_activity = '9492800' AND status = '02'
		AND root IN (SELECT root FROM cnpj.simples WHERE simples_optant) ORDER BY tax_id`); err != nil {
		t.Fatal(err)
	}
	defer db.SetCollectMax(3)()
	store, searches := recordingStore(d)
	q := withPageOf(db.Search{Snapshot: snapshot, WalkBudget: time.Millisecond, Filters: []db.Filter{
		{Field: "mainActivity.id", Op: db.OpIn, Ints: []int{dbtest.ExclusiveActivity}},
		{Field: "status.id", Op: db.OpIn, Ints: []int{2}},
		{Field: "company.simples.optant", Op: db.OpEq, Bool: true},
	}}, 2)
	first, err := store.SearchOffices(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if first.Collected || first.Exact || !slices.Equal(first.Keys, want[:2]) {
		t.Errorf("first page: %v (collected %v, count %d exact %v), want %v walked, the count an estimate",
			first.Keys, first.Collected, first.Count, first.Exact, want[:2])
	}
	searches.statements = nil
	if got := pageThrough(t, store.SearchOffices, q); !slices.Equal(got, want) {
		t.Errorf("paged %v, want %v", got, want)
	}
	// Each page: its walk out of the budget, the bounded collect past
	// 3, then the walk to its end.
	if n := searches.budgeted(); n != 2 {
		t.Errorf("%d pages walked within the budget, want 2 (no collect carried)", n)
	}
}

// TestRareNatureReadThroughItsIndex: the last 50 of the religious
// organizations' companies in key order are cooperatives (nature 2143),
// every other company a limited one (2062). A page of the activity's
// cooperatives reads them from companies_nature alone, never every
// company nor their rows: without the index the page walked the offices
// past its budget and its collect hashed every company (on the bench dump
// 120 ms a page, with the index 6-11), and with the nature alone indexed
// their rows were read from the heap (at ten times the dump 290 ms).
func TestRareNatureReadThroughItsIndex(t *testing.T) {
	d, snapshot := dbtest.Exclusive(t)
	dbtest.WithoutActivityFacts(t, d) // walked and collected, as a sparse search it does not answer
	dbtest.MustExec(t, d, `UPDATE cnpj.companies SET nature = CASE WHEN root::int % 20 = 0 AND root::int > 90099000 THEN '2143' ELSE '2062' END
		WHERE root >= '90000001'`)
	dbtest.MustExec(t, d, "VACUUM ANALYZE cnpj.companies")
	var want []string
	if err := d.Select(&want, `SELECT tax_id FROM cnpj.offices WHERE main_activity = '9492800'
		AND root IN (SELECT root FROM cnpj.companies WHERE nature = '2143') ORDER BY tax_id`); err != nil {
		t.Fatal(err)
	}
	if len(want) != 50 {
		t.Fatalf("%d cooperatives of the activity written, want 50", len(want))
	}
	store, searches := recordingStore(d)
	q := db.Search{Snapshot: snapshot, WalkBudget: 100 * time.Millisecond, Filters: []db.Filter{
		{Field: "mainActivity.id", Op: db.OpIn, Ints: []int{dbtest.ExclusiveActivity}},
		{Field: "company.nature.id", Op: db.OpIn, Ints: []int{2143}},
	}}
	if got := pageThrough(t, store.SearchOffices, withPageOf(q, 20)); !slices.Equal(got, want) {
		t.Fatalf("paged %v, want %v", got, want)
	}
	pages := 0
	for _, s := range searches.statements {
		// The page's query among the statement's settings.
		i := slices.IndexFunc(strings.Split(s, ";"), func(part string) bool {
			return strings.HasPrefix(strings.TrimSpace(part), "SELECT coalesce(array_agg")
		})
		if i < 0 {
			continue
		}
		pages++
		var plan []string
		if err := d.Select(&plan, "EXPLAIN "+strings.Split(s, ";")[i]); err != nil {
			t.Fatal(err)
		}
		// From the index alone: the nature's companies' rows were read
		// from the heap at ten times the bench dump, 290 ms for 40,000.
		if p := strings.Join(plan, "\n"); !strings.Contains(p, "Index Only Scan using companies_nature") {
			t.Errorf("a page of a rare nature's offices does not read them from companies_nature alone:\n%s", p)
		}
	}
	if pages != 3 {
		t.Errorf("%d pages read, want 3 (50 offices, 20 a page)", pages)
	}
}

// TestActivityFactsProbedFromTheirIndex: a main activity with a company's
// fact (a size, a nature, a Simples or SIMEI option) that few of its
// offices have (dbtest.LoadExclusiveFilters) is probed in
// office_lookups_activity, from that index alone, and its few offices are
// the page's keys: every page collected (or the count's, when it found
// them all), none walking the offices in key order, here without a walk
// budget to end it. A fact most of the activity's offices have is walked
// as before (the probe finds more than a collect's worth). Paging visits
// every match once, in key order, and a probed first page counts its
// matches exactly.
func TestActivityFactsProbedFromTheirIndex(t *testing.T) {
	d, snapshot := dbtest.Exclusive(t)
	store, searches := recordingStore(d)

	activity := db.Filter{Field: "mainActivity.id", Op: db.OpIn, Ints: []int{dbtest.ExclusiveActivity}}
	optant := func(field string, v bool) db.Filter { return db.Filter{Field: field, Op: db.OpEq, Bool: v} }
	code := func(field, op string, v int) db.Filter { return db.Filter{Field: field, Op: op, Ints: []int{v}} }
	inSimples := "root IN (SELECT root FROM cnpj.simples WHERE "
	inCompanies := "root IN (SELECT root FROM cnpj.companies WHERE "
	for _, c := range []probedSearch{
		{[]db.Filter{activity, code("company.size.id", db.OpIn, 1)}, inCompanies + "size = '01')", 6, true},
		{[]db.Filter{activity, code("status.id", db.OpIn, 2), optant("company.simples.optant", true)},
			"status = '02' AND " + inSimples + "simples_optant)", 4, true},
		{[]db.Filter{activity, optant("company.simei.optant", true)}, inSimples + "simei_optant)", 1, true},
		{[]db.Filter{activity, code("company.nature.id", db.OpIn, 2143)}, inCompanies + "nature = '2143')", 0, true},
		{[]db.Filter{activity, optant("company.simples.optant", false), code("company.size.id", db.OpIn, 5)},
			inCompanies + "size = '05') AND NOT " + inSimples + "simples_optant)", -1, false},
	} {
		var want []string
		if err := d.Select(&want, `SELECT tax_id FROM cnpj.offices WHERE main_activity = '9492800' AND `+c.where+` ORDER BY tax_id`); err != nil {
			t.Fatal(err)
		}
		if c.n >= 0 && len(want) != c.n || c.n < 0 && len(want) <= 1000 {
			t.Fatalf("%s: %d offices written, want %d (-1: more than the probe collects)", c.where, len(want), c.n)
		}
		searches.statements = nil
		q := db.Search{Filters: c.filters, Snapshot: snapshot} // no walk budget: a walk runs to its end
		limit := 2
		if c.n < 0 {
			limit = 1000
		}
		if got := pageThrough(t, store.SearchOffices, withPageOf(q, limit)); !slices.Equal(got, want) {
			t.Errorf("%s: paged %d offices %v, want %d", c.where, len(got), got[:min(len(got), 10)], len(want))
		}
		switch collected, pages := searches.collected(), searches.pagesRead(); {
		case c.probed && collected != pages:
			t.Errorf("%s: %d pages of %d collected, want every page read from the probe's keys, none walked", c.where, collected, pages)
		case !c.probed && (pages == 0 || collected > 0):
			t.Errorf("%s: %d pages of %d collected, want the offices walked in key order (most of the activity's have the facts)", c.where, collected, pages)
		}
		// The first page reads every probed match: it counts them, where
		// the count (up to one match: withPageOf) said an estimate.
		first, err := store.SearchOffices(context.Background(), withPageOf(q, limit))
		switch {
		case err != nil:
			t.Fatal(err)
		case c.probed && (first.Count != int64(len(want)) || !first.Exact):
			t.Errorf("%s: first page count %d (exact %v), want %d exactly", c.where, first.Count, first.Exact, len(want))
		}
		plans := searches.factsProbePlans(t, d)
		for _, p := range plans {
			if !strings.Contains(p, "Index Only Scan using office_lookups_activity") {
				t.Errorf("%s: the probe does not read office_lookups_activity alone:\n%s", c.where, p)
			}
		}
		if len(plans) == 0 {
			t.Errorf("%s: not probed", c.where)
		}
	}
}

// TestSimplesOfTheCompanyOnly: the Simples filters are the company's, as
// the records show them. An office whose company row is missing shows no
// Simples enrolment (the company's row folds it in), and no Simples filter
// matches it, its root's Simples row notwithstanding: walked in key order,
// probed from the activity's facts or from an enrolment date's index, the
// same offices.
func TestSimplesOfTheCompanyOnly(t *testing.T) {
	d, snapshot := dbtest.Exclusive(t)
	const orphan = "77000001000100"
	dbtest.MustExec(t, d, `INSERT INTO cnpj.offices (tax_id, root, head, main_activity, status) VALUES ($1, left($1, 8), true, '9492800', '02')`, orphan)
	dbtest.MustExec(t, d, `INSERT INTO cnpj.simples VALUES (left($1, 8), true, '2001-01-01', NULL, true, '2001-01-01', NULL)`, orphan)
	dbtest.Fold(t, d)
	for _, table := range []string{"offices", "simples", "office_lookups"} {
		dbtest.MustExec(t, d, "VACUUM ANALYZE cnpj."+table)
	}
	store := db.NewStore(d, db.StoreOptions{})

	activity := db.Filter{Field: "mainActivity.id", Op: db.OpIn, Ints: []int{dbtest.ExclusiveActivity}}
	active := db.Filter{Field: "status.id", Op: db.OpIn, Ints: []int{2}}
	optant := func(field string) db.Filter { return db.Filter{Field: field, Op: db.OpEq, Bool: true} }
	since := func(field string, year int) db.Filter { // the orphan's enrolment (2001) and the fixture's
		return db.Filter{Field: field, Op: db.OpLte, Date: time.Date(year, 6, 30, 0, 0, 0, 0, time.UTC)}
	}
	inCompanies := "root IN (SELECT root FROM cnpj.companies WHERE "
	for _, c := range []struct {
		filters []db.Filter
		where   string
	}{
		{[]db.Filter{activity, active}, "main_activity = '9492800' AND status = '02'"}, // the orphan is found
		{[]db.Filter{activity, active, optant("company.simples.optant")}, "main_activity = '9492800' AND status = '02' AND " + inCompanies + "simples_optant)"},
		{[]db.Filter{activity, optant("company.simei.optant")}, "main_activity = '9492800' AND " + inCompanies + "simei_optant)"},
		{[]db.Filter{active, optant("company.simples.optant"), optant("company.simei.optant")}, "status = '02' AND " + inCompanies + "simples_optant AND simei_optant)"},
		{[]db.Filter{since("company.simples.since", 2014)}, inCompanies + "simples_optant AND simples_since <= '2014-06-30')"},
		{[]db.Filter{since("company.simei.since", 2021)}, inCompanies + "simei_optant AND simei_since <= '2021-06-30')"},
	} {
		var want []string
		if err := d.Select(&want, `SELECT tax_id FROM cnpj.offices WHERE `+c.where+` ORDER BY tax_id`); err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Fatalf("%s: no office written", c.where)
		}
		q := withPageOf(db.Search{Filters: c.filters, Snapshot: snapshot}, 1000)
		if got := pageThrough(t, store.SearchOffices, q); !slices.Equal(got, want) {
			t.Errorf("%s: paged %d offices (the orphan among them: %v), want %d (%v)", c.where,
				len(got), slices.Contains(got, orphan), len(want), slices.Contains(want, orphan))
		}
	}
}

// TestActivitiesWithFactsProbed: activities.id.in (main or side) with a
// company's fact, of a code few offices have as a side activity, is
// probed as a main activity is: the main activity's offices from
// office_lookups_activity, the side activity's through
// offices_side_activities, each with its company's facts. Beside
// dbtest.LoadExclusiveFilters' offices, 100 others have the activity as a
// side one (two of their companies Simples optants), and so does one of
// the activity's own optants (found once).
func TestActivitiesWithFactsProbed(t *testing.T) {
	d, snapshot := dbtest.Exclusive(t)
	dbtest.MustExec(t, d, `
		UPDATE cnpj.offices SET side_activities = CASE
			WHEN root::int % 1000 = 1 OR root = '90099920' THEN ARRAY[lpad((root::int % 10)::text, 7, '0'), '9492800']
			ELSE ARRAY[lpad((root::int % 10)::text, 7, '0'), lpad((root::int % 3 + 10)::text, 7, '0')] END
		WHERE root LIKE '900%';
		UPDATE cnpj.simples SET simples_optant = true WHERE root IN ('90001001', '90050001');
		ALTER TABLE cnpj.offices ALTER side_activities SET STATISTICS 1`)
	dbtest.Fold(t, d)
	for _, table := range []string{"offices", "companies", "office_lookups"} {
		dbtest.MustExec(t, d, "VACUUM ANALYZE cnpj."+table)
	}
	var listed bool
	if err := d.Get(&listed, `SELECT coalesce('9492800' = ANY (most_common_elems::text::text[]), false) FROM pg_stats
		WHERE schemaname = 'cnpj' AND tablename = 'offices' AND attname = 'side_activities'`); err != nil || listed {
		t.Fatalf("the statistics list the side activity (%v): the test's premise does not hold", err)
	}
	store, searches := recordingStore(d)

	activities := db.Filter{Field: "activities.id", Op: db.OpIn, Ints: []int{dbtest.ExclusiveActivity}}
	code := func(field string, v int) db.Filter { return db.Filter{Field: field, Op: db.OpIn, Ints: []int{v}} }
	inCompanies := "root IN (SELECT root FROM cnpj.companies WHERE "
	for _, c := range []probedSearch{
		{[]db.Filter{activities, {Field: "company.simples.optant", Op: db.OpEq, Bool: true}}, inCompanies + "simples_optant)", 5 + 2, true},
		{[]db.Filter{activities, code("company.nature.id", 2143)}, inCompanies + "nature = '2143')", 0, true},
		{[]db.Filter{activities, code("company.size.id", 1), code("status.id", 8)}, inCompanies + "size = '01') AND status = '08'", -1, true},
		{[]db.Filter{activities, code("company.size.id", 5)}, inCompanies + "size = '05')", -1, false},
	} {
		var want []string
		if err := d.Select(&want, `SELECT tax_id FROM cnpj.offices WHERE (main_activity = '9492800' OR '9492800' = ANY (side_activities)) AND `+c.where+` ORDER BY tax_id`); err != nil {
			t.Fatal(err)
		}
		if c.n >= 0 && len(want) != c.n || c.n < 0 && (len(want) <= 2 || c.probed == (len(want) > 1000)) {
			t.Fatalf("%s: %d offices written, want %d (-1: more than a page, at most 1,000 when probed)", c.where, len(want), c.n)
		}
		searches.statements = nil
		limit := 2
		if c.n < 0 {
			limit = 100
		}
		got := pageThrough(t, store.SearchOffices, withPageOf(db.Search{Filters: c.filters, Snapshot: snapshot}, limit))
		if !slices.Equal(got, want) {
			t.Errorf("%s: paged %d offices %v, want %d", c.where, len(got), got[:min(len(got), 10)], len(want))
		}
		if collected, pages := searches.collected(), searches.pagesRead(); c.probed && collected != pages {
			t.Errorf("%s: %d pages of %d collected, want every page read from the probe's keys", c.where, collected, pages)
		}
		plans := searches.factsProbePlans(t, d)
		for _, p := range plans {
			for _, index := range []string{"Index Only Scan using office_lookups_activity", "offices_side_activities"} {
				if !strings.Contains(p, index) {
					t.Errorf("%s: the probe does not read %s:\n%s", c.where, index, p)
				}
			}
		}
		if len(plans) == 0 {
			t.Errorf("%s: not probed", c.where)
		}
	}
}
