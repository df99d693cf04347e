package auth

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// rowSink collects what a ledger writes.
type rowSink struct {
	mu     sync.Mutex
	rows   int
	writes int
	wrote  chan struct{} // signalled on each write
}

func (s *rowSink) write(_ context.Context, rows []usageRow) error {
	s.mu.Lock()
	s.rows += len(rows)
	s.writes++
	s.mu.Unlock()
	select {
	case s.wrote <- struct{}{}:
	default:
	}
	return nil
}

func (s *rowSink) counts() (rows, writes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows, s.writes
}

// A full batch is written without waiting for the tick, rows short of a
// batch wait for it (or a flush), and every row reaches PostgreSQL: those
// recorded before close by the writer, those after close by their requests.
func TestLedgerBatches(t *testing.T) {
	t.Parallel()
	sink := &rowSink{wrote: make(chan struct{}, 1)}
	l := newLedger(nil, time.Hour, 8192, slog.New(slog.DiscardHandler), sink.write)
	row := usageRow{account: 1, route: "/office/{taxId}", cost: 1, status: 200, at: time.Now()}

	for range ledgerBatch - 1 {
		l.record(row)
	}
	if rows, _ := sink.counts(); rows != 0 {
		t.Fatalf("%d rows written before a batch was full and before the tick", rows)
	}
	l.record(row)
	select {
	case <-sink.wrote:
	case <-time.After(10 * time.Second):
		t.Fatal("a full batch was not written before the tick")
	}
	if rows, writes := sink.counts(); rows != ledgerBatch || writes != 1 {
		t.Fatalf("%d rows in %d writes, want %d in 1", rows, writes, ledgerBatch)
	}

	for range 3 {
		l.record(row)
	}
	if err := l.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rows, writes := sink.counts(); rows != ledgerBatch+3 || writes != 2 {
		t.Fatalf("after flush: %d rows in %d writes, want %d in 2", rows, writes, ledgerBatch+3)
	}

	l.record(row)
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	l.record(row) // after close: written by the request itself
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	if rows, writes := sink.counts(); rows != ledgerBatch+5 || writes != 4 {
		t.Fatalf("after close: %d rows in %d writes, want %d in 4", rows, writes, ledgerBatch+5)
	}
}
