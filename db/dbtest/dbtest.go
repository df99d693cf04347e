// Package dbtest gives each test package its own throwaway PostgreSQL
// database on the server named by TEST_DATABASE_URL (default: the local
// server on 127.0.0.1:5432, user postgres).
package dbtest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/internal/pgtest"
)

// AdminURL is the server the throwaway databases are created on.
func AdminURL() string { return pgtest.AdminURL() }

// NewURL creates an empty database and returns its URL; the database is
// dropped when the test ends.
func NewURL(t testing.TB) string {
	t.Helper()
	return pgtest.NewURL(t)
}

// New creates a migrated throwaway database and returns a connection to it.
func New(t testing.TB) (*sqlx.DB, string) {
	t.Helper()
	u := NewURL(t)
	d := open(t, u)
	if err := db.Migrate(context.Background(), d); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	return d, u
}

func open(t testing.TB, u string) *sqlx.DB {
	t.Helper()
	d, err := db.Open(context.Background(), u)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// Copied returns a throwaway database that is a copy of the one build
// returns (with its live snapshot), build running once per test process
// for each name: a fixture that takes seconds to write is copied in a
// fraction of one (100,000 offices: 8 s written, 0.3-0.7 s copied). A
// package whose tests call it drops the copies' templates in its TestMain
// (Main).
func Copied(t testing.TB, name string, build func(testing.TB) (*sqlx.DB, int64)) (*sqlx.DB, int64) {
	t.Helper()
	templates.Lock()
	tm := templates.byName[name]
	if tm == nil {
		tm = &template{}
		templates.byName[name] = tm
	}
	templates.Unlock()
	tm.once.Do(func() {
		d, snapshot := build(t)
		var from string
		if err := d.Get(&from, "SELECT current_database()"); err != nil {
			t.Fatalf("dbtest: template %s: %v", name, err)
		}
		_ = d.Close() // a database is copied with nobody connected to it
		copyOf, err := pgtest.CreateTemplate(from)
		if err != nil {
			t.Fatalf("dbtest: template %s: %v", name, err)
		}
		tm.db, tm.snapshot = copyOf, snapshot
	})
	if tm.db == "" {
		t.Fatalf("dbtest: template %s could not be built (see the first test that asked for it)", name)
	}
	return open(t, pgtest.CopyURL(t, tm.db)), tm.snapshot
}

// templates are Copied's, by name.
var templates = struct {
	sync.Mutex
	byName map[string]*template
}{byName: map[string]*template{}}

type template struct {
	once     sync.Once
	db       string // "": build failed
	snapshot int64
}

// Main runs a package's tests and then drops the templates Copied made
// (and those of earlier runs killed before they could): a package's
// TestMain is os.Exit(dbtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if err := pgtest.DropTemplates(); err != nil {
		fmt.Fprintln(os.Stderr, "dbtest: drop the templates:", err)
	}
	return code
}

// MustExec runs statements, failing the test on error.
func MustExec(t testing.TB, d *sqlx.DB, query string, args ...any) {
	t.Helper()
	if _, err := d.Exec(query, args...); err != nil {
		t.Fatalf("dbtest: %s: %v", fmt.Sprint(query), err)
	}
}

// WaitForLockWaiter returns once a session of d's database waits for a lock
// (a statement blocked by a test's LOCK TABLE), with that session's backend
// pid; it fails the test after 10 s.
func WaitForLockWaiter(t testing.TB, d *sqlx.DB) (pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var pids []int
		if err := d.Select(&pids, `SELECT pid FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`); err != nil {
			t.Fatal(err)
		}
		if len(pids) > 0 {
			return pids[0]
		}
		if time.Now().After(deadline) {
			t.Fatal("no statement waits for a lock after 10 s")
		}
	}
}
