// Package auth authenticates and accounts every request: API keys, JWTs and
// signed URLs resolve to an account; the account's permissions, per-minute
// rate and daily credits decide whether the request runs; a ledger records
// what each request cost.
package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/redis/go-redis/v9"
)

// DefaultKeyCacheTTL is how long a credential lookup is reused by default.
const DefaultKeyCacheTTL = 2 * time.Second

// Config builds a Service. Zero values are usable except DB.
type Config struct {
	DB         *sqlx.DB
	JWTSecret  []byte // HS256 secret; empty: JWTs are refused
	SigningKey []byte // URL signature key; empty: a random per-process key (links die with the process)
	// RedisURL, when set, moves the per-minute counters to Redis so several
	// instances share one limit; RedisPrefix namespaces its keys. Redis
	// being unreachable, at start or later, is no error: the instance limits
	// on its own meanwhile (see redis.go).
	RedisURL    string
	RedisPrefix string
	// RedisTimeout bounds each limiter call to Redis (default
	// DefaultRedisTimeout); RedisProbeInterval is how often an unreachable
	// Redis is pinged (default DefaultRedisProbeInterval).
	RedisTimeout       time.Duration
	RedisProbeInterval time.Duration
	// KeyCacheTTL is how long a resolved credential is reused without asking
	// PostgreSQL; revocation and suspension take effect within it. 0 disables.
	KeyCacheTTL time.Duration
	// Unlimited turns the per-minute limit (and its headers) off.
	Unlimited bool
	// LedgerInterval is how often buffered ledger rows are written (default 500ms).
	LedgerInterval time.Duration
	// LedgerBuffer is how many rows may wait for the writer (default 8192);
	// beyond it rows are written synchronously, never dropped.
	LedgerBuffer int
	// UsageRetention is how long usage rows are kept: older ones are
	// deleted a minute after New and then every UsagePruneEvery (default
	// an hour). 0 keeps them forever.
	UsageRetention  time.Duration
	UsagePruneEvery time.Duration
	Now             func() time.Time // the clock; default time.Now
	Logger          *slog.Logger

	ledgerWrite func(context.Context, []usageRow) error // tests: where ledger batches go
}

// Service authenticates, limits and accounts requests. Safe for concurrent use.
type Service struct {
	db         *sqlx.DB
	stmts      statements
	jwtSecret  []byte
	signingKey []byte
	unlimited  bool
	now        func() time.Time
	log        *slog.Logger

	keys     *ttlCache[[32]byte]
	keysByID *ttlCache[int64] // keys of signed URLs
	accounts *ttlCache[int64]
	limiter  Limiter
	redis    *redis.Client
	shared   *redisLimiter // nil without REDIS_URL
	ledger   *ledger
	pruner   *pruner // nil: usage rows are kept forever
}

// New builds a Service; Close releases it (and writes the pending ledger rows).
func New(ctx context.Context, c Config) (*Service, error) {
	if c.DB == nil {
		return nil, errors.New("auth: Config.DB is required")
	}
	s := &Service{
		db:        c.DB,
		jwtSecret: c.JWTSecret,
		unlimited: c.Unlimited,
		now:       c.Now,
		log:       c.Logger,
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.signingKey = c.SigningKey
	if len(s.signingKey) == 0 {
		s.signingKey = make([]byte, 32)
		_, _ = rand.Read(s.signingKey)
		s.log.Warn("auth: SIGNING_KEY is not set; signed URLs are valid only until this process exits and only on this instance")
	}
	s.keys = newTTLCache[[32]byte](c.KeyCacheTTL, s.now, func(h [32]byte) uint64 { return uint64(h[0]) })
	s.keysByID = newTTLCache[int64](c.KeyCacheTTL, s.now, func(id int64) uint64 { return uint64(id) })
	s.accounts = newTTLCache[int64](c.KeyCacheTTL, s.now, func(id int64) uint64 { return uint64(id) })
	if err := s.stmts.prepare(ctx, c.DB); err != nil {
		return nil, err
	}
	local := newLocalLimiter(s.now)
	s.limiter = local
	if c.RedisURL != "" {
		opt, err := redis.ParseURL(c.RedisURL)
		if err != nil {
			s.stmts.close()
			return nil, fmt.Errorf("auth: REDIS_URL: %w", err)
		}
		timeout, probe := c.RedisTimeout, c.RedisProbeInterval
		if timeout <= 0 {
			timeout = DefaultRedisTimeout
		}
		if probe <= 0 {
			probe = DefaultRedisProbeInterval
		}
		s.redis = redisClient(opt, timeout)
		s.shared = newRedisLimiter(ctx, s.redis, c.RedisPrefix, timeout, probe, s.now, local, s.log)
		s.limiter = s.shared
	}
	interval := c.LedgerInterval
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	buffer := c.LedgerBuffer
	if buffer <= 0 {
		buffer = 8192
	}
	s.ledger = newLedger(c.DB, interval, buffer, s.log, c.ledgerWrite)
	if c.UsageRetention > 0 {
		every := c.UsagePruneEvery
		if every <= 0 {
			every = time.Hour
		}
		s.pruner = s.startPruner(c.UsageRetention, every)
	}
	return s, nil
}

// Flush writes the buffered ledger rows now.
func (s *Service) Flush(ctx context.Context) error { return s.ledger.flush(ctx) }

// Close writes the pending ledger rows and releases connections. Requests
// still running after Close record their ledger rows synchronously.
func (s *Service) Close() error {
	s.pruner.stop()
	err := s.ledger.close()
	s.stmts.close()
	if s.shared != nil {
		s.shared.close()
	}
	if s.redis != nil {
		err = errors.Join(err, s.redis.Close())
	}
	return err
}

// SharedLimits reports whether the per-minute limits are shared through
// Redis right now: false without REDIS_URL and while Redis is unreachable.
func (s *Service) SharedLimits() bool { return s.shared != nil && s.shared.shared() }

// Degraded lists what this instance does in a degraded way right now, for
// /readyz: limiting per instance while the configured Redis is unreachable.
// Empty when all is well.
func (s *Service) Degraded() []string {
	if s.shared != nil && !s.shared.shared() {
		return []string{"redis is unreachable: per-minute limits are per instance"}
	}
	return nil
}
