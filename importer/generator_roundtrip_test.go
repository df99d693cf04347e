package importer_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/importer"
	"github.com/cnpjgraph/cnpjgraph/importer/generator"
	"github.com/cnpjgraph/cnpjgraph/loaders"
	"github.com/cnpjgraph/cnpjgraph/model"
	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/cnpjgraph/cnpjgraph/wire"
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

// TestOfficeAnswersOfAGeneratedDump reads every office of a generated dump
// through the service, the way the REST office lookup does (one statement),
// and checks its hand-written JSON equals encoding/json's, and that the
// batched read (GraphQL's loaders) gives the same office.
func TestOfficeAnswersOfAGeneratedDump(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dir := generated(t, generator.Options{Companies: 600, Seed: 11, Parts: 2})
	mustImport(t, d, importer.Options{Paths: []string{dir}})
	var taxIDs []string
	if err := d.Select(&taxIDs, `SELECT tax_id FROM cnpj.offices ORDER BY tax_id`); err != nil {
		t.Fatal(err)
	}
	store := db.NewStore(d, db.StoreOptions{})
	svc := service.New(store, service.Options{})
	single := loaders.With(context.Background(), loaders.NewWithWait(store, 0))
	batched := loaders.With(context.Background(), loaders.New(store))
	for _, id := range taxIDs {
		q := snapshotQuery(id)
		o, got := officeAnswer(single, t, svc, q)
		want, _ := json.Marshal(wire.OfficeOf(o))
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: AppendOffice\n%s\njson.Marshal\n%s", id, got, want)
		}
		b, err := svc.Office(batched, q)
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := json.Marshal(wire.OfficeOf(b)); !bytes.Equal(again, want) {
			t.Fatalf("%s: one statement and the loaders differ:\n%s\n%s", id, want, again)
		}
	}
}

// snapshotQuery is the office lookup of id, with its Simples, from the
// snapshot alone (strategy CACHE).
func snapshotQuery(id string) service.OfficeQuery {
	q := service.OfficeQuery{TaxID: cnpj.CNPJ(id), Simples: true, Cache: service.DefaultCache()}
	q.Cache.Strategy = service.Cache
	return q
}

// officeAnswer runs q and returns the office with its REST answer.
func officeAnswer(ctx context.Context, t *testing.T, svc *service.Service, q service.OfficeQuery) (model.Office, []byte) {
	t.Helper()
	o, err := svc.Office(ctx, q)
	if err != nil {
		t.Fatalf("%s: %v", q.TaxID, err)
	}
	b, err := wire.AppendOffice(nil, o)
	if err != nil {
		t.Fatal(err)
	}
	return o, b
}

// TestOfficeAnswersWithoutOfficeLookups: an import with OfficeLookups Off
// derives no office_lookups table, only a view of the join, and every
// office lookup answers the same as from the snapshot of the same dump
// with the table: at once, while the server's catalog still takes the
// live snapshot for the one with the table, and once it has seen the swap.
// An import that does as the live snapshot keeps the view, and one with
// OfficeLookups On makes the table again.
func TestOfficeAnswersWithoutOfficeLookups(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dir := generated(t, generator.Options{Companies: 200, Seed: 5})
	ctx := context.Background()
	store := db.NewStore(d, db.StoreOptions{CatalogInterval: time.Hour})
	svc := service.New(store, service.Options{})
	answers := func(taxIDs []string) map[string]string {
		t.Helper()
		out := make(map[string]string, len(taxIDs))
		for _, id := range taxIDs {
			_, b := officeAnswer(ctx, t, svc, snapshotQuery(id))
			out[id] = string(b)
		}
		return out
	}
	kind := func() string { // office_lookups' relkind: r a table, v a view
		t.Helper()
		var k string
		if err := d.Get(&k, `SELECT coalesce((SELECT relkind::text FROM pg_class WHERE oid = to_regclass('cnpj.office_lookups')), '')`); err != nil {
			t.Fatal(err)
		}
		return k
	}
	same := func(what string, want, got map[string]string) {
		t.Helper()
		for id, w := range want {
			if got[id] != w {
				t.Fatalf("%s: %s\nwith the table: %s\nwithout:        %s", what, id, w, got[id])
			}
		}
	}

	mustImport(t, d, importer.Options{Paths: []string{dir}})
	var taxIDs []string
	if err := d.Select(&taxIDs, `SELECT tax_id FROM cnpj.offices ORDER BY tax_id`); err != nil || len(taxIDs) == 0 {
		t.Fatalf("offices %v: %v", taxIDs, err)
	}
	if k := kind(); k != "r" {
		t.Fatalf("the default import: office_lookups of relkind %q, not a table", k)
	}
	with := answers(taxIDs)

	mustImport(t, d, importer.Options{Paths: []string{dir}, OfficeLookups: importer.Off})
	if k := kind(); k != "v" {
		t.Fatalf("OfficeLookups Off: office_lookups of relkind %q, not a view", k)
	}
	same("before the catalog saw the swap", with, answers(taxIDs))
	if _, err := store.Catalog.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	same("after", with, answers(taxIDs))

	for _, c := range []struct {
		choice importer.Choice
		kind   string
	}{{importer.AsLive, "v"}, {importer.On, "r"}, {importer.AsLive, "r"}} {
		mustImport(t, d, importer.Options{Paths: []string{dir}, OfficeLookups: c.choice})
		if k := kind(); k != c.kind {
			t.Errorf("OfficeLookups %d after the import before: office_lookups of relkind %q, want %q", c.choice, k, c.kind)
		}
	}
}
