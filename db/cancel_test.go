package db_test

import (
	"context"
	"errors"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// blockedQuery runs a prepared statement (the service's path: db.Prepared)
// that waits for a lock another session holds, under ctx; it reports the
// statement's error and how long it took, once done.
type blockedQuery struct {
	err  error
	took time.Duration
}

func runBlocked(ctx context.Context, q *db.Prepared) <-chan blockedQuery {
	done := make(chan blockedQuery, 1)
	go func() {
		start := time.Now()
		var n int
		err := q.QueryRowxContext(ctx, `SELECT count(*) FROM held WHERE id > $1`, 0).Scan(&n)
		done <- blockedQuery{err, time.Since(start)}
	}()
	return done
}

// holdLock takes an exclusive lock on held in a transaction of its own,
// released at the end of the test (or by the returned func).
func holdLock(t *testing.T, d *sqlx.DB) (release func()) {
	tx, err := d.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`LOCK TABLE held IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	release = func() { _ = tx.Rollback() }
	t.Cleanup(release)
	return release
}

func backendPID(t *testing.T, q *db.Prepared) int {
	t.Helper()
	var pid int
	if err := q.QueryRowxContext(context.Background(), `SELECT pg_backend_pid() + $1`, 0).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return pid
}

// newHeld returns a pool over a database with the table held, its
// preparing queryer (the blocked statement prepared already: a prepare
// waits for the lock too), and a connection of its own to watch it.
func newHeld(t *testing.T) (d *sqlx.DB, q *db.Prepared, watch *sqlx.DB) {
	d, url := dbtest.New(t)
	dbtest.MustExec(t, d, `CREATE TABLE held (id int); INSERT INTO held VALUES (1)`)
	q = db.NewPrepared(d)
	t.Cleanup(func() { _ = q.Close() })
	if got := <-runBlocked(context.Background(), q); got.err != nil {
		t.Fatal(got.err)
	}
	watch, err := db.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = watch.Close() })
	return d, q, watch
}

// TestDetachedStatementEndsAtDeadline: a prepared statement blocked by a
// lock ends when its request's deadline passes, though database/sql and
// lib/pq see a context they cannot watch; the connection it ran on is not
// used again (a late cancel must not reach another statement), and the
// next statement runs on a fresh one.
func TestDetachedStatementEndsAtDeadline(t *testing.T) {
	d, q, watch := newHeld(t)
	holdLock(t, d)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := runBlocked(ctx, q)
	pid := dbtest.WaitForLockWaiter(t, watch)
	var got blockedQuery
	select {
	case got = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the blocked statement did not end 10s after its deadline")
	}
	var pqErr *pq.Error
	if !errors.As(got.err, &pqErr) || pqErr.Code != "57014" {
		t.Fatalf("blocked statement: %v, want query_canceled (57014)", got.err)
	}
	if got.took > 5*time.Second {
		t.Fatalf("blocked statement ended after %v, its deadline was 300ms", got.took)
	}
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		var n int
		if err := watch.Get(&n, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1`, pid); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("the cancelled statement's connection (backend %d) is still open", pid)
		}
	}
	if after := backendPID(t, q); after == pid {
		t.Fatalf("the next statement ran on the cancelled one's backend %d", pid)
	}
}

// TestDetachedStatementKeepsConnection: a statement that ends before its
// request does leaves its connection in the pool.
func TestDetachedStatementKeepsConnection(t *testing.T) {
	d, q, _ := newHeld(t)
	d.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(context.Background())
	before := backendPID(t, q)
	var n int
	if err := q.QueryRowxContext(ctx, `SELECT count(*) FROM held WHERE id > $1`, 0).Scan(&n); err != nil || n != 1 {
		t.Fatalf("statement: %d, %v", n, err)
	}
	cancel() // the request ends after its statement: nothing to cancel
	if after := backendPID(t, q); after != before {
		t.Fatalf("backend %d after a statement that ended in time, want %d (connection dropped)", after, before)
	}
}

// TestDetachedStatementStartsNoWatcher: while a detached statement runs,
// no goroutine watches its context, where a statement on the request's own
// context has lib/pq's watcher (checked too, so the check can fail).
func TestDetachedStatementStartsNoWatcher(t *testing.T) {
	d, q, watch := newHeld(t)
	const watcher = "watchCancel" // lib/pq's, of a statement or a connection

	// The fewest watchers of a few looks: an earlier test's goroutine
	// (a statement of its store's ending as this one runs) comes and goes,
	// where the blocked statement's watcher, if any, stays.
	fewest := func() int {
		n := -1
		for range 5 {
			var stacks strings.Builder
			if err := pprof.Lookup("goroutine").WriteTo(&stacks, 2); err != nil {
				t.Fatal(err)
			}
			c := 0
			for _, g := range strings.Split(stacks.String(), "\n\n") {
				if strings.Contains(g, watcher) {
					c++
				}
			}
			if n < 0 || c < n {
				n = c
			}
			time.Sleep(20 * time.Millisecond)
		}
		return n
	}
	watchers := func(run func(ctx context.Context) <-chan blockedQuery) bool {
		before := fewest()
		release := holdLock(t, d)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := run(ctx)
		dbtest.WaitForLockWaiter(t, watch)
		during := fewest()
		release()
		if got := <-done; got.err != nil {
			t.Fatalf("statement: %v", got.err)
		}
		return during > before
	}

	if watchers(func(ctx context.Context) <-chan blockedQuery { return runBlocked(ctx, q) }) {
		t.Errorf("a detached statement's context is watched by %s", watcher)
	}
	stmt, err := d.Preparex(`SELECT count(*) FROM held WHERE id > $1`)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stmt.Close() }()
	undetached := func(ctx context.Context) <-chan blockedQuery {
		done := make(chan blockedQuery, 1)
		go func() {
			var n int
			done <- blockedQuery{err: stmt.QueryRowContext(ctx, 0).Scan(&n)}
		}()
		return done
	}
	if !watchers(undetached) {
		t.Errorf("no %s while a statement on a cancellable context ran: the check cannot fail", watcher)
	}
}

// TestDetachedStatementAfterItsRequest: a statement whose request has
// ended by the time it has a connection (it waited for one) is not sent.
func TestDetachedStatementAfterItsRequest(t *testing.T) {
	_, q, _ := newHeld(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var n int
	err := q.QueryRowxContext(ctx, `SELECT count(*) FROM held WHERE id > $1`, 0).Scan(&n)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("statement of an ended request: %d, %v; want context.Canceled", n, err)
	}
}

// TestDetachedUnpreparedStatementEndsAtDeadline: an unprepared statement
// (the connection's own QueryContext) under a detached context ends at its
// request's deadline too.
func TestDetachedUnpreparedStatementEndsAtDeadline(t *testing.T) {
	d, _, watch := newHeld(t)
	holdLock(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		var n int
		done <- d.QueryRowxContext(db.Detached(ctx), `SELECT count(*) FROM held`).Scan(&n)
	}()
	dbtest.WaitForLockWaiter(t, watch)
	select {
	case err := <-done:
		var pqErr *pq.Error
		if !errors.As(err, &pqErr) || pqErr.Code != "57014" {
			t.Fatalf("blocked statement: %v, want query_canceled (57014)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocked statement did not end 10s after its deadline")
	}
}
