package auth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// BenchmarkMiddleware measures what authentication and accounting add to a
// trivial handler: API key (cached lookup), permission, per-minute limit,
// context, ledger row. Run: go test ./auth -run '^$' -bench Middleware -benchmem
// (the time of +ledger includes writing its rows: the Flush is timed).
func BenchmarkMiddleware(b *testing.B) {
	d, _ := dbtest.New(b)
	ctx := context.Background()
	// A rate no benchmark reaches: the limiter runs on every request but never refuses.
	if err := SetPlan(ctx, d, Plan{Name: "bench", CreditsPerDay: 0, RequestsPerMinute: 1 << 30}); err != nil {
		b.Fatal(err)
	}
	if _, err := CreateAccount(ctx, d, "bench", "bench", nil, time.Now()); err != nil {
		b.Fatal(err)
	}
	a, err := FindAccount(ctx, d, "bench", time.Now())
	if err != nil {
		b.Fatal(err)
	}
	_, key, err := AddKey(ctx, d, a.ID, "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	trivial := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	perm := DoorPermission

	run := func(b *testing.B, h http.Handler) {
		b.ReportAllocs()
		b.SetParallelism(16) // like a server's many connections: Redis round trips overlap
		b.RunParallel(func(pb *testing.PB) {
			req := httptest.NewRequest(http.MethodGet, office, nil)
			req.Header.Set("Authorization", key)
			for pb.Next() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					panic(fmt.Sprint("status ", w.Code))
				}
			}
		})
	}
	b.Run("none", func(b *testing.B) { run(b, trivial) })
	discard := func(context.Context, []usageRow) error { return nil }
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		// The ledger's rows are discarded here, to measure this process's
		// share; "+ledger" adds the PostgreSQL COPY of every row.
		{"key", Config{Unlimited: true, ledgerWrite: discard}},
		{"key+limit", Config{ledgerWrite: discard}},
		{"key+redis-limit", Config{ledgerWrite: discard, RedisURL: redisURL(), RedisPrefix: fmt.Sprintf("cnpjgraph-bench:%d:", time.Now().UnixNano())}},
		{"key+limit+ledger", Config{}},
	} {
		b.Run(c.name, func(b *testing.B) {
			cfg := c.cfg
			cfg.DB, cfg.KeyCacheTTL, cfg.SigningKey = d, DefaultKeyCacheTTL, []byte("bench")
			svc, err := New(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer svc.Close()
			run(b, svc.Middleware(perm, testRender)(trivial))
			if err := svc.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkLocalLimiter: the in-process limiter with every goroutine on one
// account, its worst case (one shard, one mutex).
func BenchmarkLocalLimiter(b *testing.B) {
	l := newLocalLimiter(time.Now)
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if d, _ := l.Allow(context.Background(), 1, 1<<30, 1); !d.Allowed {
				panic("refused")
			}
		}
	})
}
