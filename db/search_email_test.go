package db_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// TestEmailOwnershipAsTheRuleSays: emails.ownership.in, each owner and
// pairs of them, finds exactly the offices whose address EmailOwnership
// gives that owner: domains in any case, accountants' ("contab",
// "contador", which the generated dumps lack) and free providers', an
// address without a domain; none without an e-mail.
func TestEmailOwnershipAsTheRuleSays(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	emails := []string{"ana@gmail.com", "BETO@GMAIL.COM", "caio@hotmail.com.br", "fiscal@escritoriocontabil.com.br",
		"x@CONTADORSILVA.COM", "vendas@empresa.com.br", "sem-dominio", "y@contab.io", ""}
	for i, e := range emails {
		root := "9100000" + string(rune('0'+i))
		dbtest.MustExec(t, d, `INSERT INTO cnpj.offices (tax_id, root, head, email) VALUES ($1, $2, true, NULLIF($3, ''))`,
			root+"000100", root, e)
	}
	dbtest.MustExec(t, d, "ANALYZE cnpj.offices")
	var rows []struct {
		TaxID string `db:"tax_id"`
		Email string `db:"email"`
	}
	if err := d.Select(&rows, `SELECT tax_id, email FROM cnpj.offices WHERE email IS NOT NULL ORDER BY tax_id`); err != nil {
		t.Fatal(err)
	}
	store := db.NewStore(d, db.StoreOptions{})
	for _, owners := range [][]string{{"PERSONAL"}, {"ACCOUNTING"}, {"CORPORATE"}, {"PERSONAL", "ACCOUNTING"}, {"CORPORATE", "ACCOUNTING"}} {
		var want []string
		for _, r := range rows {
			_, domain, _ := strings.Cut(r.Email, "@")
			if slices.Contains(owners, db.EmailOwnership(domain)) {
				want = append(want, r.TaxID)
			}
		}
		if len(want) == 0 {
			t.Fatalf("%v: no office written with such an address", owners)
		}
		q := db.Search{Snapshot: snapshot, Filters: []db.Filter{{Field: "emails.ownership", Op: db.OpIn, Texts: owners}}}
		if got := pageThrough(t, store.SearchOffices, withPageOf(q, 3)); !slices.Equal(got, want) {
			t.Errorf("%v: %v, want %v", owners, got, want)
		}
	}
}
