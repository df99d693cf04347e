package rest_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/internal/syncbuf"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// TestAnswerBeforeAccessLine: a JSON answer carries its length and reaches
// the client before the access line is written. The log handler below holds
// the access line until the client has read the whole answer; were the
// answer sent after the line, the client would get it only once the
// handler gave up waiting, and the test fails.
func TestAnswerBeforeAccessLine(t *testing.T) {
	d, _ := dbtest.New(t)
	svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{})
	read := make(chan struct{})
	waited := make(chan bool, 1)
	log := slog.New(accessLineHandler{read: read, waited: waited})
	srv := httptest.NewServer(rest.NewRouter(rest.Deps{Service: svc, Logger: log}))
	defer srv.Close()

	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	close(read)
	if string(body) != `{"status":"ok"}` || resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) ||
		len(resp.TransferEncoding) != 0 {
		t.Errorf("answer: %s, Content-Length %q, Transfer-Encoding %v", body, resp.Header.Get("Content-Length"), resp.TransferEncoding)
	}
	select {
	case ok := <-waited:
		if !ok {
			t.Error("the access line was written before the client had the answer")
		}
	case <-time.After(10 * time.Second):
		t.Error("no access line")
	}
}

// accessLineHandler holds the access line ("request") until read is closed,
// for at most 3 s, and says on waited whether read came first.
type accessLineHandler struct {
	read   chan struct{}
	waited chan bool
}

func (accessLineHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h accessLineHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "request" {
		return nil
	}
	select {
	case <-h.read:
		h.waited <- true
	case <-time.After(3 * time.Second):
		h.waited <- false
	}
	return nil
}

func (h accessLineHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h accessLineHandler) WithGroup(string) slog.Handler      { return h }

// TestAccessLineLevel: at LOG_LEVEL=info each request writes its access
// line; at warn, one answered below 500 writes none, and the metrics count
// it all the same.
func TestAccessLineLevel(t *testing.T) {
	d, _ := dbtest.New(t)
	svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{})
	for _, c := range []struct {
		level slog.Level
		lines int
	}{{slog.LevelInfo, 2}, {slog.LevelWarn, 0}} {
		var out bytes.Buffer
		m := rest.NewMetrics(nil)
		h := rest.NewRouter(rest.Deps{Service: svc, Metrics: m,
			Logger: slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: c.level}))})
		for _, path := range []string{"/healthz", "/nope"} {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
		}
		if n := strings.Count(out.String(), `"msg":"request"`); n != c.lines {
			t.Errorf("level %s: %d access lines, want %d:\n%s", c.level, n, c.lines, out.String())
		}
		metrics := httptest.NewRecorder()
		m.Handler().ServeHTTP(metrics, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if !strings.Contains(metrics.Body.String(), `cnpjgraph_http_requests_total{method="GET",route="/healthz",status="200"} 1`) {
			t.Errorf("level %s: the request is not counted", c.level)
		}
	}
}

// TestAccessLineClient: behind a trusted proxy the access line names the
// client its X-Forwarded-For gives, with the proxy beside it; addresses a
// client wrote before the proxies' are not believed, nor the header of a
// peer that is not a trusted proxy.
func TestAccessLineClient(t *testing.T) {
	d, _ := dbtest.New(t)
	svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{})
	var out bytes.Buffer
	h := rest.NewRouter(rest.Deps{Service: svc, Logger: slog.New(slog.NewJSONHandler(&out, nil)),
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:1::/48")}})
	for _, c := range []struct{ peer, forwarded, want string }{
		{"10.0.0.5:41234", "203.0.113.7", `"remote":"203.0.113.7","proxy":"10.0.0.5:41234"`},
		{"10.0.0.5:41234", "198.51.100.1, 203.0.113.7, 10.0.0.9", `"remote":"203.0.113.7","proxy":"10.0.0.5:41234"`},
		{"10.0.0.5:41234", "10.0.0.8, 10.0.0.9", `"remote":"10.0.0.8","proxy":"10.0.0.5:41234"`},
		{"[2001:db8:1::2]:443", "[2001:db8::7]:5000", `"remote":"2001:db8::7","proxy":"[2001:db8:1::2]:443"`},
		{"10.0.0.5:41234", "", `"remote":"10.0.0.5:41234"}`},
		{"10.0.0.5:41234", "somebody", `"remote":"10.0.0.5:41234"}`},
		{"192.0.2.1:5555", "203.0.113.7", `"remote":"192.0.2.1:5555"}`},
	} {
		out.Reset()
		req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		req.RemoteAddr = c.peer
		if c.forwarded != "" {
			req.Header.Set("X-Forwarded-For", c.forwarded)
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("from %s, X-Forwarded-For %q: want %s in\n%s", c.peer, c.forwarded, c.want, out.String())
		}
	}
}

// TestClientClosedRequest: a request whose client closes its connection
// before the answer is logged (at info) and counted as 499, not as the
// 504 its canceled work was classified: the 5xx an operator alerts on are
// the server's. A request that runs out of the server's own deadline,
// its client still waiting, stays a 504 logged as an error.
func TestClientClosedRequest(t *testing.T) {
	d, _ := dbtest.New(t)
	svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{})
	var out syncbuf.Buffer
	m := rest.NewMetrics(nil)
	started := make(chan struct{}, 1)
	h := rest.NewRouter(rest.Deps{Service: svc, Metrics: m, RequestTimeout: 2 * time.Second,
		Logger: slog.New(slog.NewJSONHandler(&out, nil)),
		Mount: func(r chi.Router) {
			r.Get("/slow", func(w http.ResponseWriter, r *http.Request) {
				started <- struct{}{}
				<-r.Context().Done()
				rest.RenderError(w, r, r.Context().Err())
			})
		}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	// accessLine is the nth request's access line (0: the first), once
	// written.
	accessLine := func(n int) string {
		t.Helper()
		for range 200 {
			var lines []string
			for _, line := range strings.Split(out.String(), "\n") {
				if strings.Contains(line, `"msg":"request"`) {
					lines = append(lines, line)
				}
			}
			if len(lines) > n {
				return lines[n]
			}
			time.Sleep(25 * time.Millisecond)
		}
		t.Fatalf("no access line %d:\n%s", n, out.String())
		return ""
	}

	// The client leaves once the server has the request.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/slow", nil)
	go func() { <-started; cancel() }()
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_ = resp.Body.Close()
		t.Fatalf("the request's client was canceled, yet it got %s", resp.Status)
	}
	if line := accessLine(0); !strings.Contains(line, `"level":"INFO"`) || !strings.Contains(line, `"status":499`) {
		t.Errorf("a client that left: access line %s, want status 499 at INFO", line)
	}

	// The server's own deadline, the client waiting: 504.
	resp, err := http.Get(srv.URL + "/slow")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Errorf("past the request timeout: %s, want 504", resp.Status)
	}
	if line := accessLine(1); !strings.Contains(line, `"level":"ERROR"`) || !strings.Contains(line, `"status":504`) {
		t.Errorf("past the request timeout: access line %s, want status 504 at ERROR", line)
	}

	metrics := httptest.NewRecorder()
	m.Handler().ServeHTTP(metrics, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, status := range []string{"499", "504"} {
		if want := `cnpjgraph_http_requests_total{method="GET",route="/slow",status="` + status + `"} 1`; !strings.Contains(metrics.Body.String(), want) {
			t.Errorf("metrics: no %s", want)
		}
	}
}
