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

// One Redis policy, the same at start and at runtime: Redis shares the
// per-minute counters between instances while it answers; when it does not,
// each instance limits on its own and keeps serving. Concretely:
//
//   - every limiter call is bounded by the Redis timeout (tens of
//     milliseconds), and the client neither retries nor waits seconds to
//     dial, read or write;
//   - breakerFailures consecutive failed calls open the breaker (at start,
//     one failed ping does): calls then skip Redis entirely and count
//     locally, so an outage costs a request nothing;
//   - while the breaker is open a background probe pings Redis every probe
//     interval; the first answer closes it;
//   - each change of state is logged once and readable (SharedLimits,
//     Degraded) for the metric and /readyz.

// Defaults of the Redis policy.
const (
	DefaultRedisTimeout       = 50 * time.Millisecond
	DefaultRedisProbeInterval = time.Second
	breakerFailures           = 3
)

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

// redisClient is a client that fails fast: one dial attempt within the
// timeout, no retries, reads, writes and pool waits within the timeout,
// and the caller's deadline honoured.
func redisClient(opt *redis.Options, timeout time.Duration) *redis.Client {
	quietRedis.Do(func() { redis.SetLogger(silent{}) })
	opt.DialTimeout = timeout
	opt.DialerRetries = 1
	opt.ReadTimeout = timeout
	opt.WriteTimeout = timeout
	opt.PoolTimeout = timeout
	opt.MaxRetries = -1
	opt.ContextTimeoutEnabled = true
	opt.DisableIdentity = true // one round trip less on each new connection
	return redis.NewClient(opt)
}

// quietRedis silences go-redis's own log (process-wide: it has no other),
// which writes a line per failed dial: an outage is logged once, by the
// limiter, when its state changes.
var quietRedis sync.Once

type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}

// redisLimiter shares the counters between instances. Windows are named by
// wall-clock minute, so instances agree on them without talking.
type redisLimiter struct {
	client   *redis.Client
	prefix   string
	now      func() time.Time
	timeout  time.Duration
	fallback *localLimiter
	log      *slog.Logger

	failures atomic.Int32 // consecutive failed calls
	open     atomic.Bool  // the breaker: Redis is unreachable, count locally
	stop     chan struct{}
	stopped  sync.WaitGroup
}

// newRedisLimiter pings Redis once (the start follows the same rule as the
// rest: no answer opens the breaker) and starts the probe.
func newRedisLimiter(ctx context.Context, c *redis.Client, prefix string, timeout, probeEvery time.Duration, now func() time.Time, fallback *localLimiter, log *slog.Logger) *redisLimiter {
	l := &redisLimiter{client: c, prefix: prefix, now: now, timeout: timeout, fallback: fallback, log: log, stop: make(chan struct{})}
	if err := l.ping(ctx); err != nil {
		l.open.Store(true)
		l.log.Warn("auth: redis is unreachable at start: per-minute limits are per instance until it answers", "err", err)
	}
	l.stopped.Add(1)
	go l.probe(probeEvery)
	return l
}

func (l *redisLimiter) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	return l.client.Ping(ctx).Err()
}

func (l *redisLimiter) Allow(ctx context.Context, accountID int64, limit, n int) (Decision, error) {
	if l.open.Load() {
		return l.fallback.Allow(ctx, accountID, limit, n)
	}
	w, reset := windowOf(l.now())
	key := l.prefix + "rl:" + strconv.FormatInt(accountID, 10) + ":" + strconv.FormatInt(w, 10)
	ttl := (reset + time.Second).Milliseconds()
	cctx, cancel := context.WithTimeout(ctx, l.timeout)
	res, err := limitScript.Run(cctx, l.client, []string{key}, n, limit, ttl).Int64Slice()
	cancel()
	if err == nil && len(res) == 2 {
		l.failures.Store(0)
		return Decision{Allowed: res[0] == 1, Limit: limit, Remaining: max(0, limit-int(res[1])), Reset: reset}, nil
	}
	// A request that was cancelled or timed out on its own says nothing
	// about Redis.
	if ctx.Err() == nil && l.failures.Add(1) >= breakerFailures && l.open.CompareAndSwap(false, true) {
		l.log.Warn("auth: redis is unreachable: per-minute limits are per instance until it answers", "err", err)
	}
	return l.fallback.Allow(ctx, accountID, limit, n)
}

// probe closes the breaker as soon as Redis answers a ping again.
func (l *redisLimiter) probe(every time.Duration) {
	defer l.stopped.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if !l.open.Load() || l.ping(context.Background()) != nil {
			continue
		}
		l.failures.Store(0)
		if l.open.CompareAndSwap(true, false) {
			l.log.Info("auth: redis answers again: per-minute limits are shared")
		}
	}
}

func (l *redisLimiter) close() {
	close(l.stop)
	l.stopped.Wait()
}

// shared reports whether the counters are in Redis right now.
func (l *redisLimiter) shared() bool { return !l.open.Load() }
