package auth

import (
	"context"
	"sync"
	"time"
)

// Decision is the outcome of a rate-limit check.
type Decision struct {
	Allowed   bool
	Limit     int
	Remaining int
	Reset     time.Duration // until the current window ends
}

// Limiter counts requests per account in fixed one-minute windows.
// Allow counts n requests at once (a GraphQL query's lookups) and refuses,
// counting nothing, when they would exceed limit.
type Limiter interface {
	Allow(ctx context.Context, accountID int64, limit, n int) (Decision, error)
}

const window = time.Minute

func windowOf(now time.Time) (index int64, reset time.Duration) {
	ns := now.UnixNano()
	w := ns / int64(window)
	return w, time.Duration((w+1)*int64(window) - ns)
}

// localLimiter keeps the counters in this process. A shard holds only the
// current window's counters and forgets them all when the window turns, so
// memory is bounded by the accounts active in one minute.
type localLimiter struct {
	now    func() time.Time
	shards [64]limitShard
}

type limitShard struct {
	mu     sync.Mutex
	window int64
	counts map[int64]int
}

func newLocalLimiter(now func() time.Time) *localLimiter {
	l := &localLimiter{now: now}
	for i := range l.shards {
		l.shards[i].counts = make(map[int64]int)
	}
	return l
}

func (l *localLimiter) Allow(_ context.Context, accountID int64, limit, n int) (Decision, error) {
	w, reset := windowOf(l.now())
	sh := &l.shards[uint64(accountID)%uint64(len(l.shards))]
	sh.mu.Lock()
	if sh.window != w {
		clear(sh.counts)
		sh.window = w
	}
	c := sh.counts[accountID]
	allowed := c+n <= limit
	if allowed {
		c += n
		sh.counts[accountID] = c
	}
	sh.mu.Unlock()
	return Decision{Allowed: allowed, Limit: limit, Remaining: max(0, limit-c), Reset: reset}, nil
}

// Allow counts n requests of an account against its per-minute limit.
func (s *Service) Allow(ctx context.Context, accountID int64, limit, n int) (Decision, error) {
	return s.limiter.Allow(ctx, accountID, limit, n)
}
