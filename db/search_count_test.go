package db

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/internal/pgtest"
)

// TestCountBudget: a count that outlasts its budget is stopped and the
// answer is PostgreSQL's estimate; one within its budget is exact; a
// search expected past the limit is not counted. The rows are
// generate_series's (40, PostgreSQL expects 40), each taking a
// millisecond to pass its condition: no tables are read or written.
func TestCountBudget(t *testing.T) {
	d := serverDB(t)
	ctx := context.Background()
	sh := shape{key: "g::text", branches: []branch{{from: "generate_series(1, 40) g", cond: "pg_sleep(0.001) IS NOT NULL"}}}
	for _, c := range []struct {
		name    string
		q       Search
		count   int64
		exact   bool
		atLeast bool
	}{
		{"within the budget", Search{CountLimit: 100, CountBudget: time.Minute}, 40, true, false},
		{"past the budget", Search{CountLimit: 100, CountBudget: time.Millisecond}, 40, false, false}, // the estimate
		{"expected past the limit", Search{CountLimit: 20, CountBudget: time.Minute}, 20, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, exact, keys, err := count(ctx, d, c.q, sh, &where{}, 3, nil)
			if err != nil {
				t.Fatal(err)
			}
			if exact != c.exact || (!c.atLeast && n != c.count) || (c.atLeast && n < c.count) {
				t.Fatalf("count %d exact %v, want %d (at least: %v) exact %v", n, exact, c.count, c.atLeast, c.exact)
			}
			// An exact count gives the first page's keys (in text order);
			// any other gives none.
			if want := map[bool]string{true: "[1 10 11]", false: "[]"}[exact]; fmt.Sprint(keys) != want || (keys == nil) == exact {
				t.Fatalf("keys %v (nil: %v), want %s", keys, keys == nil, want)
			}
			// The session goes on after the count without its budget (the
			// pool has one connection): the page comes after it.
			var timeout string
			if err := d.GetContext(ctx, &timeout, "SELECT current_setting('statement_timeout')"); err != nil || timeout != "0" {
				t.Fatalf("after the count: statement_timeout %q, %v", timeout, err)
			}
		})
	}
}

// TestCountPricedPastTheBudget: a search PostgreSQL expects to be small
// (0.5 % of a million pairs: 5,000) but prices past what the budget buys
// (countCostPerMillisecond) is not counted: the answer is the estimate.
// The branch divides by zero on its first row, so a count that ran would
// fail; with a budget that buys its price, it runs (and fails).
func TestCountPricedPastTheBudget(t *testing.T) {
	d := serverDB(t)
	ctx := context.Background()
	sh := shape{key: "g::text", branches: []branch{{from: "generate_series(1, 1000) a, generate_series(1, 1000) g", cond: "g / (g - g) + a = 1"}}}
	for _, c := range []struct {
		budget time.Duration
		runs   bool
	}{{time.Millisecond, false}, {time.Hour, true}} {
		t.Run(c.budget.String(), func(t *testing.T) {
			n, exact, keys, err := count(ctx, d, Search{CountLimit: 10000, CountBudget: c.budget}, sh, &where{}, 3, nil)
			if c.runs {
				if err == nil {
					t.Fatalf("count %d exact %v: the count did not run", n, exact)
				}
				return
			}
			if err != nil || n != 5000 || exact || keys != nil {
				t.Fatalf("count %d exact %v keys %v err %v, want the estimate 5000, not exact, no keys", n, exact, keys, err)
			}
		})
	}
}

// TestCountUnpriced: a shape whose estimate is the statistics' (unpriced)
// is counted without asking PostgreSQL's price: a branch like
// TestCountPricedPastTheBudget's, which PostgreSQL prices at 300,000 (past
// what 200 ms buy), is run, and fails on its first row; past the limit,
// the estimate is said and nothing runs.
func TestCountUnpriced(t *testing.T) {
	d := serverDB(t)
	ctx := context.Background()
	sh := shape{key: "g::text", branches: []branch{{from: "generate_series(1, 10000) a, generate_series(1, 1000) g", cond: "g / (g - g) + a = 1"}},
		unpriced: true, estimate: 5}
	q := Search{CountLimit: 100000, CountBudget: 200 * time.Millisecond}
	if n, exact, _, err := count(ctx, d, q, sh, &where{}, 3, nil); err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("count %d exact %v err %v: want the count run, failing on division by zero", n, exact, err)
	}
	sh.estimate = 200000
	n, exact, keys, err := count(ctx, d, q, sh, &where{}, 3, nil)
	if err != nil || n != 200000 || exact || keys != nil {
		t.Fatalf("count %d exact %v keys %v err %v, want the estimate 200000, not exact, no keys, nothing run", n, exact, keys, err)
	}
}

// TestCountPastTheLimit: a search PostgreSQL expects to be small (an
// expression's equality: 0.5 % of 40 rows) that the count finds past the
// limit says the limit plus one, a lower bound, and not exact.
func TestCountPastTheLimit(t *testing.T) {
	d := serverDB(t)
	ctx := context.Background()
	sh := shape{key: "g::text", branches: []branch{{from: "generate_series(1, 40) g", cond: "g % 1 = 0"}}}
	n, exact, keys, err := count(ctx, d, Search{CountLimit: 20, CountBudget: time.Minute}, sh, &where{}, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n != 21 || exact || keys != nil {
		t.Fatalf("count %d exact %v keys %v, want 21 (the limit plus one), not exact, no keys", n, exact, keys)
	}
}

// serverDB is a session on an empty throwaway database: these tests read
// no table.
func serverDB(t *testing.T) *sqlx.DB {
	return session(t, pgtest.NewURL(t))
}

// session is a pool of one connection: what a statement leaves set, the
// next statement sees.
func session(t *testing.T, url string) *sqlx.DB {
	d, err := sqlx.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	d.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// TestCountOfBranches: the count of a search of several branches is the
// number of distinct keys; past the limit it says the limit plus one, and a
// branch past the limit ends the count: the branches after it are never
// read (here one that would divide by zero).
func TestCountOfBranches(t *testing.T) {
	d := serverDB(t)
	ctx := context.Background()
	// Conditions PostgreSQL expects to keep 0.5 % of the rows: the
	// estimate stays under the limit, and the count runs.
	series := func(from, to int, cond string) branch {
		return branch{from: fmt.Sprintf("generate_series(%d, %d) g", from, to), cond: cond}
	}
	const kept = "g % 1 = 0"
	never := series(1, 5, "g / (g - g) = 1") // fails when read
	for _, c := range []struct {
		name     string
		branches []branch
		want     int64
		exact    bool
		keys     string // the first page's, from an exact count
	}{
		{"overlapping, under the limit", []branch{series(1, 10, kept), series(5, 15, kept)}, 15, true, "[1 10 11]"},
		{"the first page from the second", []branch{series(2, 9, kept), series(10, 12, kept)}, 11, true, "[10 11 12]"},
		{"each under, together past the limit", []branch{series(1, 15, kept), series(11, 25, kept)}, 21, false, "[]"},
		{"the second past the limit", []branch{series(1, 3, kept), series(1, 30, kept)}, 21, false, "[]"},
		{"the first past the limit, the rest unread", []branch{series(1, 30, kept), never}, 21, false, "[]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sh := shape{key: "g::text", branches: c.branches}
			n, exact, keys, err := count(ctx, d, Search{CountLimit: 20, CountBudget: time.Minute}, sh, &where{}, 3, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n != c.want || exact != c.exact || fmt.Sprint(keys) != c.keys || (keys == nil) == exact {
				t.Fatalf("count %d exact %v keys %v, want %d exact %v keys %s", n, exact, keys, c.want, c.exact, c.keys)
			}
		})
	}
}

// TestCountBudgetLeavesNothingPending: a count's budget is a statement
// timeout, and one that fires as the count ends stays pending in the
// session: without count's closing pg_sleep(0) it failed the session's
// next statement (here about one count in twenty, six sessions counting
// at once with a budget near the counts' time). Whether each count is
// exact or the estimate, the statement after it succeeds.
func TestCountBudgetLeavesNothingPending(t *testing.T) {
	ctx := context.Background()
	var failed atomic.Int64
	var wg sync.WaitGroup
	url := pgtest.NewURL(t)
	for range 6 {
		d := session(t, url)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				g := fmt.Sprintf("generate_series(1, %d) g", 15000+i%20*1000) // 1.5 to 3 ms on a 2-core machine
				sh := shape{key: "g::text", branches: []branch{{from: g, cond: "g % 1 = 0"}}}
				if _, _, _, err := count(ctx, d, Search{CountLimit: 1000, CountBudget: 3 * time.Millisecond}, sh, &where{}, 3, nil); err != nil {
					t.Error(err)
					return
				}
				var one int
				if err := d.GetContext(ctx, &one, "SELECT 1"); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d statements after a count failed", n)
	}
}
