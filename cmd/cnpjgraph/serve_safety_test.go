package main

import (
	"bytes"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/config"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/internal/syncbuf"
)

// TestPlaygroundKeyOnLoopbackOnly: the open playground page embeds a key
// only when the API listens on this machine alone.
func TestPlaygroundKeyOnLoopbackOnly(t *testing.T) {
	for _, c := range []struct {
		addr     string
		embedded bool
	}{
		{"127.0.0.1:8080", true}, {"127.0.0.2:8080", true}, {"localhost:8080", true}, {"[::1]:8080", true},
		{":8080", false}, {"0.0.0.0:8080", false}, {"[::]:8080", false}, {"10.0.0.5:8080", false}, {"api.example.com:8080", false},
	} {
		var log bytes.Buffer
		got := playgroundKey(config.Server{Addr: c.addr, PlaygroundAPIKey: "cg_key"}, slog.New(slog.NewTextHandler(&log, nil)))
		if want := map[bool]string{true: "cg_key", false: ""}[c.embedded]; got != want {
			t.Errorf("%s: embedded %q, want %q", c.addr, got, want)
		}
		if warned := strings.Contains(log.String(), "PLAYGROUND_API_KEY ignored"); warned == c.embedded {
			t.Errorf("%s: warning logged %v, want %v", c.addr, warned, !c.embedded)
		}
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestServeSafely runs `cnpjgraph serve` with Redis unreachable, metrics on
// their own listener, a playground key on loopback, and passwords in every
// URL: it starts and serves, readyz says degraded, /metrics answers only on
// METRICS_ADDR with the limiter's state, the key is embedded, and no
// password reaches its log.
func TestServeSafely(t *testing.T) {
	d, dbURL := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	_ = d.Close()
	u, _ := url.Parse(dbURL)
	u.User = url.UserPassword(u.User.Username(), "hunter2-db") // trust authentication ignores it
	api, metrics, nobody := freePort(t), freePort(t), freePort(t)

	cmd := command([]string{"DATABASE_URL=" + u.String(), "DB_MAX_OPEN_CONNS=4", "DB_MAX_IDLE_CONNS=2",
		"ADDR=" + api, "METRICS_ADDR=" + metrics,
		"REDIS_URL=redis://:hunter2-redis@" + nobody + "/0",
		"UPSTREAM_URL=http://central:hunter2-upstream@" + nobody,
		"PLAYGROUND_API_KEY=cg_playground-key-for-the-test",
		"SIGNING_KEY=signing-key-for-the-serve-test-0123456789"}, "serve")
	var stderr syncbuf.Buffer // read while the command runs
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var exitErr error
	exited := make(chan struct{}) // closed when serve has exited, with exitErr
	go func() { exitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})

	get := func(addr, path string) (int, string) { return httpGet(addr, path, "") }
	deadline := time.Now().Add(30 * time.Second)
	for {
		if status, _ := get(api, "/healthz"); status == 200 {
			break
		}
		select {
		case <-exited:
			t.Fatalf("serve exited with Redis unreachable (%v):\n%s", exitErr, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve does not answer:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	for _, c := range []struct {
		addr, path string
		status     int
		contains   string
	}{
		{api, "/readyz", 200, `"status":"degraded","degraded":["redis is unreachable: per-minute limits are per instance"]`},
		{api, "/metrics", 404, `"code":404`},
		{metrics, "/metrics", 200, "\ncnpjgraph_rate_limits_shared 0\n"},
		{metrics, "/readyz", 404, ""},
		{api, "/playground", 200, "cg_playground-key-for-the-test"},
		{api, "/office/" + dbtest.SerproBranch + "?strategy=CACHE", 401, "missing authorization"},
	} {
		status, body := get(c.addr, c.path)
		if status != c.status || !strings.Contains(body, c.contains) {
			t.Errorf("%s%s: %d %.300s, want %d with %q", c.addr, c.path, status, body, c.status, c.contains)
		}
	}

	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		if exitErr != nil {
			t.Errorf("serve exited with %v after SIGTERM", exitErr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
	log := stderr.String()
	if strings.Contains(log, "hunter2") {
		t.Errorf("a password reached the log:\n%s", log)
	}
	for _, want := range []string{"http://central:xxxxx@" + nobody, "redis://:xxxxx@" + nobody, "redis is unreachable at start"} {
		if strings.Count(log, want) != 1 {
			t.Errorf("the log has %q %d times, want once:\n%s", want, strings.Count(log, want), log)
		}
	}
}

// TestAddressInUse: `serve` whose metrics address is taken, and `dev` (make
// run) whose address is taken, stop at once saying which address and why;
// serve logs no "listening" line for an address it never held, and dev
// prints no key for a server that could not start.
func TestAddressInUse(t *testing.T) {
	d, dbURL := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	_ = d.Close()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	want := "listen on " + addr + ": the address is in use by another process"
	for _, c := range []struct {
		name string
		env  []string
		args []string
		not  string
	}{
		{"serve", []string{"ADDR=" + freePort(t), "METRICS_ADDR=" + addr}, []string{"serve"}, `"msg":"listening"`},
		{"dev", []string{"ADDR=" + addr, "CNPJGRAPH_SHARED=" + t.TempDir()}, []string{"dev", "-sample", t.TempDir()}, "development API key"},
	} {
		cmd := command(append([]string{"DATABASE_URL=" + dbURL}, c.env...), c.args...)
		done := make(chan struct{})
		var out []byte
		var runErr error
		go func() { out, runErr = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("%s: still running with its address taken:\n%s", c.name, out)
		}
		if runErr == nil || !strings.Contains(string(out), want) || strings.Contains(string(out), c.not) {
			t.Errorf("%s: exit %v, output:\n%s\nwant a failure saying %q, without %q", c.name, runErr, out, want, c.not)
		}
	}
}
