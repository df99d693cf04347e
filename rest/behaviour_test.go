package rest_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// TestDocumentedRoutes fails when a documented route is missing: each one
// must answer with something other than the router's unknown-route 404.
func TestDocumentedRoutes(t *testing.T) {
	s := newServer(t)
	targets := map[string]string{
		"GET /office/{taxId}": "/office/" + dbtest.SerproBranch,
		"GET /company/{id}":   "/company/" + dbtest.SerproRoot,
		"GET /person/{id}":    "/person/" + dbtest.OKBRMember.ID(),
		"GET /rfb":            "/rfb?taxId=" + dbtest.SerproBranch,
		"GET /simples":        "/simples?taxId=" + dbtest.SerproBranch,
	}
	spec := []string{"GET /office/{taxId}", "GET /company/{id}", "GET /person/{id}", "GET /rfb", "GET /simples"}
	for _, route := range spec {
		if !contains(rest.Routes, route) {
			t.Errorf("rest.Routes lacks %s", route)
		}
		if r := s.get(t, targets[route]); r.status != 200 {
			t.Errorf("%s: %d %s", route, r.status, r.body)
		}
	}
	// Document and legacy routes (map and street: 503 without providers);
	// the deprecated ones always 404.
	for route, target := range map[string]string{
		"GET /rfb/certificate": "/rfb/certificate?taxId=" + dbtest.SerproBranch, "GET /simples/certificate": "/simples/certificate?taxId=" + dbtest.SerproBranch,
		"GET /office/{taxId}/map": "/office/" + dbtest.SerproBranch + "/map", "GET /office/{taxId}/street": "/office/" + dbtest.SerproBranch + "/street",
		"GET /companies/{taxId}": "/companies/" + dbtest.SerproBranch, "GET /file/{token}": "/file/abc", "GET /me/requests": "/me/requests",
	} {
		r := s.get(t, target)
		deprecated := strings.HasPrefix(route, "GET /file") || strings.HasPrefix(route, "GET /me")
		if !contains(rest.Routes, route) || (r.status == 404) != deprecated {
			t.Errorf("%s: %d %s", route, r.status, r.body)
		}
	}
	for _, op := range []string{"/healthz", "/readyz", "/metrics"} {
		if r := s.get(t, op); r.status != 200 {
			t.Errorf("%s: %d %s", op, r.status, r.body)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestErrors(t *testing.T) {
	s := newServer(t)
	cases := []struct {
		method, target string
		status         int
		message        string
	}{
		{"GET", "/office/" + dbtest.SerproHead, 404, "tax id not registered at revenue service"},
		{"GET", "/rfb?taxId=" + dbtest.SerproHead, 404, "tax id not registered at revenue service"},
		{"GET", "/simples?taxId=" + dbtest.SerproHead, 404, "tax id not registered at revenue service"},
		{"GET", "/company/99999999", 404, "company not registered at revenue service"},
		{"GET", "/person/00000000-0000-5000-8000-000000000000", 404, "person not found"},
		{"GET", "/nope", 404, "Cannot GET /nope"},
		{"POST", "/office", 404, "Cannot POST /office"},
		{"GET", "/office/" + dbtest.SerproBranch + "/extra", 404, "Cannot GET /office/" + dbtest.SerproBranch + "/extra"},
		{"POST", "/office/" + dbtest.SerproBranch, 404, "Cannot POST /office/" + dbtest.SerproBranch},
		{"DELETE", "/rfb", 404, "Cannot DELETE /rfb"},
		{"PATCH", "/", 404, "Cannot PATCH /"},
		{"GET", "/file/abc", 404, "Cannot GET /file/abc"},
		{"GET", "/me/requests", 404, "Cannot GET /me/requests"},
		// No upstream: whatever must go online is offline.
		{"GET", "/office/" + dbtest.SerproBranch + "?strategy=ONLINE", 503, "rfb data fetching is offline"},
		{"GET", "/rfb?taxId=" + dbtest.SerproBranch + "&strategy=ONLINE", 503, "rfb data fetching is offline"},
		{"GET", "/simples?taxId=" + dbtest.SerproBranch + "&strategy=ONLINE", 503, "rfb data fetching is offline"},
		{"GET", "/office/" + dbtest.SerproHead + "?strategy=ONLINE", 503, "rfb data fetching is offline"},
		// The data is 10 days old.
		{"GET", "/office/" + dbtest.SerproBranch + "?strategy=CACHE_IF_FRESH&maxAge=5", 503, "rfb data fetching is offline"},
		{"GET", "/office/" + dbtest.SerproBranch + "?strategy=CACHE_IF_ERROR&maxAge=5&maxStale=9", 503, "rfb data fetching is offline"},
		{"GET", "/simples?taxId=" + dbtest.SerproBranch + "&strategy=CACHE_IF_FRESH&maxAge=9", 503, "rfb data fetching is offline"},
		{"GET", "/office/" + dbtest.SerproBranch + "?strategy=CACHE_IF_FRESH&registrations=PR", 503, "ccc data fetching is offline"},
	}
	for _, c := range cases {
		r := s.do(t, httptest.NewRequest(c.method, c.target, nil))
		if r.status != c.status {
			t.Errorf("%s %s: %d, want %d: %s", c.method, c.target, r.status, c.status, r.body)
			continue
		}
		body := r.object(t)
		if body["code"] != jsonNumber(c.status) || body["message"] != c.message || len(body) != 2 {
			t.Errorf("%s %s: body %s", c.method, c.target, r.body)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("%s %s: Content-Type %q", c.method, c.target, ct)
		}
	}

	ok := []string{
		"/office/" + dbtest.SerproBranch + "?strategy=CACHE&maxAge=1",
		"/office/" + dbtest.SerproBranch + "?strategy=CACHE_IF_FRESH&maxAge=10",
		"/office/" + dbtest.SerproBranch + "?strategy=CACHE_IF_ERROR&maxAge=5",
		"/office/" + dbtest.SerproBranch + "?strategy=CACHE_IF_ERROR&maxAge=5&maxStale=10",
		"/office/" + dbtest.SerproBranch + "?registrations=PR,RS&registrations=SC",
		"/office/" + dbtest.SerproBranch + "?registrations=ALL&strategy=CACHE",
		"/office/" + dbtest.SerproBranch + "?embeds=SIMPLES,CCC&cccStates=ORIGIN",
		"/office/" + dbtest.SerproBranch + "?unknown=1&foo=bar",
		"/simples?taxId=" + dbtest.SerproBranch + "&strategy=CACHE&history=0",
	}
	for _, target := range ok {
		r := s.get(t, target)
		if r.status != 200 {
			t.Errorf("%s: %d %s", target, r.status, r.body)
			continue
		}
		if strings.Contains(target, "registrations") || strings.Contains(target, "cccStates") {
			if regs, isArr := path(t, r.object(t), "registrations").([]any); !isArr || len(regs) != 0 {
				t.Errorf("%s: registrations = %v, want []", target, regs)
			}
		}
	}
	if o := s.get(t, "/office/"+dbtest.SerproBranch+"?embeds=SIMPLES").object(t); !has(path(t, o, "company"), "simples") {
		t.Errorf("embeds=SIMPLES must add company.simples")
	}
}

func TestMiddleware(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	store := db.NewStore(d, db.StoreOptions{})
	svc := service.New(store, service.Options{Now: func() time.Time { return now }})
	m := rest.NewMetrics(d.DB)
	h := rest.NewRouter(rest.Deps{Service: svc, Metrics: m, CORSOrigins: []string{"https://app.example.com"},
		Mount: func(r chi.Router) {
			r.Get("/panic", func(http.ResponseWriter, *http.Request) { panic("boom") })
		}})
	s := &server{h: h}

	r := s.get(t, "/panic")
	if r.status != 500 || string(r.body) != `{"code":500,"message":"unexpected error"}` {
		t.Errorf("panic: %d %s", r.status, r.body)
	}

	req := httptest.NewRequest("GET", "/healthz", nil)
	req.Header.Set("X-Request-Id", "abc-123")
	if r := s.do(t, req); r.header.Get("X-Request-Id") != "abc-123" {
		t.Errorf("request id not honoured: %q", r.header.Get("X-Request-Id"))
	}
	req = httptest.NewRequest("GET", "/healthz", nil)
	req.Header.Set("X-Request-Id", "bad id\x01")
	if id := s.do(t, req).header.Get("X-Request-Id"); len(id) != 32 {
		t.Errorf("generated request id %q", id)
	}

	req = httptest.NewRequest("OPTIONS", "/office/"+dbtest.SerproBranch, nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "GET")
	r = s.do(t, req)
	if r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(r.header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %d %v", r.status, r.header)
	}
	// A GraphQL client's own headers pass the preflight (Apollo Client's,
	// when it is given a name and version).
	req = httptest.NewRequest("OPTIONS", "/graphql", nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "apollographql-client-name,apollographql-client-version,authorization,content-type")
	r = s.do(t, req)
	allow := strings.ToLower(r.header.Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"apollographql-client-name", "apollographql-client-version", "authorization", "content-type"} {
		if !slices.Contains(strings.Split(allow, ", "), h) {
			t.Errorf("preflight of /graphql: %q lacks %s", allow, h)
		}
	}
	// A page may change and delete its account's lists.
	for _, method := range []string{"PATCH", "DELETE"} {
		req = httptest.NewRequest("OPTIONS", "/list/5680a75e-750e-4c31-a1a1-e61e0e4f5618", nil)
		req.Header.Set("Origin", "https://app.example.com")
		req.Header.Set("Access-Control-Request-Method", method)
		r = s.do(t, req)
		if r.status != 204 || !slices.Contains(strings.Split(r.header.Get("Access-Control-Allow-Methods"), ", "), method) {
			t.Errorf("preflight of %s /list/{listId}: %d %v", method, r.status, r.header)
		}
	}
	// A page may read the headers it needs: a search's X-Count-Exact, the
	// rate limit's, a certificate's file name.
	req = httptest.NewRequest("GET", "/healthz", nil)
	req.Header.Set("Origin", "https://app.example.com")
	r = s.do(t, req)
	for _, name := range []string{"X-Count-Exact", "RateLimit-Remaining", "Retry-After", "Content-Disposition", "X-Request-Id"} {
		if !slices.Contains(strings.Split(r.header.Get("Access-Control-Expose-Headers"), ", "), name) {
			t.Errorf("Access-Control-Expose-Headers %q: no %s", r.header.Get("Access-Control-Expose-Headers"), name)
		}
	}
	req = httptest.NewRequest("GET", "/healthz", nil)
	req.Header.Set("Origin", "https://evil.example.com")
	if r := s.do(t, req); r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS allowed an unknown origin")
	}

	ready := s.get(t, "/readyz").object(t)
	if path(t, ready, "status") != "ready" || path(t, ready, "snapshot", "date") != dbtest.ReferenceDate ||
		path(t, ready, "snapshot", "month") != "2025-12" {
		t.Errorf("readyz = %v", ready)
	}

	s.get(t, "/office/"+dbtest.SerproBranch)
	s.get(t, "/nope/"+dbtest.SerproBranch)
	metrics := string(s.get(t, "/metrics").body)
	for _, want := range []string{
		`cnpjgraph_http_requests_total{method="GET",route="/office/{taxId}",status="200"} 1`,
		`cnpjgraph_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`cnpjgraph_http_request_duration_seconds_bucket{route="/office/{taxId}"`,
		`cnpjgraph_sql_round_trips_total`,
		`go_sql_max_open_connections{db_name="cnpjgraph"}`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestRoundTrips pins the SQL cost of each lookup: one statement per level,
// code tables from memory; the office lookup (and the registry record) in
// one statement with its company, Simples and members. A first search page
// small enough to count: PostgreSQL's estimate (EXPLAIN), the count (giving
// the page's keys) and the records (storing the next page's token). The
// count and walk budgets are made too long to run out: on a loaded machine
// a count past the default 10 ms becomes a further statement (the page's
// keys fetched apart), a cost of the budget, not of the route.
func TestRoundTrips(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	search := service.DefaultSearchSettings
	search.CountBudget, search.WalkBudget = time.Minute, time.Minute
	s := serverSearching(t, d, 5*time.Second, &search)
	s.get(t, "/healthz") // the first lookup also loads the code tables
	s.get(t, "/office/"+dbtest.SerproBranch)
	for _, c := range []struct {
		target string
		want   int64
	}{
		{"/office/" + dbtest.SerproBranch + "?simples=true", 1},
		{"/office/" + dbtest.BigHead + "?simples=true&registrations=BR", 1},
		{"/rfb?taxId=" + dbtest.BigHead, 1},
		{"/company/" + dbtest.BigRoot, 3},
		{"/person/" + dbtest.SerproMembers[0].Person.ID(), 2},
		{"/simples?taxId=" + dbtest.AlphaTaxID, 1},
		{"/simples?taxId=" + dbtest.AlphaTaxID + "&history=true", 2},
		{"/office?address.state.in=DF&limit=2", 3},
		{"/office?names.in=serpro&limit=1", 3},
		{"/person?type.in=LEGAL&limit=1", 3},
	} {
		before := s.roundTrips.Load()
		if r := s.get(t, c.target); r.status != 200 {
			t.Fatalf("%s: %d", c.target, r.status)
		}
		if got := s.roundTrips.Load() - before; got != c.want {
			t.Errorf("%s: %d SQL round trips, want %d", c.target, got, c.want)
		}
	}
}

// BenchmarkOfficeLookup measures the office lookup through the router on
// the fixture, reporting SQL round trips per request.
func BenchmarkOfficeLookup(b *testing.B) {
	s := newServer(b)
	target := "/office/" + dbtest.SerproBranch + "?simples=true"
	s.get(b, target)
	before := s.roundTrips.Load()
	// Requests wait on the network and on the loaders' batch window, not
	// on the CPU: run as many as a load test's connections.
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rec := httptest.NewRecorder()
			s.h.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
			if rec.Code != 200 {
				b.Errorf("status %d", rec.Code)
			}
		}
	})
	b.ReportMetric(float64(s.roundTrips.Load()-before)/float64(b.N), "roundtrips/op")
}
