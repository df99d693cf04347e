package auth

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("JWT_SECRET", "j")
	t.Setenv("SIGNING_KEY", "s")
	t.Setenv("REDIS_URL", "redis://127.0.0.1:6379/1")
	t.Setenv("AUTH_KEY_CACHE_TTL", "0")
	t.Setenv("COST_STREET", "7")
	c, err := ConfigFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if string(c.JWTSecret) != "j" || string(c.SigningKey) != "s" || c.RedisURL == "" || c.KeyCacheTTL != 0 ||
		c.Costs != (Costs{Online: 1, Certificate: 1, Map: 3, Street: 7}) {
		t.Fatalf("%+v", c)
	}
	t.Setenv("COST_MAP", "-1")
	if _, err := ConfigFromEnv(); err == nil {
		t.Fatal("negative cost accepted")
	}
	t.Setenv("COST_MAP", "3")
	t.Setenv("AUTH_KEY_CACHE_TTL", "soon")
	if _, err := ConfigFromEnv(); err == nil {
		t.Fatal("bad duration accepted")
	}
}

// With Redis unreachable the limit still holds, per instance.
func TestRedisDownFallsBackToLocal(t *testing.T) {
	t.Parallel()
	now := func() time.Time { return time.Date(2026, 3, 10, 12, 0, 30, 0, time.UTC) }
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer client.Close()
	l := newRedisLimiter(client, "t:", now, newLocalLimiter(now), slog.New(slog.NewTextHandler(io.Discard, nil)))
	for i := range 3 {
		d, err := l.Allow(context.Background(), 1, 2, 1)
		if err != nil || d.Allowed != (i < 2) || d.Reset != 30*time.Second {
			t.Fatalf("request %d: %+v %v", i, d, err)
		}
	}
}
