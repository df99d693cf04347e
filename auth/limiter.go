package auth

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
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

// limitScript checks and counts in one round trip, atomically: a refused
// request counts nothing, and the window's key expires after the window.
var limitScript = redis.NewScript(`
local n = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if cur + n > limit then
  return {0, cur}
end
cur = redis.call('INCRBY', KEYS[1], n)
if cur == n then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return {1, cur}
`)

// redisLimiter shares the counters between instances. Windows are named by
// wall-clock minute, so instances agree on them without talking. When Redis
// fails, it limits locally rather than refusing the whole API.
type redisLimiter struct {
	client   *redis.Client
	prefix   string
	now      func() time.Time
	fallback *localLimiter
	log      *slog.Logger
	lastLog  atomic.Int64
}

func newRedisLimiter(c *redis.Client, prefix string, now func() time.Time, fallback *localLimiter, log *slog.Logger) *redisLimiter {
	return &redisLimiter{client: c, prefix: prefix, now: now, fallback: fallback, log: log}
}

func (l *redisLimiter) Allow(ctx context.Context, accountID int64, limit, n int) (Decision, error) {
	now := l.now()
	w, reset := windowOf(now)
	key := l.prefix + "rl:" + strconv.FormatInt(accountID, 10) + ":" + strconv.FormatInt(w, 10)
	ttl := (reset + time.Second).Milliseconds()
	res, err := limitScript.Run(ctx, l.client, []string{key}, n, limit, ttl).Int64Slice()
	if err != nil || len(res) != 2 {
		if last := l.lastLog.Load(); now.Unix()-last >= 60 && l.lastLog.CompareAndSwap(last, now.Unix()) {
			l.log.Error("auth: redis rate limiter failed; limiting per instance", "err", err)
		}
		return l.fallback.Allow(ctx, accountID, limit, n)
	}
	return Decision{Allowed: res[0] == 1, Limit: limit, Remaining: max(0, limit-int(res[1])), Reset: reset}, nil
}

// Allow counts n requests of an account against its per-minute limit.
func (s *Service) Allow(ctx context.Context, accountID int64, limit, n int) (Decision, error) {
	return s.limiter.Allow(ctx, accountID, limit, n)
}
