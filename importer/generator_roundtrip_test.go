package importer_test

import (
	"database/sql"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/importer"
	"github.com/cnpjgraph/cnpjgraph/importer/generator"
)

// TestGeneratorRoundTrip imports a generated dump (TABMUN.CSV and
// paises-m49.csv found beside the ZIPs) and compares counts and the
// generator's sample records with the database.
func TestGeneratorRoundTrip(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dir := t.TempDir()
	sum, err := generator.Generate(generator.Options{Companies: 3000, Out: dir, Seed: 7, Parts: 3})
	if err != nil {
		t.Fatal(err)
	}
	snap := mustImport(t, d, importer.Options{Paths: []string{dir}})
	var counts map[string]int
	if err := json.Unmarshal(snap.RowCounts, &counts); err != nil {
		t.Fatal(err)
	}
	if counts["companies"] != sum.Companies || counts["offices"] != sum.Offices || counts["members"] != sum.Members || counts["simples"] != sum.Simples {
		t.Errorf("counts %v, generated %+v", counts, sum)
	}
	var rejected struct{ Total int }
	_ = json.Unmarshal(snap.RejectedRows, &rejected)
	if rejected.Total != 0 {
		t.Errorf("rejected %s", snap.RejectedRows)
	}
	if len(sum.Samples) < 5 {
		t.Fatalf("only %d samples", len(sum.Samples))
	}
	for _, s := range sum.Samples {
		var got struct {
			Root, Name, Status, Muni, Nature, Street string
			Head                                     bool
			Alias, IBGE, Equity                      sql.NullString
			Members                                  int
			Optant                                   sql.NullBool
		}
		err := d.QueryRow(`SELECT o.root, c.name, o.status, o.municipality, c.nature, coalesce(o.street, ''), o.head, o.alias,
				m.ibge::text, c.equity::text, (SELECT count(*) FROM cnpj.members x WHERE x.root = o.root), s.simples_optant
			FROM cnpj.offices o JOIN cnpj.companies c USING (root)
			LEFT JOIN cnpj.municipalities m ON m.code = o.municipality LEFT JOIN cnpj.simples s ON s.root = o.root
			WHERE o.tax_id = $1`, s.TaxID).Scan(&got.Root, &got.Name, &got.Status, &got.Muni, &got.Nature, &got.Street, &got.Head,
			&got.Alias, &got.IBGE, &got.Equity, &got.Members, &got.Optant)
		if err != nil {
			t.Errorf("%s (%s): %v", s.TaxID, s.Why, err)
			continue
		}
		street := strings.TrimSpace(strings.TrimSpace(s.Office[13]) + " " + strings.TrimSpace(s.Office[14]))
		if got.Root != s.Root || got.Name != s.Name || got.Status != s.Status || got.Muni != s.Municipality || got.Head != s.Head ||
			got.Alias.String != s.Alias || got.IBGE.String != s.IBGE || got.Nature != s.Company[2] || got.Street != street ||
			got.Equity.String != strings.Replace(s.Company[4], ",", ".", 1) || got.Members != len(s.Members) ||
			got.Optant.Valid != (s.Simples != nil) || (s.Simples != nil && got.Optant.Bool != (s.Simples[1] == "S")) {
			t.Errorf("%s (%s):\n got %+v\nwant %+v", s.TaxID, s.Why, got, s)
		}
	}
}
