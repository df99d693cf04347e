package db_test

import (
	"context"
	"slices"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// TestSearchValuesAreLiterals: a search's values travel inside its SQL as
// literals (where.arg). A value with quotes and a backslash finds the
// office whose street holds it; one written to end the literal and run a
// statement of its own, a NUL and bytes that are not UTF-8 find nothing
// and fail nothing, and the table they aimed at is still there.
func TestSearchValuesAreLiterals(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	const taxID = "90000001000100"
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.companies (root, name, name_words) VALUES ('90000001', 'EMPRESA', '{empresa}');
		INSERT INTO cnpj.offices (tax_id, root, head, street) VALUES ('`+taxID+`', '90000001', true, 'RUA D''AVILA \ 5')`)
	store := db.NewStore(d, db.StoreOptions{})
	for _, c := range []struct {
		value string
		want  []string
	}{
		{`D'AVILA \ 5`, []string{taxID}},
		{`'); DROP TABLE cnpj.offices; --`, nil},
		{`\'); DROP TABLE cnpj.offices; --`, nil},
		{"D'AVILA\x00", nil},
		{"D'AVILA \xff", nil},
	} {
		p, err := store.SearchOffices(context.Background(), db.Search{
			Filters:  []db.Filter{{Field: "address.street", Op: db.OpIn, Texts: []string{c.value}}},
			Snapshot: snapshot, Limit: 10, CountLimit: 1000, CountBudget: 1e9, CollectBelow: 1000,
		})
		if err != nil {
			t.Fatalf("%q: %v", c.value, err)
		}
		if !slices.Equal(p.Keys, c.want) {
			t.Fatalf("%q: keys %v, want %v", c.value, p.Keys, c.want)
		}
	}
	var n int
	if err := d.Get(&n, `SELECT count(*) FROM cnpj.offices WHERE tax_id = $1`, taxID); err != nil || n != 1 {
		t.Fatalf("the offices after the searches: %d rows of %s, %v", n, taxID, err)
	}
}
