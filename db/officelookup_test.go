package db_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// TestOfficeReadsWithoutTheirTable: the office reads (a lookup, a search
// page's records, the offices' loader) give the same offices from
// office_lookups and, for a snapshot imported before it, by the join.
func TestOfficeReadsWithoutTheirTable(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	store := db.NewStore(d, db.StoreOptions{})
	ctx := context.Background()
	var taxIDs []string
	if err := d.Select(&taxIDs, `SELECT tax_id FROM cnpj.office_lookups ORDER BY tax_id`); err != nil || len(taxIDs) < 2 {
		t.Fatalf("office_lookups %v: %v", taxIDs, err)
	}
	asked := append([]string{"00000000000000"}, taxIDs...) // one the snapshot lacks
	type reads struct {
		Lookups        []db.OfficeLookup
		Records        map[string]model.Office
		RecordsMembers map[string][]model.Member
		Offices        map[string]model.Office
	}
	read := func() (r reads) {
		t.Helper()
		for _, id := range asked {
			l, err := store.OfficeLookup(ctx, id, db.OfficeLookupOptions{Overlay: true, Simples: true, Sole: true})
			if err != nil {
				t.Fatal(err)
			}
			r.Lookups = append(r.Lookups, l)
		}
		records, members, err := store.SearchRecords(ctx, asked, nil)
		if err != nil {
			t.Fatal(err)
		}
		offices, err := store.Offices(ctx, asked)
		if err != nil {
			t.Fatal(err)
		}
		if len(records) != len(taxIDs) || len(offices) != len(taxIDs) {
			t.Fatalf("%d records, %d offices of %d", len(records), len(offices), len(taxIDs))
		}
		r.Records, r.RecordsMembers, r.Offices = records, members, offices
		return r
	}
	with := read()
	for i, l := range with.Lookups[1:] {
		if l.Office == nil || l.Office.TaxID != taxIDs[i] || l.Company == nil {
			t.Fatalf("lookup of %s: %+v", taxIDs[i], l)
		}
	}
	if with.Lookups[0].Office != nil {
		t.Fatalf("lookup of a missing tax id: %+v", with.Lookups[0].Office)
	}

	// Each read reads office_lookups, not the offices.
	dbtest.MustExec(t, d, `UPDATE cnpj.office_lookups SET alias = 'ONE ROW'`)
	marked := read()
	for i, id := range taxIDs {
		for what, alias := range map[string]*string{"lookup": marked.Lookups[i+1].Office.Alias,
			"search record": marked.Records[id].Alias, "office": marked.Offices[id].Alias} {
			if alias == nil || *alias != "ONE ROW" {
				t.Errorf("%s %s: alias %v, not office_lookups' row", what, id, alias)
			}
		}
	}

	// An import before office_lookups existed: its snapshot lacks the table.
	dbtest.MustExec(t, d, `DROP TABLE cnpj.office_lookups`)
	dbtest.NewLiveSnapshot(t, d, store)
	without := read()
	for _, c := range []struct {
		what          string
		with, without any
	}{
		{"lookups", with.Lookups, without.Lookups},
		{"search records", with.Records, without.Records},
		{"search records' members", with.RecordsMembers, without.RecordsMembers},
		{"offices", with.Offices, without.Offices},
	} {
		if !reflect.DeepEqual(c.with, c.without) {
			t.Errorf("%s\nfrom office_lookups: %+v\nby the join:        %+v", c.what, c.with, c.without)
		}
	}
}
