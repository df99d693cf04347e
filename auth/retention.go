package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// usagePruneBatch bounds the rows one DELETE removes: a first prune of
// years of rows then neither writes one huge transaction nor holds its
// row locks for long.
const usagePruneBatch = 50_000

// pruneUsage deletes the usage rows older than before, at most batch rows
// per statement, and returns how many it deleted. It goes account by
// account, through the ledger's one index (account_id, at): an index on at
// alone would cost every request a second index insert, for a job that
// runs once an hour.
func pruneUsage(ctx context.Context, d *sqlx.DB, before time.Time, batch int) (int64, error) {
	var accounts []int64
	if err := d.SelectContext(ctx, &accounts, `SELECT id FROM accounts ORDER BY id`); err != nil {
		return 0, fmt.Errorf("auth: prune usage: %w", err)
	}
	var total int64
	for _, id := range accounts {
		for {
			res, err := d.ExecContext(ctx, `DELETE FROM usage WHERE ctid = ANY (ARRAY(
				SELECT ctid FROM usage WHERE account_id = $1 AND at < $2 LIMIT $3))`, id, before, batch)
			if err != nil {
				return total, fmt.Errorf("auth: prune usage of account %d: %w", id, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return total, fmt.Errorf("auth: prune usage of account %d: %w", id, err)
			}
			total += n
			if n < int64(batch) {
				break
			}
		}
	}
	return total, nil
}

// pruner deletes the ledger's expired rows now and then, off the request
// path. Several instances may prune at once: the deletes are idempotent.
type pruner struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *Service) startPruner(retention, every time.Duration) *pruner {
	ctx, cancel := context.WithCancel(context.Background())
	p := &pruner{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTimer(min(time.Minute, every)) // not during start-up
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			before := s.now().Add(-retention)
			n, err := pruneUsage(ctx, s.db, before, usagePruneBatch)
			switch {
			case err != nil && ctx.Err() == nil:
				s.log.Error("auth: usage ledger: prune failed; will retry", "err", err)
			case n > 0:
				s.log.Info("auth: usage ledger: pruned old rows", "rows", n, "before", before.UTC().Format(time.DateOnly))
			}
			t.Reset(every)
		}
	}()
	return p
}

func (p *pruner) stop() {
	if p == nil {
		return
	}
	p.cancel()
	<-p.done
}
