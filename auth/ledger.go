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

// ledger writes usage rows in batches off the request path: requests hand
// rows to a buffered channel; a writer inserts them every interval, when a
// batch is full, and on flush or close. A full buffer makes the request
// write its own row: slower, never lost.
type ledger struct {
	db       *sqlx.DB
	write    func(context.Context, []usageRow) error // copyRows; tests swap it
	interval time.Duration
	log      *slog.Logger

	mu      sync.RWMutex // guards closed against sends on a closed channel
	closed  bool
	rows    chan usageRow
	flushes chan chan error
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
	l := &ledger{db: d, interval: interval, log: log, write: write,
		rows: make(chan usageRow, buffer), flushes: make(chan chan error), done: make(chan struct{})}
	if l.write == nil {
		l.write = l.copyRows
	}
	go l.run()
	return l
}

func (l *ledger) record(row usageRow) {
	l.mu.RLock()
	if !l.closed {
		select {
		case l.rows <- row:
			l.mu.RUnlock()
			return
		default:
		}
		// The buffer is full: wait for the writer (back-pressure; a batch
		// is far cheaper than a row), but not forever if it is stuck.
		t := time.NewTimer(ledgerWait)
		select {
		case l.rows <- row:
			t.Stop()
			l.mu.RUnlock()
			return
		case <-t.C:
		}
	}
	l.mu.RUnlock()
	if err := l.write(context.Background(), []usageRow{row}); err != nil {
		l.log.Error("auth: usage ledger: row lost", "account", row.account, "route", row.route, "err", err)
	}
}

func (l *ledger) run() {
	defer close(l.done)
	tick := time.NewTicker(l.interval)
	defer tick.Stop()
	var batch []usageRow
	writeBatch := func() error {
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
	drain := func() {
		for {
			select {
			case row, ok := <-l.rows:
				if !ok {
					return
				}
				batch = append(batch, row)
			default:
				return
			}
		}
	}
	for {
		select {
		case row, ok := <-l.rows:
			if !ok {
				l.closeErr = writeBatch()
				return
			}
			batch = append(batch, row)
			if len(batch) >= ledgerBatch {
				_ = writeBatch()
			}
		case reply := <-l.flushes:
			drain()
			reply <- writeBatch()
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

func (l *ledger) close() error {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.rows)
	}
	l.mu.Unlock()
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
