package auth

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
)

// usageRow is one ledger line: a request of an account.
type usageRow struct {
	account int64
	route   string
	cost    int64
	status  int
	at      time.Time
}

// ledger writes usage rows in batches off the request path: a request
// appends its row to a slice under a mutex, and a writer inserts the rows
// every interval, as soon as a batch is full, and on flush or close. A
// request wakes nobody (a channel send would ready the writer's goroutine
// for every row, a thread woken and put back to sleep per request). A full
// buffer makes requests wait for the writer, and past ledgerWait write
// their own rows: slower, never lost.
type ledger struct {
	db       *sqlx.DB
	write    func(context.Context, []usageRow) error // copyRows; tests swap it
	interval time.Duration
	buffer   int
	log      *slog.Logger

	mu      sync.Mutex
	closed  bool
	pending []usageRow    // handed in, not yet taken by the writer
	room    chan struct{} // closed when the writer takes pending
	full    chan struct{} // (1 slot) a batch is ready: write before the tick

	flushes chan chan error
	stop    chan struct{}
	done    chan struct{}
	// closeErr is the last write's outcome, read after done is closed.
	closeErr error
}

const (
	ledgerBatch = 5000
	// ledgerWait is how long a request waits for room in a full buffer
	// before writing its row itself.
	ledgerWait = time.Second
	// ledgerBacklog bounds the rows kept for retry while PostgreSQL fails;
	// past it rows are discarded with an error in the log.
	ledgerBacklog = 200_000
)

func newLedger(d *sqlx.DB, interval time.Duration, buffer int, log *slog.Logger, write func(context.Context, []usageRow) error) *ledger {
	l := &ledger{db: d, interval: interval, buffer: buffer, log: log, write: write,
		room: make(chan struct{}), full: make(chan struct{}, 1),
		flushes: make(chan chan error), stop: make(chan struct{}), done: make(chan struct{})}
	if l.write == nil {
		l.write = l.copyRows
	}
	go l.run()
	return l
}

func (l *ledger) record(row usageRow) {
	var deadline *time.Timer
	l.mu.Lock()
	for !l.closed && len(l.pending) >= l.buffer {
		// The buffer is full: wait for the writer (back-pressure; a batch
		// is far cheaper than a row), but not forever if it is stuck.
		room := l.room
		l.mu.Unlock()
		l.wakeWriter()
		if deadline == nil {
			deadline = time.NewTimer(ledgerWait)
			defer deadline.Stop()
		}
		select {
		case <-room:
		case <-deadline.C:
			l.writeOwn(row)
			return
		}
		l.mu.Lock()
	}
	if l.closed {
		l.mu.Unlock()
		l.writeOwn(row)
		return
	}
	l.pending = append(l.pending, row)
	n := len(l.pending)
	l.mu.Unlock()
	if n == min(ledgerBatch, l.buffer) { // a batch is ready
		l.wakeWriter()
	}
}

func (l *ledger) wakeWriter() {
	select {
	case l.full <- struct{}{}:
	default:
	}
}

func (l *ledger) writeOwn(row usageRow) {
	if err := l.write(context.Background(), []usageRow{row}); err != nil {
		l.log.Error("auth: usage ledger: row lost", "account", row.account, "route", row.route, "err", err)
	}
}

func (l *ledger) run() {
	defer close(l.done)
	tick := time.NewTicker(l.interval)
	defer tick.Stop()
	var batch []usageRow
	// take moves the pending rows into batch and makes room for more.
	take := func() {
		l.mu.Lock()
		batch = append(batch, l.pending...)
		l.pending = l.pending[:0]
		close(l.room)
		l.room = make(chan struct{})
		l.mu.Unlock()
	}
	writeBatch := func() error {
		take()
		if len(batch) == 0 {
			return nil
		}
		err := l.write(context.Background(), batch)
		if err != nil {
			l.log.Error("auth: usage ledger: write failed; will retry", "rows", len(batch), "err", err)
			if len(batch) > ledgerBacklog {
				l.log.Error("auth: usage ledger: backlog full; rows discarded", "rows", len(batch)-ledgerBacklog)
				batch = append(batch[:0], batch[len(batch)-ledgerBacklog:]...)
			}
			return err
		}
		batch = batch[:0]
		return nil
	}
	for {
		select {
		case <-l.stop:
			l.closeErr = writeBatch()
			return
		case reply := <-l.flushes:
			reply <- writeBatch()
		case <-l.full:
			_ = writeBatch()
		case <-tick.C:
			_ = writeBatch()
		}
	}
}

func (l *ledger) flush(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case l.flushes <- reply:
	case <-l.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close writes the pending rows; rows recorded afterwards are written by
// their requests.
func (l *ledger) close() error {
	l.mu.Lock()
	first := !l.closed
	l.closed = true
	l.mu.Unlock()
	if first {
		close(l.stop)
	}
	<-l.done
	return l.closeErr
}

// copyRows writes rows with COPY, the cheapest way into PostgreSQL per row.
func (l *ledger) copyRows(ctx context.Context, rows []usageRow) (err error) {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err := copyIn(ctx, tx, rows); err != nil {
		return err
	}
	return tx.Commit()
}

func copyIn(ctx context.Context, tx *sql.Tx, rows []usageRow) error {
	stmt, err := tx.PrepareContext(ctx, `COPY usage (account_id, route, cost, status, at) FROM STDIN`)
	if err != nil {
		return err
	}
	defer func() { _ = stmt.Close() }()
	for _, r := range rows {
		if _, err := stmt.ExecContext(ctx, r.account, r.route, r.cost, r.status, r.at); err != nil {
			return err
		}
	}
	_, err = stmt.ExecContext(ctx) // ends the COPY
	return err
}
