package db_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// TestNameWalkPagesEveryMatch: names.in alone walks the first 2,000
// offices for the alias branch and reads the aliases after them only when
// the walked stretch holds less than a page of the whole search, the
// company names' keys in it counted too. Here each page's walk holds five
// company names and five aliases of eleven wanted, and an alias after the
// walk comes before the company names after it: a page that counted the
// company names past the walk as in it would skip that alias. Paging
// through the search visits every match once, in key order.
func TestNameWalkPagesEveryMatch(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	// 3,000 companies after the fixture's, each with its head office.
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.companies (root, name, name_words)
		SELECT r, 'EMPRESA ' || g, CASE WHEN g <= 5 OR g > 2800 THEN '{empresa,zzalfa}'::text[] ELSE '{empresa}' END
		FROM generate_series(1, 3000) g, lpad((90000000 + g)::text, 8, '0') r;
		INSERT INTO cnpj.offices (tax_id, root, head, alias, alias_words)
		SELECT r || '000100', r, true,
			CASE WHEN g BETWEEN 10 AND 14 OR g = 2300 THEN 'LOJA ZZALFA' END,
			CASE WHEN g BETWEEN 10 AND 14 OR g = 2300 THEN '{loja,zzalfa}'::text[] END
		FROM generate_series(1, 3000) g, lpad((90000000 + g)::text, 8, '0') r`)
	dbtest.MustExec(t, d, `VACUUM ANALYZE cnpj.companies, cnpj.offices`)
	var want []string
	if err := d.Select(&want, `SELECT o.tax_id FROM cnpj.offices o JOIN cnpj.companies c ON c.root = o.root
		WHERE c.name_words @> '{zzalfa}' OR o.alias_words @> '{zzalfa}' ORDER BY o.tax_id`); err != nil {
		t.Fatal(err)
	}
	if len(want) != 5+5+1+200 {
		t.Fatalf("%d matches written, want 211", len(want))
	}
	store := db.NewStore(d, db.StoreOptions{})
	q := db.Search{
		Filters:  []db.Filter{{Field: "names", Op: db.OpIn, Words: [][]string{{"zzalfa"}}}},
		Limit:    10,
		Snapshot: snapshot,
		// Not counted and never collected: every page is the walk's.
		CountLimit: 1, CountBudget: time.Second, CollectBelow: 0,
	}
	var got []string
	for range 30 {
		p, err := store.SearchOffices(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Keys...)
		if !p.HasNext {
			break
		}
		q.After = p.Keys[len(p.Keys)-1]
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged %d keys, want %d; first difference at %d", len(got), len(want), firstDifference(got, want))
	}
}

func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestStateWalkPagesEveryMatch: names.in with one state walks the state's
// offices in key order, checking each office's alias and its company's
// name, and after stateWalkLength (5,000) offices without a page collects
// the matches after them. Here the word is in the first 400 companies'
// names (each also has a branch in another state) and in five aliases
// after them; then come 5,600 offices of the state without it, and after
// them aliases and company names interleaved. A quarter of the offices are
// in another state. Paging through the search visits every match once, in
// key order.
func TestStateWalkPagesEveryMatch(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.companies (root, name, name_words)
		SELECT r, 'EMPRESA ' || g, CASE WHEN g <= 400 OR g BETWEEN 8001 AND 8020 THEN '{empresa,zzbeta}'::text[] ELSE '{empresa}' END
		FROM generate_series(1, 9000) g, lpad((90000000 + g)::text, 8, '0') r;
		INSERT INTO cnpj.offices (tax_id, root, head, state, alias, alias_words)
		SELECT r || '000100', r, true, CASE WHEN g % 4 = 0 THEN 'RJ' ELSE 'AC' END,
			CASE WHEN g BETWEEN 401 AND 405 OR g IN (7990, 8010) THEN 'LOJA ZZBETA' END,
			CASE WHEN g BETWEEN 401 AND 405 OR g IN (7990, 8010) THEN '{loja,zzbeta}'::text[] END
		FROM generate_series(1, 9000) g, lpad((90000000 + g)::text, 8, '0') r;
		INSERT INTO cnpj.offices (tax_id, root, head, state)
		SELECT r || '000200', r, false, 'SP' FROM generate_series(1, 400) g, lpad((90000000 + g)::text, 8, '0') r`)
	dbtest.MustExec(t, d, `VACUUM ANALYZE cnpj.companies, cnpj.offices`)
	var want []string
	if err := d.Select(&want, `SELECT o.tax_id FROM cnpj.offices o JOIN cnpj.companies c ON c.root = o.root
		WHERE o.state = 'AC' AND (c.name_words @> '{zzbeta}' OR o.alias_words @> '{zzbeta}') ORDER BY o.tax_id`); err != nil {
		t.Fatal(err)
	}
	if len(want) != 300+4+1+15 { // 8010 has the word in both
		t.Fatalf("%d matches written, want 320", len(want))
	}
	store := db.NewStore(d, db.StoreOptions{})
	codes, err := store.Catalog.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !codes.StateWalkWords([][]string{{"zzbeta"}}) { // 420 companies of 9,000: over sqrt(10 × 9,000)
		t.Fatal("the statistics say collect zzbeta, not walk")
	}
	q := db.Search{
		Filters: []db.Filter{
			{Field: "names", Op: db.OpIn, Words: [][]string{{"zzbeta"}}},
			{Field: "address.state", Op: db.OpIn, Texts: []string{"AC"}},
		},
		Limit:    10,
		Snapshot: snapshot,
		// Not counted and never collected: every page is the walk's.
		CountLimit: 1, CountBudget: time.Second, CollectBelow: 0,
	}
	var got []string
	for range 40 {
		p, err := store.SearchOffices(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Keys...)
		if !p.HasNext {
			break
		}
		q.After = p.Keys[len(p.Keys)-1]
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged %d keys, want %d; first difference at %d", len(got), len(want), firstDifference(got, want))
	}
}
