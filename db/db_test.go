package db_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

func TestMigrateTwice(t *testing.T) {
	d, _ := dbtest.New(t)
	if err := db.Migrate(context.Background(), d); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	var n int
	if err := d.Get(&n, "SELECT count(*) FROM snapshots"); err != nil || n != 0 {
		t.Fatalf("snapshots: %d, %v", n, err)
	}
}

// TestSearchTokensUnlogged: page tokens skip the WAL (migration 00004), so
// minting one per page does not wait for a flush.
func TestSearchTokensUnlogged(t *testing.T) {
	d, _ := dbtest.New(t)
	var persistence string
	if err := d.Get(&persistence, "SELECT relpersistence FROM pg_class WHERE oid = 'search_tokens'::regclass"); err != nil {
		t.Fatal(err)
	}
	if persistence != "u" {
		t.Fatalf("search_tokens relpersistence = %q, want u (unlogged)", persistence)
	}
}

func TestSnapshotDDL(t *testing.T) {
	d, _ := dbtest.New(t)
	for _, q := range []string{"CREATE SCHEMA s; SET search_path TO s", db.SnapshotTables, db.SnapshotIndexes} {
		if _, err := d.Exec(q); err != nil {
			t.Fatalf("%v", err)
		}
	}
}

// TestEmailDomainPageReadsItsOffices: one company's offices share an e-mail
// domain and sit together at the end of key order. A domain's first page
// reads them through offices_email_domain, in key order, and not by walking
// every office before them (which PostgreSQL, expecting the domain's
// offices spread evenly, did: 380,000 offices for one domain of 1,845).
// Counted in buffers, not time.
func TestEmailDomainPageReadsItsOffices(t *testing.T) {
	d, _ := dbtest.New(t)
	for _, q := range []string{"CREATE SCHEMA s; SET search_path TO s", db.SnapshotTables, `
		INSERT INTO offices (tax_id, root, head, email)
		SELECT lpad(g::text, 8, '0') || '000100', lpad(g::text, 8, '0'), true, 'x@d' || (g % 5000) || '.com.br'
		FROM generate_series(1, 100000) g;
		INSERT INTO offices (tax_id, root, head, email)
		SELECT '99999999' || lpad(g::text, 4, '0') || '00', '99999999', false, 'y@clustered.com.br'
		FROM generate_series(1, 500) g`,
		db.SnapshotIndexes, "VACUUM ANALYZE offices"} {
		if _, err := d.Exec(q); err != nil {
			t.Fatalf("%v", err)
		}
	}
	rows, buffers, plan := explainPage(t, d, `SELECT o.tax_id FROM s.offices o
		WHERE lower(split_part(o.email, '@', 2)) = 'clustered.com.br' ORDER BY o.root, o.tax_id LIMIT 11`)
	if rows != 11 || buffers > 50 {
		t.Fatalf("the page read %d buffers for %d rows, want 11 rows in under 50 buffers:\n%s", buffers, rows, plan)
	}
}

// explainPage runs a page's query under EXPLAIN ANALYZE: the rows it gave,
// the buffers it read (shared hits and reads), and the plan to show.
func explainPage(t *testing.T, d *sqlx.DB, query string) (rows, buffers int64, plan string) {
	t.Helper()
	if err := d.Get(&plan, `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) `+query); err != nil {
		t.Fatal(err)
	}
	var explained []struct {
		Plan struct {
			Rows int64 `json:"Actual Rows"`
			Hit  int64 `json:"Shared Hit Blocks"`
			Read int64 `json:"Shared Read Blocks"`
		}
	}
	if err := json.Unmarshal([]byte(plan), &explained); err != nil || len(explained) == 0 {
		t.Fatalf("plan %s: %v", plan, err)
	}
	p := explained[0].Plan
	return p.Rows, p.Hit + p.Read, plan
}

// TestActivityInPlacePageReadsItsOffices: a main activity within a
// municipality, and within a state, their offices spread over the table
// (loaded in no key order, as the dump's are). A first page reads its 11
// in key order from the index alone (offices_municipality,
// offices_activity), and the state pair's count (at most the count's
// limit of matches, unordered) reads the pair's range of the index: on
// (municipality, main_activity) PostgreSQL walked every office in key
// order for a page, or read all of the pair's and sorted them; on
// (main_activity) it ANDed the activity's bitmap with the state's. Counted
// in buffers, not time.
func TestActivityInPlacePageReadsItsOffices(t *testing.T) {
	d, _ := dbtest.New(t)
	for _, q := range []string{"CREATE SCHEMA s; SET search_path TO s", db.SnapshotTables, `
		INSERT INTO offices (tax_id, root, head, municipality, state, main_activity)
		SELECT lpad(g::text, 8, '0') || '000100', lpad(g::text, 8, '0'), true,
			CASE WHEN g % 10 = 0 THEN '7107' ELSE lpad((g % 97)::text, 4, '0') END,
			CASE WHEN g % 7 = 0 THEN 'AC' ELSE 'SP' END,
			CASE WHEN g % 30 = 0 THEN '4781400' ELSE lpad((g % 53)::text, 7, '0') END
		FROM generate_series(1, 100000) g ORDER BY (g * 7919) % 100003`,
		db.SnapshotIndexes, "VACUUM ANALYZE offices"} {
		if _, err := d.Exec(q); err != nil {
			t.Fatalf("%v", err)
		}
	}
	for _, c := range []struct {
		name, query string
		rows        int64
	}{
		{"municipality page", `SELECT o.tax_id FROM s.offices o
			WHERE o.municipality = '7107' AND o.main_activity = '4781400' ORDER BY o.root, o.tax_id LIMIT 11`, 11},
		{"state page", `SELECT o.tax_id FROM s.offices o
			WHERE o.state = 'AC' AND o.main_activity = '4781400' ORDER BY o.root, o.tax_id LIMIT 11`, 11},
		{"state count", `SELECT count(*) FROM (SELECT o.tax_id FROM s.offices o
			WHERE o.state = 'AC' AND o.main_activity = '4781400' LIMIT 1001) u`, 1},
	} {
		rows, buffers, plan := explainPage(t, d, c.query)
		if rows != c.rows || buffers > 20 {
			t.Errorf("%s: read %d buffers for %d rows, want %d rows in at most 20 buffers:\n%s", c.name, buffers, rows, c.rows, plan)
		}
	}
}

// TestEmailAddressPageReadsItsOffices: offices sharing an e-mail address
// (five each, spread over a table loaded in no key order), and an address
// none has. A page of either reads the address's offices in key order
// from offices_email, in a few buffers; without it PostgreSQL walked the
// offices in key order testing each, all of them for the absent address.
func TestEmailAddressPageReadsItsOffices(t *testing.T) {
	d, _ := dbtest.New(t)
	for _, q := range []string{"CREATE SCHEMA s; SET search_path TO s", db.SnapshotTables, `
		INSERT INTO offices (tax_id, root, head, email)
		SELECT lpad(g::text, 8, '0') || '000100', lpad(g::text, 8, '0'), true,
			CASE WHEN g % 3 <> 0 THEN 'contato' || (g % 20000) || '@Empresa' || (g % 20000 % 7) || '.com.br' END
		FROM generate_series(1, 100000) g ORDER BY (g * 7919) % 100003`,
		db.SnapshotIndexes, "VACUUM ANALYZE offices"} {
		if _, err := d.Exec(q); err != nil {
			t.Fatalf("%v", err)
		}
	}
	var want int64
	if err := d.Get(&want, `SELECT count(*) FROM s.offices WHERE upper(email) = 'CONTATO1234@EMPRESA2.COM.BR'`); err != nil || want < 3 {
		t.Fatalf("%d offices with the address (%v), want at least 3", want, err)
	}
	for address, n := range map[string]int64{"CONTATO1234@EMPRESA2.COM.BR": want, "NINGUEM@EXEMPLO.COM": 0} {
		rows, buffers, plan := explainPage(t, d, `SELECT o.tax_id FROM s.offices o
			WHERE upper(o.email) = '`+address+`' ORDER BY o.root, o.tax_id LIMIT 11`)
		if rows != n || buffers > 20 {
			t.Errorf("%s: read %d buffers for %d rows, want %d rows in at most 20 buffers:\n%s", address, buffers, rows, n, plan)
		}
	}
}

// TestAutovacuumOff: the answer is the server's setting as SHOW gives it.
func TestAutovacuumOff(t *testing.T) {
	d, _ := dbtest.New(t)
	off, err := db.AutovacuumOff(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	var shown string
	if err := d.Get(&shown, "SHOW autovacuum"); err != nil {
		t.Fatal(err)
	}
	if off != (shown == "off") {
		t.Fatalf("AutovacuumOff = %v, SHOW autovacuum = %q", off, shown)
	}
}

// TestDeleteSearchTokensInBatches: expired tokens go in batches of 2,000
// statements until one deletes fewer; the tokens still valid stay.
func TestDeleteSearchTokensInBatches(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.MustExec(t, d, `INSERT INTO search_tokens (token, kind, params, snapshot_id, after_key, total, exact, page_limit, created_at)
		SELECT lpad(g::text, 32, '0'), 'office', '', 1, '', 0, true, 10,
			CASE WHEN g <= 4500 THEN now() - interval '2 hours' ELSE now() END
		FROM generate_series(1, 4510) g`)
	n, err := db.NewStore(d, db.StoreOptions{}).DeleteSearchTokens(context.Background(), time.Now().Add(-time.Hour))
	if err != nil || n != 4500 {
		t.Fatalf("deleted %d (%v), want 4500", n, err)
	}
	var left []string
	if err := d.Select(&left, `SELECT token FROM search_tokens ORDER BY token`); err != nil {
		t.Fatal(err)
	}
	if len(left) != 10 || left[0] != fmt.Sprintf("%032d", 4501) {
		t.Fatalf("left %d tokens, first %v; want the 10 valid ones", len(left), left[:min(1, len(left))])
	}
}

// TestUsageRowsUnchecked: the usage ledger has no foreign key to the
// accounts (migration 00005): its rows are written for authenticated
// requests, and the key's check per row cost more than the row.
func TestUsageRowsUnchecked(t *testing.T) {
	d, _ := dbtest.New(t)
	var keys int
	if err := d.Get(&keys, `SELECT count(*) FROM pg_constraint WHERE conrelid = 'usage'::regclass AND contype = 'f'`); err != nil || keys != 0 {
		t.Fatalf("usage has %d foreign keys (%v), want none", keys, err)
	}
}

// TestLiveSnapshotWithoutTables: a catalog restored without the registry's
// tables names a live snapshot nothing can be read from: it counts as none,
// saying which, until an import brings the tables.
func TestLiveSnapshotWithoutTables(t *testing.T) {
	d, _ := dbtest.New(t)
	var id int64
	if err := d.Get(&id, `INSERT INTO snapshots (state, dump_month, reference_date, finished_at) VALUES ('live', '2026-10', '2026-10-06', now()) RETURNING id`); err != nil {
		t.Fatal(err)
	}
	_, err := db.LiveSnapshot(context.Background(), d)
	var missing *db.MissingTablesError
	if !errors.Is(err, db.ErrNoSnapshot) || !errors.As(err, &missing) || missing.Snapshot.ID != id ||
		!strings.Contains(err.Error(), "is live in the catalog, but its tables are missing from schema cnpj") {
		t.Fatalf("without tables: %v", err)
	}
	dbtest.CreateLiveSchema(t, d)
	if snap, err := db.LiveSnapshot(context.Background(), d); err != nil || snap.ID != id || snap.DumpMonth != "2026-10" {
		t.Fatalf("with tables: %+v, %v", snap, err)
	}
}
