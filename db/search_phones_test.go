package db_test

import (
	"slices"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// TestPhoneNumberPagesFromItsIndexes: 30,000 offices with one or two
// phones; a number shared by four offices, as the first phone of two and
// the second of two (one office has it twice), and a number none has.
// phones.number.in pages every match once, in key order, each page in at
// most 100 buffers (offices_phone1, offices_phone2; a walk of the offices
// testing each read thousands), and phones.number.nin is every other
// office, those without phones included.
func TestPhoneNumberPagesFromItsIndexes(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.offices (tax_id, root, head, phones)
		SELECT r || '000100', r, true, CASE
			WHEN g IN (101, 20202) THEN ARRAY['11', '912345678']
			WHEN g = 3003 THEN ARRAY['21', '30303030', '11', '912345678']
			WHEN g = 29999 THEN ARRAY['11', '912345678', '11', '912345678']
			WHEN g % 10 = 0 THEN NULL
			WHEN g % 3 = 0 THEN ARRAY['11', (30000000 + g)::text, '21', (40000000 + g)::text]
			ELSE ARRAY['11', (900000000 + g)::text] END
		FROM generate_series(1, 30000) g, lpad((90000000 + g)::text, 8, '0') r
		ORDER BY (g * 7919) % 30011`)
	dbtest.MustExec(t, d, `VACUUM ANALYZE cnpj.offices`)
	store, pages := explainedStore(t, d)
	for _, c := range []struct {
		number, where string
		n             int
	}{
		{"912345678", `'912345678' = ANY (phones)`, 4},
		{"912345679", `'912345679' = ANY (phones)`, 0},
		{"30303030", `'30303030' = ANY (phones)`, 1},
	} {
		q := db.Search{Filters: []db.Filter{{Field: "phones.number", Op: db.OpIn, Texts: []string{c.number}}}, Snapshot: snapshot}
		pagesInFewBuffers(t, d, store, pages, q, c.where, c.n)
	}
	// nin: every other office, in pages of 1,000.
	var want []string
	if err := d.Select(&want, `SELECT tax_id FROM cnpj.offices WHERE NOT coalesce('912345678' = ANY (phones), false) ORDER BY tax_id`); err != nil {
		t.Fatal(err)
	}
	q := db.Search{Filters: []db.Filter{{Field: "phones.number", Op: db.OpNin, Texts: []string{"912345678"}}}, Snapshot: snapshot,
		Limit: 1000, CountLimit: 1, CountBudget: time.Second}
	if got := pageThrough(t, store.SearchOffices, q); !slices.Equal(got, want) {
		t.Errorf("nin: paged %d keys, want %d; first difference at %d", len(got), len(want), firstDifference(got, want))
	}
}
