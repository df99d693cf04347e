package upstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/cnpjgraph/cnpjgraph/upstream"
)

// now is the tests' clock: 10 days after the fixture's data, so the
// fixture is fresh under the default maxAge whatever day the tests run.
var now = dbtest.Reference().Add(10 * 24 * time.Hour)

// counter counts the requests a handler serves, per path.
type counter struct {
	mu    sync.Mutex
	paths map[string]int
}

func (c *counter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		if c.paths == nil {
			c.paths = map[string]int{}
		}
		c.paths[pathKind(r.URL.Path)]++
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// pathKind is the route asked: /rfb, /simples or /office.
func pathKind(p string) string {
	if strings.HasPrefix(p, "/office/") {
		return "/office"
	}
	return p
}

func (c *counter) get(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paths[path]
}

func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.paths {
		n += v
	}
	return n
}

// central is instance A: the fixture snapshot, no upstream, served over
// real HTTP on 127.0.0.1, counting the requests it gets. delay, when set,
// holds every answer that long.
type central struct {
	srv   *httptest.Server
	calls *counter
	delay atomic.Int64 // nanoseconds
}

func newCentral(t testing.TB) *central {
	t.Helper()
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{Now: func() time.Time { return now }})
	a := &central{calls: &counter{}}
	h := a.calls.wrap(rest.NewRouter(rest.Deps{Service: svc, RequestTimeout: 10 * time.Second}))
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := time.Duration(a.delay.Load()); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done(): // the client gave up
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// edge is instance B: its own database (empty unless the test loads a
// snapshot) and an upstream.
type edge struct {
	srv     *httptest.Server
	h       http.Handler
	db      *sqlx.DB
	store   *db.Store
	clock   atomic.Int64 // unix nanoseconds of the service clock
	charged atomic.Int64 // credits charged
	queries atomic.Int64 // SQL round trips
}

// creditCounter is a meter that admits everything and counts the credits
// charged: reserved and not refunded.
type creditCounter struct{ charged *atomic.Int64 }

func (creditCounter) Admit(context.Context, string) error { return nil }

func (c creditCounter) Reserve(_ context.Context, n int) error {
	c.charged.Add(int64(n))
	return nil
}

func (c creditCounter) Refund(_ context.Context, n int) { c.charged.Add(-int64(n)) }

type edgeOptions struct {
	snapshot bool // load the fixture snapshot into B's database
	config   func(*upstream.Config)
}

func newEdge(t testing.TB, upstreamURL string, o edgeOptions) *edge {
	t.Helper()
	d, _ := dbtest.New(t)
	if o.snapshot {
		dbtest.LoadFixture(t, d)
	}
	// Enough connections for concurrent tests, well below the server's limit.
	d.SetMaxOpenConns(16)
	cfg := upstream.Config{URL: upstreamURL, Key: "edge-key"}
	if o.config != nil {
		o.config(&cfg)
	}
	client, err := upstream.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := &edge{db: d}
	b.clock.Store(now.UnixNano())
	b.store = db.NewStore(d, db.StoreOptions{OnQuery: func(string) { b.queries.Add(1) }})
	svc := service.New(b.store, service.Options{
		Source: client,
		Now:    func() time.Time { return time.Unix(0, b.clock.Load()).UTC() },
		Meter:  creditCounter{&b.charged},
	})
	b.h = rest.NewRouter(rest.Deps{Service: svc, RequestTimeout: 10 * time.Second})
	b.srv = httptest.NewServer(b.h)
	t.Cleanup(b.srv.Close)
	return b
}

type response struct {
	status int
	body   []byte
}

// get asks B over HTTP.
func (b *edge) get(t testing.TB, target string) response {
	t.Helper()
	return httpGet(t, b.srv.URL+target)
}

func httpGet(t testing.TB, u string) response {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, body: body}
}

// object decodes a JSON object body, keeping numbers exact.
func (r response) object(t testing.TB) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

// want checks the status and, for errors, the message.
func (r response) want(t testing.TB, status int, message string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if message != "" {
		if m := r.object(t)["message"]; m != message {
			t.Fatalf("message %q, want %q", m, message)
		}
	}
}

func (r response) updated(t testing.TB) string {
	t.Helper()
	s, _ := r.object(t)["updated"].(string)
	return s
}

// stamp formats a time as answers carry it.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// withoutUpdated is the body with its top-level updated removed, to compare
// answers obtained at different times.
func withoutUpdated(t testing.TB, r response) string {
	t.Helper()
	m := r.object(t)
	delete(m, "updated")
	b, _ := json.Marshal(m)
	return string(b)
}

// age moves the overlay records of a tax id back to when.
func (b *edge) age(t testing.TB, taxID, portal string, when time.Time) {
	t.Helper()
	dbtest.MustExec(t, b.db, `UPDATE overlay_records SET updated = $1 WHERE tax_id = $2 AND portal = $3`, when, taxID, portal)
}

func days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }
