// Package dbtest gives each test package its own throwaway PostgreSQL
// database on the server named by TEST_DATABASE_URL (default: the local
// server on 127.0.0.1:5432, user postgres).
package dbtest

import (
	"context"
	"fmt"
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
	d, err := db.Open(context.Background(), u)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := db.Migrate(context.Background(), d); err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	return d, u
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
