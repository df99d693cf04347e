package download

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/internal/syncbuf"
)

func (s *testShare) syncOptions(dir string, log io.Writer) SyncOptions {
	return SyncOptions{Options: s.options(dir, log)}
}

func snapshotRows(t *testing.T, d *sqlx.DB) int {
	t.Helper()
	var n int
	if err := d.Get(&n, `SELECT count(*) FROM snapshots`); err != nil {
		t.Fatal(err)
	}
	return n
}

func liveMonth(t *testing.T, d *sqlx.DB) string {
	t.Helper()
	live, err := db.LiveSnapshot(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return live.DumpMonth
}

func assertFolders(t *testing.T, dir string, want ...string) {
	t.Helper()
	got, err := monthFolders(dir)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("month folders in %s: %v %v, want %v", dir, got, err, want)
	}
}

// TestSync walks a registry through three months: the first sync imports,
// the second is a no-op, an incomplete month is refused, and the completed
// month is swapped in while lookups are being served.
func TestSync(t *testing.T) {
	s := newTestShare(t, "2026-09", "2026-10")
	d, _ := dbtest.New(t)
	dir := t.TempDir()
	src, taxIDs := generatedDump(t)
	ctx := context.Background()
	var log syncbuf.Buffer

	res, err := Sync(ctx, d, s.syncOptions(dir, &log))
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if !res.Imported || res.Month != "2026-10" || res.Live != "" || res.Snapshot.DumpMonth != "2026-10" || res.Download.Downloaded != 39 {
		t.Errorf("first sync: %+v", res)
	}
	if m := liveMonth(t, d); m != "2026-10" {
		t.Errorf("live dump %s after the first sync", m)
	}
	assertFolders(t, dir, "2026-10")

	gets, rows := s.allGets(), snapshotRows(t, d)
	// Up to date, with the dump's reference date 10 days ago: no warning.
	opts := s.syncOptions(dir, &log)
	opts.Now = func() time.Time { return res.Snapshot.ReferenceDate.Add(10 * 24 * time.Hour) }
	logged := len(log.String())
	res, err = Sync(ctx, d, opts)
	if err != nil || res.Imported || res.Month != "2026-10" || res.Live != "2026-10" {
		t.Errorf("second sync: %+v, %v", res, err)
	}
	want := fmt.Sprintf("sync: up to date: the live snapshot #%d is dump 2026-10; the share's is 2026-10", rows)
	if !strings.Contains(log.String()[logged:], want) || strings.Contains(log.String()[logged:], "warning") {
		t.Errorf("want %q and no warning in the log:\n%s", want, log.String())
	}
	// 50 days later, still nothing newer on the share: a warning.
	live := res.Snapshot
	if err := d.Get(&live, `SELECT reference_date FROM snapshots WHERE state = 'live'`); err != nil {
		t.Fatal(err)
	}
	opts.Now = func() time.Time { return live.ReferenceDate.Add(50 * 24 * time.Hour) }
	if _, err := Sync(ctx, d, opts); err != nil {
		t.Fatal(err)
	}
	want = "sync: warning: the live dump's reference date, " + live.ReferenceDate.Format("2006-01-02") +
		", is 50 days old, and the share has nothing newer: the Receita has not published since, or RFB_SHARE_URL no longer points at its share"
	if !strings.Contains(log.String(), want) {
		t.Errorf("no %q in the log:\n%s", want, log.String())
	}
	if n := s.allGets() - gets; n != 0 || snapshotRows(t, d) != rows {
		t.Errorf("the no-op sync made %d GETs and %d snapshot rows", n, snapshotRows(t, d)-rows)
	}

	s.addMonth("2026-11")
	if err := os.Remove(s.path("2026-11/Socios3.zip")); err != nil {
		t.Fatal(err)
	}
	_, err = Sync(ctx, d, s.syncOptions(dir, &log))
	if err == nil || !strings.Contains(err.Error(), "the share's 2026-11 folder is incomplete: Socios3.zip missing") {
		t.Errorf("incomplete month: %v", err)
	}
	if n := s.allGets() - gets; n != 0 || snapshotRows(t, d) != rows || liveMonth(t, d) != "2026-10" {
		t.Errorf("the incomplete month made %d GETs, %d snapshot rows, live %s", n, snapshotRows(t, d)-rows, liveMonth(t, d))
	}
	assertFolders(t, dir, "2026-10")

	s.copyIn(filepath.Join(src, "Socios3.zip"), "2026-11/Socios3.zip")
	load := startLookups(t, d, taxIDs)
	waitFor(t, func() bool { return load.ok.Load() >= 20 })
	res, err = Sync(ctx, d, s.syncOptions(dir, &log))
	after := load.ok.Load()
	waitFor(t, func() bool { return load.ok.Load() >= after+20 })
	ok, failed, failures := load.finish()
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if !res.Imported || res.Live != "2026-10" || res.Snapshot.DumpMonth != "2026-11" || liveMonth(t, d) != "2026-11" {
		t.Errorf("sync of 2026-11: %+v", res)
	}
	if failed != 0 || ok < 40 {
		t.Errorf("%d lookups failed of %d during the sync: %v", failed, ok+failed, failures)
	}
	if !slices.Equal(res.Removed, []string{filepath.Join(dir, "2026-10")}) {
		t.Errorf("removed %v", res.Removed)
	}
	assertFolders(t, dir, "2026-11")
	t.Logf("%d lookups answered during the sync of 2026-11, none failed", ok)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSyncsAtOnce: while a sync downloads, a second sync (or download)
// into the same folder fails at once, naming the holder; nothing is
// imported twice.
func TestSyncsAtOnce(t *testing.T) {
	s := newTestShare(t, "2026-10")
	d, _ := dbtest.New(t)
	dir := t.TempDir()
	entered := make(chan struct{})
	var once sync.Once
	s.fault("2026-10/Cnaes.zip", func(w http.ResponseWriter, r *http.Request, n int) bool {
		once.Do(func() { close(entered) })
		<-r.Context().Done()
		return true
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan error, 1)
	go func() {
		_, err := Sync(ctx, d, s.syncOptions(dir, nil))
		first <- err
	}()
	select {
	case <-entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the first sync never asked for Cnaes.zip")
	}

	start := time.Now()
	_, err := Sync(context.Background(), d, s.syncOptions(dir, nil))
	holder := fmt.Sprintf("cnpjgraph sync (pid %d on ", os.Getpid())
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), holder) || !strings.Contains(err.Error(), filepath.Join(dir, ".lock")) {
		t.Errorf("second sync: %v; want ErrBusy naming %q", err, holder)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the second sync took %s to give up", took)
	}
	if _, err := Download(context.Background(), s.options(dir, nil)); !errors.Is(err, ErrBusy) {
		t.Errorf("a download into the same folder: %v", err)
	}

	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("the first sync, cancelled: %v", err)
	}
	if n := snapshotRows(t, d); n != 0 {
		t.Errorf("%d snapshot rows", n)
	}
	// The lock went with its holder.
	s.fault("2026-10/Cnaes.zip", nil)
	if _, err := Download(context.Background(), s.options(dir, nil)); err != nil {
		t.Errorf("a download after the first sync ended: %v", err)
	}
}
