package db_test

import (
	"context"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// TestCatalogFollowsLiveSnapshot: a new live snapshot brings its code
// tables and reference date, without a restart.
func TestCatalogFollowsLiveSnapshot(t *testing.T) {
	d, _ := dbtest.New(t)
	first := dbtest.LoadFixture(t, d)
	var switches [][2]int64 // OnSnapshot's (from, to)
	store := db.NewStore(d, db.StoreOptions{OnSnapshot: func(from, to db.Snapshot) {
		switches = append(switches, [2]int64{from.ID, to.ID})
	}})
	ctx := context.Background()
	codes, err := store.Catalog.Current(ctx)
	if err != nil || codes.Snapshot.ID != first {
		t.Fatalf("%v %v", codes, err)
	}
	if _, err := store.Catalog.Refresh(ctx); err != nil || len(switches) != 0 {
		t.Fatalf("the first snapshot loaded, then checked again: OnSnapshot told %v (%v), want nothing", switches, err)
	}
	offices, err := store.Offices(ctx, []string{dbtest.SerproBranch})
	if err != nil || offices[dbtest.SerproBranch].MainActivity.Text != "Consultoria em tecnologia da informação" {
		t.Fatalf("%v %v", offices, err)
	}

	// An import swaps in new data: here, a renamed activity and a new date.
	dbtest.MustExec(t, d, `UPDATE cnpj.activities SET text = 'Consultoria em TI' WHERE code = '6204000'`)
	dbtest.MustExec(t, d, `UPDATE snapshots SET state = 'retired'`)
	var second int64
	if err := d.Get(&second, `INSERT INTO snapshots (state, dump_month, reference_date) VALUES ('live','2026-01','2026-01-11') RETURNING id`); err != nil {
		t.Fatal(err)
	}
	if codes, _ := store.Catalog.Current(ctx); codes.Snapshot.ID != first {
		t.Fatalf("checked again before the interval")
	}
	codes, err = store.Catalog.Refresh(ctx)
	if err != nil || codes.Snapshot.ID != second || codes.Updated().Format("2006-01-02") != "2026-01-11" {
		t.Fatalf("after refresh: %+v %v", codes.Snapshot, err)
	}
	offices, _ = store.Offices(ctx, []string{dbtest.SerproBranch})
	if o := offices[dbtest.SerproBranch]; o.MainActivity.Text != "Consultoria em TI" || o.Updated.Format("2006-01-02") != "2026-01-11" {
		t.Errorf("office after the swap: %+v", o)
	}
	if len(switches) != 1 || switches[0] != [2]int64{first, second} {
		t.Errorf("OnSnapshot told %v, want once (%d, %d)", switches, first, second)
	}
}

func TestDecimal(t *testing.T) {
	for in, want := range map[string]string{"1061004829.23": "1061004829.23", "0.00": "0", "250000.50": "250000.5",
		"100": "100", "": "0", "10.0": "10", "-0.00": "0"} {
		s := in
		if got := db.Decimal(&s); got != want {
			t.Errorf("Decimal(%q) = %q, want %q", in, got, want)
		}
	}
	if db.Decimal(nil) != "0" {
		t.Error("null equity")
	}
}

// TestCatalogReadsWordStatistics: the codes carry the companies' name
// words as ANALYZE counted them, so a search knows a rare word from a
// common one; before any ANALYZE, it knows neither and leaves the plan to
// PostgreSQL.
func TestCatalogReadsWordStatistics(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	dbtest.MustExec(t, d, `INSERT INTO cnpj.companies (root, name, name_words)
		SELECT lpad((90000000 + g)::text, 8, '0'), 'X', CASE WHEN g <= 5 THEN '{comum,raro}'::text[] ELSE '{comum}' END
		FROM generate_series(1, 3000) g`)
	ctx := context.Background()
	// The codes are read once per live snapshot: an import analyzes its
	// tables before the swap. Here each catalog reads the table as it is.
	codes, err := db.NewStore(d, db.StoreOptions{}).Catalog.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if codes.RareCompanyWords([][]string{{"raro"}}) {
		t.Fatal("before ANALYZE: a word is rare")
	}
	dbtest.MustExec(t, d, "ANALYZE cnpj.companies")
	if codes, err = db.NewStore(d, db.StoreOptions{}).Catalog.Current(ctx); err != nil {
		t.Fatal(err)
	}
	if !codes.RareCompanyWords([][]string{{"raro"}}) || codes.RareCompanyWords([][]string{{"comum"}}) {
		t.Fatalf("after ANALYZE: raro rare %v (want true), comum rare %v (want false)",
			codes.RareCompanyWords([][]string{{"raro"}}), codes.RareCompanyWords([][]string{{"comum"}}))
	}
}
