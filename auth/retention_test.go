package auth

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// usageAt writes n usage rows of an account at the given time.
func (e *env) usageAt(account int64, at time.Time, n int) {
	e.t.Helper()
	if _, err := e.db.Exec(`INSERT INTO usage (account_id, route, cost, status, at)
		SELECT $1, '/office/{taxId}', 0, 200, $2 FROM generate_series(1, $3)`, account, at, n); err != nil {
		e.t.Fatal(err)
	}
}

// usageDays is an account's usage rows per day, oldest first.
func (e *env) usageDays(account int64) string {
	e.t.Helper()
	var got []string
	if err := e.db.Select(&got, `SELECT d || ':' || count(*) FROM (
		SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS d FROM usage WHERE account_id = $1) u
		GROUP BY d ORDER BY d`, account); err != nil {
		e.t.Fatal(err)
	}
	return fmt.Sprint(got)
}

// pruneUsage deletes every account's rows older than the bound, in batches,
// and nothing newer.
func TestPruneUsage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, _ := e.account(100, 1000, nil)
	b, _ := e.account(100, 1000, nil)
	day := func(d int) time.Time { return time.Date(2026, 3, d, 12, 0, 0, 0, time.UTC) }
	e.usageAt(a.ID, day(1), 7)
	e.usageAt(a.ID, day(2), 3)
	e.usageAt(a.ID, day(3), 2)
	e.usageAt(b.ID, day(1), 5)
	e.usageAt(b.ID, day(3), 1)

	// Batches of 2: the 7 rows of a's first day take four statements.
	n, err := pruneUsage(context.Background(), e.db, day(3).Add(-time.Hour), 2)
	if err != nil {
		t.Fatal(err)
	}
	if n != 15 {
		t.Fatalf("deleted %d rows, want 15", n)
	}
	if got := e.usageDays(a.ID); got != "[2026-03-03:2]" {
		t.Fatalf("account a keeps %s", got)
	}
	if got := e.usageDays(b.ID); got != "[2026-03-03:1]" {
		t.Fatalf("account b keeps %s", got)
	}
	// Again: nothing left to delete.
	if n, err := pruneUsage(context.Background(), e.db, day(3).Add(-time.Hour), usagePruneBatch); err != nil || n != 0 {
		t.Fatalf("second prune deleted %d, %v", n, err)
	}
}

// A service with a retention prunes on its own, by its clock; one without
// keeps every row.
func TestUsageRetention(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // no retention
	a, _ := e.account(100, 1000, nil)
	now := e.clock.Now()
	e.usageAt(a.ID, now.Add(-48*time.Hour), 4)
	e.usageAt(a.ID, now.Add(-time.Hour), 2)

	svc, _ := e.start(func(c *Config) { c.UsageRetention, c.UsagePruneEvery = 24*time.Hour, 20*time.Millisecond })
	deadline := time.Now().Add(10 * time.Second)
	want := fmt.Sprintf("[%s:2]", now.Add(-time.Hour).Format(time.DateOnly))
	for e.usageDays(a.ID) != want {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s the ledger holds %s, want %s", e.usageDays(a.ID), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := svc.Close(); err != nil { // stops the pruner
		t.Fatal(err)
	}

	// The first service, without a retention, never deleted: rows older
	// than any retention written now stay.
	e.usageAt(a.ID, now.Add(-480*time.Hour), 1)
	time.Sleep(100 * time.Millisecond)
	if got := e.usageDays(a.ID); got != fmt.Sprintf("[%s:1 %s:2]", now.Add(-480*time.Hour).Format(time.DateOnly), now.Add(-time.Hour).Format(time.DateOnly)) {
		t.Fatalf("without retention the ledger holds %s", got)
	}
}
