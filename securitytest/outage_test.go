package securitytest_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/auth"
)

// TestRedisOutageUnderLoad ("Done when"): Redis hangs, comes back, is
// killed and restarted on the same port while clients keep a server busy;
// no request waits on Redis longer than the limiter timeout. The bound,
// 10× the timeout plus the normal latency (the slowest request while Redis
// was up, at least 100 ms), is generous for a shared machine under the
// race detector; with the client defaults this replaced (5 s dial, 3 s
// read, retries) and no breaker, requests took over a second.
//
// The figures: go test ./securitytest -run OutageUnderLoad -v
func TestRedisOutageUnderLoad(t *testing.T) {
	r := newPrivateRedis(t, freePort(t))
	r.start()
	w := newWorld(t, worldOptions{redisURL: r.url(), keyCacheTTL: auth.DefaultKeyCacheTTL})
	_, key := w.key(w.account(), nil)
	srv := httptest.NewServer(w.h)
	t.Cleanup(srv.Close)

	type phase struct {
		name      string
		latencies []time.Duration
		failures  []string
	}
	var (
		mu      sync.Mutex
		phases  []*phase
		current atomic.Pointer[phase]
		stop    atomic.Bool
		clients sync.WaitGroup
	)
	enter := func(name string) {
		p := &phase{name: name}
		mu.Lock()
		phases = append(phases, p)
		mu.Unlock()
		current.Store(p)
	}
	enter("redis up")
	for range 4 {
		clients.Go(func() {
			for !stop.Load() {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", strings.NewReader(`{"query":"{ __typename }"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", key)
				p := current.Load()
				start := time.Now()
				res, err := srv.Client().Do(req)
				took := time.Since(start)
				mu.Lock()
				p.latencies = append(p.latencies, took)
				switch {
				case err != nil:
					p.failures = append(p.failures, err.Error())
				case res.StatusCode != http.StatusOK:
					p.failures = append(p.failures, res.Status)
				}
				mu.Unlock()
				if err == nil {
					_ = res.Body.Close()
				}
			}
		})
	}
	// Each phase's requests are counted from the change that starts it.
	time.Sleep(500 * time.Millisecond)
	r.pause()
	enter("redis hangs (SIGSTOP)")
	time.Sleep(time.Second)
	w.waitReadiness(degraded)
	r.resume()
	enter("redis resumed")
	w.waitReadiness(ready)
	time.Sleep(500 * time.Millisecond)
	r.stop()
	enter("redis killed")
	time.Sleep(time.Second)
	w.waitReadiness(degraded)
	r.start()
	enter("redis restarted")
	w.waitReadiness(ready)
	time.Sleep(500 * time.Millisecond)
	stop.Store(true)
	clients.Wait()

	var worst, normal time.Duration
	for _, p := range phases {
		if len(p.latencies) == 0 {
			continue
		}
		slices.Sort(p.latencies)
		longest := p.latencies[len(p.latencies)-1]
		worst = max(worst, longest)
		if p == phases[0] {
			normal = longest
		}
		t.Logf("%-22s %5d requests  p50 %6.1f ms  p99 %6.1f ms  max %6.1f ms", p.name, len(p.latencies),
			ms(p.latencies[len(p.latencies)/2]), ms(p.latencies[len(p.latencies)*99/100]), ms(longest))
		if len(p.failures) > 0 {
			t.Errorf("%s: %d requests failed, first: %s", p.name, len(p.failures), p.failures[0])
		}
	}
	normal = max(normal, 100*time.Millisecond)
	bound := 10*auth.DefaultRedisTimeout + normal
	t.Logf("slowest request: %.1f ms (bound %.0f ms = 10 × REDIS_TIMEOUT %s + normal latency %.0f ms)", ms(worst), ms(bound), auth.DefaultRedisTimeout, ms(normal))
	if worst > bound {
		t.Errorf("a request took %s during the outage, above %s", worst, bound)
	}
	if n, m := w.log.count("redis is unreachable"), w.log.count("redis answers again"); n != 2 || m != 2 {
		t.Errorf("logged %d outages and %d recoveries, want 2 of each:\n%s", n, m, w.log.String())
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
