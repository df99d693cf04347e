package auth

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// With Redis unreachable the limit still holds, per instance.
func TestRedisDownFallsBackToLocal(t *testing.T) {
	t.Parallel()
	now := func() time.Time { return time.Date(2026, 3, 10, 12, 0, 30, 0, time.UTC) }
	client := redisClient(&redis.Options{Addr: "127.0.0.1:1"}, DefaultRedisTimeout)
	defer client.Close()
	l := newRedisLimiter(context.Background(), client, "t:", DefaultRedisTimeout, time.Hour, now, newLocalLimiter(now), slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer l.close()
	if l.shared() {
		t.Fatal("an unreachable Redis at start must open the breaker")
	}
	for i := range 3 {
		d, err := l.Allow(context.Background(), 1, 2, 1)
		if err != nil || d.Allowed != (i < 2) || d.Reset != 30*time.Second {
			t.Fatalf("request %d: %+v %v", i, d, err)
		}
	}
}
