package rest_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// server is a router over a fixture database, with a fixed clock and a
// count of SQL round trips.
type server struct {
	h          http.Handler
	db         *sqlx.DB
	roundTrips *atomic.Int64

	mu  sync.Mutex
	sql []string // the statements sent, for takeSQL
}

// now is the fixed clock of the tests: 10 days after the fixture's data.
var now = dbtest.Reference().Add(10 * 24 * time.Hour)

func newServer(t testing.TB) *server {
	t.Helper()
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	return serverOver(t, d, 5*time.Second)
}

func serverOver(t testing.TB, d *sqlx.DB, timeout time.Duration) *server {
	return serverSearching(t, d, timeout, nil)
}

// serverSearching is serverOver with the searches tuned (nil: the defaults).
func serverSearching(t testing.TB, d *sqlx.DB, timeout time.Duration, search *service.SearchSettings) *server {
	var n atomic.Int64
	s := &server{db: d, roundTrips: &n}
	store := db.NewStore(d, db.StoreOptions{OnQuery: func(query string) {
		n.Add(1)
		s.mu.Lock()
		s.sql = append(s.sql, query)
		s.mu.Unlock()
	}})
	svc := service.New(store, service.Options{Now: func() time.Time { return now }, Search: search})
	s.h = rest.NewRouter(rest.Deps{Service: svc, RequestTimeout: timeout, CORSOrigins: []string{"https://app.example.com"}})
	return s
}

// takeSQL returns and forgets the statements sent so far.
func (s *server) takeSQL() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sql
	s.sql = nil
	return out
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (s *server) get(t testing.TB, target string) response {
	t.Helper()
	return s.do(t, httptest.NewRequest(http.MethodGet, target, nil))
}

func (s *server) do(t testing.TB, req *http.Request) response {
	t.Helper()
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: body}
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

// golden compares body with testdata/name.golden.json, or rewrites it with
// -update. Both sides are re-indented so only content counts.
func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	got, err := indent(body)
	if err != nil {
		t.Fatalf("%s: invalid JSON: %v", name, err)
	}
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (run go test ./rest -update)", name, err)
	}
	w, err := indent(want)
	if err != nil {
		t.Fatalf("%s: golden file is invalid JSON: %v", name, err)
	}
	if !bytes.Equal(w.Bytes(), got.Bytes()) {
		t.Errorf("%s differs from %s:\n got: %s\nwant: %s", name, path, got.String(), w.String())
	}
}

func indent(b []byte) (*bytes.Buffer, error) {
	var compact, out bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return nil, err
	}
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return &out, nil
}

// path walks a decoded JSON value: keys for objects, ints for arrays.
func path(t testing.TB, v any, steps ...any) any {
	t.Helper()
	for _, s := range steps {
		switch k := s.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: not an object", steps)
			}
			v, ok = m[k]
			if !ok {
				t.Fatalf("at %v: missing %q", steps, k)
			}
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at %v: not an array of more than %d items", steps, k)
			}
			v = a[k]
		}
	}
	return v
}

func has(v any, key string) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[key]
	return ok
}

func jsonNumber(n int) json.Number { return json.Number(itoa(n)) }

func unescapePath(s string) (string, error) { return url.PathUnescape(s) }
