package securitytest_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/auth"
)

// privateRedis is a redis-server of the test's own, on a loopback port,
// that the test stops, pauses and restarts (never the machine's shared one).
type privateRedis struct {
	t    *testing.T
	port int
	dir  string
	cmd  *exec.Cmd
}

// freePort is a loopback port nobody listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func newPrivateRedis(t *testing.T, port int) *privateRedis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not installed (make test installs it: scripts/redis.sh)")
	}
	r := &privateRedis{t: t, port: port, dir: t.TempDir()}
	t.Cleanup(r.stop)
	return r
}

func (r *privateRedis) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

// start runs the server and waits until it answers PING.
func (r *privateRedis) start() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server", "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir)
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !r.answers() {
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server on port %d does not answer", r.port)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *privateRedis) answers() bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", r.port), 100*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// stop kills the server: its clients' connections are refused from then on.
func (r *privateRedis) stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	_ = r.cmd.Process.Signal(syscall.SIGCONT) // a paused server must be able to die
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}

// pause stops the server without closing anything: connections are
// accepted, and never answered, as with a server that hangs.
func (r *privateRedis) pause()  { _ = r.cmd.Process.Signal(syscall.SIGSTOP) }
func (r *privateRedis) resume() { _ = r.cmd.Process.Signal(syscall.SIGCONT) }

// readiness is what /readyz and the metric say of the limits.
func (w *world) readiness() (status string, shared string) {
	w.t.Helper()
	a := w.get("/readyz", "")
	if a.status != 200 {
		w.t.Fatalf("/readyz: %d %s", a.status, a.raw)
	}
	status = fmt.Sprint(a.body["status"])
	if d, ok := a.body["degraded"]; ok {
		status += fmt.Sprint(" ", d)
	}
	m := w.get("/metrics", "")
	for line := range strings.SplitSeq(string(m.raw), "\n") {
		if v, ok := strings.CutPrefix(line, "cnpjgraph_rate_limits_shared "); ok {
			shared = v
		}
	}
	return status, shared
}

const (
	degraded = "degraded [redis is unreachable: per-minute limits are per instance]"
	ready    = "ready"
)

// waitReadiness polls until /readyz says want (the probe runs every 100 ms
// here; go-redis dials again at most every second after a refused dial).
func (w *world) waitReadiness(want string) {
	w.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, _ := w.readiness()
		if status == want {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("/readyz still says %q, want %q", status, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tightKey is a key of an account limited to rate requests a minute.
func (w *world) tightKey(rate int) string {
	w.t.Helper()
	name := "tight" + strconv.Itoa(rate)
	if err := auth.SetPlan(context.Background(), w.db, auth.Plan{Name: name, CreditsPerDay: 1000, RequestsPerMinute: rate}); err != nil {
		w.t.Fatal(err)
	}
	a := w.account()
	if err := auth.ChangePlan(context.Background(), w.db, a.ID, name, now); err != nil {
		w.t.Fatal(err)
	}
	_, secret := w.key(a, nil)
	return secret
}

// limited sends n+1 office lookups: n answer, the next is 429.
func (w *world) limited(key string, n int) {
	w.t.Helper()
	for i := range n + 1 {
		a := w.get("/office/33683111000280?strategy=CACHE", key)
		if want := map[bool]int{true: 200, false: 429}[i < n]; a.status != want {
			w.t.Fatalf("request %d of a %d/minute key: %d %s, want %d", i+1, n, a.status, a.raw, want)
		}
	}
}

// TestRedisDownAtStart: serve starts with Redis unreachable, limits per
// instance, says so (readyz, metric, one log line), and shares the limits
// as soon as Redis answers.
func TestRedisDownAtStart(t *testing.T) {
	r := newPrivateRedis(t, freePort(t))
	w := newWorld(t, worldOptions{redisURL: r.url()})
	if status, shared := w.readiness(); status != degraded || shared != "0" {
		t.Errorf("Redis down at start: readyz %q, metric %q; want %q and 0", status, shared, degraded)
	}
	w.limited(w.tightKey(2), 2) // per instance, but limited

	r.start()
	w.waitReadiness(ready)
	if _, shared := w.readiness(); shared != "1" {
		t.Errorf("Redis up: metric %q, want 1", shared)
	}
	w.limited(w.tightKey(2), 2) // in Redis now
	if n, m := w.log.count("redis is unreachable"), w.log.count("redis answers again"); n != 1 || m != 1 {
		t.Errorf("logged %d outages and %d recoveries, want one each:\n%s", n, m, w.log.String())
	}
}

// TestRedisDownAtRuntime: Redis killed while serving, then restarted on
// the same port: the instance keeps answering, limits per instance in
// between, and logs and reports each change once.
func TestRedisDownAtRuntime(t *testing.T) {
	r := newPrivateRedis(t, freePort(t))
	r.start()
	w := newWorld(t, worldOptions{redisURL: r.url()})
	if status, shared := w.readiness(); status != ready || shared != "1" {
		t.Fatalf("Redis up: readyz %q, metric %q", status, shared)
	}
	_, key := w.key(w.account(), nil)
	r.stop()
	for range 20 {
		if a := w.get("/office/33683111000280?strategy=CACHE", key); a.status != 200 {
			t.Fatalf("with Redis gone: %d %s", a.status, a.raw)
		}
	}
	if status, shared := w.readiness(); status != degraded || shared != "0" {
		t.Errorf("Redis gone: readyz %q, metric %q; want %q and 0", status, shared, degraded)
	}
	w.limited(w.tightKey(3), 3)

	r.start()
	w.waitReadiness(ready)
	w.limited(w.tightKey(3), 3)
	if n, m := w.log.count("redis is unreachable"), w.log.count("redis answers again"); n != 1 || m != 1 {
		t.Errorf("logged %d outages and %d recoveries, want one each:\n%s", n, m, w.log.String())
	}
}
