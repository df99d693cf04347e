package db_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// TestRareBoundsPagesFromTheirIndexes: 100,000 offices, each of its own
// company, founded, changing status and enrolling in the Simples across
// 1990-2020, a few of them far outside that (the oldest, the richest,
// last month's changes) and none further. A bound only those few fall in
// pages them once each, in key order, every page in at most 100 buffers
// (offices_founded, companies_equity, simples_since...: without them a
// page walked the offices in key order testing each, thousands of
// buffers for 11 matches or none, and the statistics expected hundreds).
// A snapshot imported before the indexes is searched without the probe
// (which would sort the table), and pages the same offices.
func TestRareBoundsPagesFromTheirIndexes(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.offices (tax_id, root, head, founded, status_date, special_date)
		SELECT r || '000100', r, true,
			CASE WHEN g IN (77, 15015, 29029) THEN date '1901-01-01' + g % 1000 ELSE date '1990-01-01' + g % 11000 END,
			CASE WHEN g IN (88, 16016) THEN date '2026-10-15' ELSE date '1990-01-01' + g % 11000 END,
			CASE WHEN g IN (99, 17017) THEN date '2026-11-02' WHEN g % 50 = 0 THEN date '2000-01-01' + g % 5000 END
		FROM generate_series(1, 100000) g, lpad((90000000 + g)::text, 8, '0') r
		ORDER BY (g * 7919) % 100003;
		INSERT INTO cnpj.companies (root, name, equity)
		SELECT r, 'EMPRESA ' || g, CASE WHEN g IN (111, 18018, 28028) THEN 250000000000 ELSE g * 1000 END
		FROM generate_series(1, 100000) g, lpad((90000000 + g)::text, 8, '0') r;
		INSERT INTO cnpj.simples (root, simples_optant, simples_since, simei_optant, simei_since)
		SELECT r, g % 3 <> 0,
			CASE WHEN g IN (121, 19019) THEN date '2026-10-01' ELSE date '2007-07-01' + g % 6000 END,
			g % 5 = 0,
			CASE WHEN g = 25 THEN date '1985-06-01' ELSE date '2009-07-01' + g % 5000 END
		FROM generate_series(1, 100000) g, lpad((90000000 + g)::text, 8, '0') r`)
	for _, table := range []string{"offices", "companies", "simples"} {
		dbtest.MustExec(t, d, "VACUUM ANALYZE cnpj."+table)
	}
	store, pages := explainedStore(t, d)
	date := func(s string) time.Time {
		v, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	company := func(cond string) string { return "root IN (SELECT root FROM cnpj.companies WHERE " + cond + ")" }
	simples := func(cond string) string { return "root IN (SELECT root FROM cnpj.simples WHERE " + cond + ")" }
	for _, c := range []struct {
		filters []db.Filter
		where   string
		n       int
	}{
		{[]db.Filter{{Field: "founded", Op: db.OpLte, Date: date("1905-01-01")}}, "founded <= '1905-01-01'", 3},
		{[]db.Filter{{Field: "founded", Op: db.OpLte, Date: date("1800-01-01")}}, "founded <= '1800-01-01'", 0},
		{[]db.Filter{{Field: "statusDate", Op: db.OpGte, Date: date("2026-10-01")}}, "status_date >= '2026-10-01'", 2},
		{[]db.Filter{{Field: "specialDate", Op: db.OpGte, Date: date("2026-11-01")}}, "special_date >= '2026-11-01'", 2},
		{[]db.Filter{{Field: "specialDate", Op: db.OpGte, Date: date("2027-01-01")}}, "special_date >= '2027-01-01'", 0},
		{[]db.Filter{{Field: "company.equity", Op: db.OpGte, Number: "100000000000"}}, company("equity >= 100000000000"), 3},
		{[]db.Filter{{Field: "company.equity", Op: db.OpGte, Number: "1000000000000"}}, company("equity >= 1000000000000"), 0},
		{[]db.Filter{{Field: "company.simples.since", Op: db.OpGte, Date: date("2026-01-01")}},
			simples("simples_optant AND simples_since >= '2026-01-01'"), 2},
		{[]db.Filter{{Field: "company.simei.since", Op: db.OpLte, Date: date("1990-01-01")}},
			simples("simei_optant AND simei_since <= '1990-01-01'"), 1},
		// Both bounds of a column are one range (either alone is too large
		// to collect, both are 37 offices); a range too large to
		// collect (the status dates) leaves the search to PostgreSQL.
		{[]db.Filter{{Field: "founded", Op: db.OpGte, Date: date("2000-01-01")}, {Field: "founded", Op: db.OpLte, Date: date("2000-01-04")}},
			"founded BETWEEN '2000-01-01' AND '2000-01-04'", 37},
		{[]db.Filter{{Field: "founded", Op: db.OpLte, Date: date("1905-01-01")}, {Field: "statusDate", Op: db.OpLte, Date: date("2000-01-01")}},
			"founded <= '1905-01-01' AND status_date <= '2000-01-01'", 1},
	} {
		q := db.Search{Filters: c.filters, Snapshot: snapshot}
		pagesInFewBuffers(t, d, store, pages, q, c.where, c.n)
	}
	if pages.probes == 0 {
		t.Fatal("no probe of a bound's range ran")
	}

	dbtest.MustExec(t, d, `DROP INDEX cnpj.offices_founded`)
	old, unprobed := explainedStore(t, d)
	q := db.Search{Filters: []db.Filter{{Field: "founded", Op: db.OpLte, Date: date("1905-01-01")}}, Snapshot: snapshot}
	var want []string
	if err := d.Select(&want, `SELECT tax_id FROM cnpj.offices WHERE founded <= '1905-01-01' ORDER BY tax_id`); err != nil {
		t.Fatal(err)
	}
	if got := pageAll(t, old, q); !slices.Equal(got, want) || unprobed.probes != 0 {
		t.Errorf("without the indexes: paged %v after %d probes, want %v and none", got, unprobed.probes, want)
	}
}
