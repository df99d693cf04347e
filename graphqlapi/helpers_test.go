package graphqlapi_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/client"
	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/graphqlapi"
	"github.com/cnpjgraph/cnpjgraph/playground"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// now is the fixed clock of the tests: 10 days after the fixture's data,
// as in the rest tests, so cached answers are fresh under the defaults.
var now = dbtest.Reference().Add(10 * 24 * time.Hour)

// server is the full router (REST, GraphQL, playground) over a fixture
// database, counting SQL round trips.
type server struct {
	h          http.Handler
	db         *sqlx.DB
	roundTrips *atomic.Int64
	client     *client.Client

	mu         sync.Mutex
	statements []string // the store functions that sent each statement
	sql        []string // and each statement's text
}

type serverOptions struct {
	timeout time.Duration
	gql     graphqlapi.Options
	// search: nil counts every match of the small test registries
	// exactly, however slow a race-detector run makes the count.
	search *service.SearchSettings
	// playgroundBase is the path a proxy strips before the router
	// (playground.Options.Base).
	playgroundBase string
}

func newServer(t testing.TB, so serverOptions) *server {
	t.Helper()
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	return serverOver(t, d, so)
}

func serverOver(t testing.TB, d *sqlx.DB, so serverOptions) *server {
	t.Helper()
	var n atomic.Int64
	s := &server{db: d, roundTrips: &n}
	store := db.NewStore(d, db.StoreOptions{OnQuery: func(query string) {
		n.Add(1)
		s.mu.Lock()
		s.statements = append(s.statements, time.Now().Format("15:04:05.000")+" "+storeCaller())
		s.sql = append(s.sql, query)
		s.mu.Unlock()
	}})
	if so.search == nil {
		// Exact counts: the oracle tests compare them with what they
		// expect (CountBounds tests the limit and the estimate). Plans
		// are PostgreSQL's choice (OfficeFiltersCollected tests collects).
		exact := service.DefaultSearchSettings
		exact.CountLimit, exact.CountBudget, exact.CollectBelow = 1_000_000, time.Minute, 0
		so.search = &exact
	}
	svc := service.New(store, service.Options{Now: func() time.Time { return now }, Search: so.search})
	if so.timeout == 0 {
		so.timeout = 10 * time.Second
	}
	o := so.gql
	o.Service = svc
	h := rest.NewRouter(rest.Deps{Service: svc, RequestTimeout: so.timeout, Mount: graphqlapi.Mount(o),
		MountPublic: graphqlapi.MountPlayground(playground.Options{APIKey: "dev-key", Base: so.playgroundBase,
			Examples: []string{graphqlapi.ExampleQuery(dbtest.SerproBranch), graphqlapi.ExampleSearch}})})
	s.h = h
	s.client = client.New(h)
	s.client.SetCustomTarget("/graphql")
	return s
}

// storeCaller names the db function that is sending a statement, so that a
// failed round-trip count says which level split.
func storeCaller() string {
	pc := make([]uintptr, 32)
	frames := runtime.CallersFrames(pc[:runtime.Callers(3, pc)])
	for {
		f, more := frames.Next()
		if i := strings.Index(f.Function, "/db.Query"); i >= 0 {
			return f.Function[i+4:]
		}
		if !more {
			return "?"
		}
	}
}

// takeStatements returns and forgets the statements sent so far.
func (s *server) takeStatements() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.statements
	s.statements, s.sql = nil, nil
	return out
}

// takeSQL returns and forgets the text of the statements sent so far.
func (s *server) takeSQL() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sql
	s.statements, s.sql = nil, nil
	return out
}

// result is a decoded GraphQL response, numbers kept exact.
type result struct {
	status int
	header http.Header
	Data   map[string]any `json:"data"`
	Errors []gqlError     `json:"errors"`
	raw    []byte
}

type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// post sends a query as POST /graphql with a JSON body.
func (s *server) post(t testing.TB, query string, vars map[string]any) result {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return s.postRaw(t, body)
}

func (s *server) postRaw(t testing.TB, body []byte) result {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return s.do(t, req)
}

// get sends a query as GET /graphql?query=...
func (s *server) get(t testing.TB, params url.Values) result {
	t.Helper()
	return s.do(t, httptest.NewRequest(http.MethodGet, "/graphql?"+params.Encode(), nil))
}

func (s *server) do(t testing.TB, req *http.Request) result {
	t.Helper()
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, req)
	raw, _ := io.ReadAll(rec.Result().Body)
	r := result{status: rec.Code, header: rec.Header(), raw: raw}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("response is not JSON (%d): %v\n%s", rec.Code, err, raw)
	}
	return r
}

// ok fails the test when the response has errors.
func (r result) ok(t testing.TB) result {
	t.Helper()
	if r.status != http.StatusOK || len(r.Errors) > 0 {
		t.Fatalf("status %d, errors: %s", r.status, r.raw)
	}
	return r
}

// only returns the one error of a response.
func (r result) only(t testing.TB) gqlError {
	t.Helper()
	if len(r.Errors) != 1 {
		t.Fatalf("want one error, got %d: %s", len(r.Errors), r.raw)
	}
	return r.Errors[0]
}

// at walks a decoded JSON value: keys for objects, ints for arrays.
func at(t testing.TB, v any, steps ...any) any {
	t.Helper()
	for i, s := range steps {
		switch k := s.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: not an object: %v", steps[:i+1], v)
			}
			if v, ok = m[k]; !ok {
				t.Fatalf("at %v: missing %q", steps[:i+1], k)
			}
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at %v: not an array of more than %d items", steps[:i+1], k)
			}
			v = a[k]
		}
	}
	return v
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func list(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = quote(id)
	}
	return "[" + strings.Join(q, ",") + "]"
}

func clientVar(name string, v any) client.Option { return client.Var(name, v) }
