package auth

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
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
	ledgerBatch = 2000
	// ledgerBacklog bounds the rows kept for retry while PostgreSQL fails;
	// past it rows are discarded with an error in the log.
	ledgerBacklog = 200_000
)

func newLedger(d *sqlx.DB, interval time.Duration, buffer int, log *slog.Logger) *ledger {
	l := &ledger{db: d, interval: interval, log: log,
		rows: make(chan usageRow, buffer), flushes: make(chan chan error), done: make(chan struct{})}
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
	}
	l.mu.RUnlock()
	if err := l.insert(context.Background(), []usageRow{row}); err != nil {
		l.log.Error("auth: usage ledger: row lost", "account", row.account, "route", row.route, "err", err)
	}
}

func (l *ledger) run() {
	defer close(l.done)
	tick := time.NewTicker(l.interval)
	defer tick.Stop()
	var batch []usageRow
	write := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := l.insert(context.Background(), batch)
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
				l.closeErr = write()
				return
			}
			batch = append(batch, row)
			if len(batch) >= ledgerBatch {
				_ = write()
			}
		case reply := <-l.flushes:
			drain()
			reply <- write()
		case <-tick.C:
			_ = write()
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

// insert writes rows with one statement over parallel arrays.
func (l *ledger) insert(ctx context.Context, rows []usageRow) error {
	accounts := make([]int64, len(rows))
	routes := make([]string, len(rows))
	costs := make([]int64, len(rows))
	statuses := make([]int64, len(rows))
	ats := make([]string, len(rows))
	for i, r := range rows {
		accounts[i], routes[i], costs[i], statuses[i] = r.account, r.route, r.cost, int64(r.status)
		ats[i] = r.at.UTC().Format(time.RFC3339Nano)
	}
	_, err := l.db.ExecContext(ctx, `
		INSERT INTO usage (account_id, route, cost, status, at)
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::int[], $4::smallint[], $5::timestamptz[])`,
		pq.Array(accounts), pq.Array(routes), pq.Array(costs), pq.Array(statuses), pq.Array(ats))
	return err
}
