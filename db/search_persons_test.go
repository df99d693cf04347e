package db_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// TestPersonCountryPagesFromItsIndex: 60,000 persons, one in a hundred
// abroad in one country, three in another and none in a third.
// country.id.in of the rare and the absent country pages its persons once,
// in id order, every page in at most 100 buffers (persons_country: without
// it a page walked the persons in id order testing each, all of them for
// a country none is from).
func TestPersonCountryPagesFromItsIndex(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	dbtest.MustExec(t, d, `INSERT INTO cnpj.countries VALUES ('063', 'ARGENTINA', 32)`)
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.persons (id, type, name, country)
		SELECT 'T' || lpad(g::text, 9, '0'), CASE WHEN country IS NULL THEN 'NATURAL' ELSE 'FOREIGN' END, 'PESSOA ' || g, country
		FROM generate_series(1, 60000) g,
			LATERAL (SELECT CASE WHEN g IN (7, 30007, 59999) THEN '105' WHEN g % 100 = 0 THEN '249' END AS country) c
		ORDER BY (g * 7919) % 60013`)
	dbtest.MustExec(t, d, `VACUUM ANALYZE cnpj.persons`)
	store, pages := explainedStore(t, d)
	for _, c := range []struct {
		m49     int
		country string
		n       int
	}{{76, "105", 3}, {32, "063", 0}} {
		var want []string
		if err := d.Select(&want, `SELECT id FROM cnpj.persons WHERE country = $1 ORDER BY id`, c.country); err != nil {
			t.Fatal(err)
		}
		if len(want) != c.n {
			t.Fatalf("country %s: %d persons written, want %d", c.country, len(want), c.n)
		}
		pages.buffers = 0
		q := db.Search{Filters: []db.Filter{{Field: "country.id", Op: db.OpIn, Ints: []int{c.m49}}}, Snapshot: snapshot,
			Limit: 2, CountLimit: 1, CountBudget: time.Second}
		if got := pageThrough(t, store.SearchPersons, q); !slices.Equal(got, want) {
			t.Errorf("country %d: paged %v, want %v", c.m49, got, want)
		}
		if pages.buffers > 100 {
			t.Errorf("country %d: a page read %d buffers, want at most 100", c.m49, pages.buffers)
		}
	}
}
