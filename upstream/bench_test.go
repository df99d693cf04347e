package upstream_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// BenchmarkCachedOffice compares the cached office lookup (default
// strategy) through the router in-process:
//
//	plain:    fixture snapshot, no upstream (the path before issue 6)
//	strategy: the same snapshot with an upstream configured: the strategy
//	          machinery and its one extra overlay query, never going online
//	edge:     an empty database answering from its own overlay (fetched
//	          once from a central instance)
//
// Run: go test ./upstream -run '^$' -bench CachedOffice -benchtime 3s
func BenchmarkCachedOffice(b *testing.B) {
	target := "/office/" + dbtest.SerproBranch + "?simples=true"
	run := func(b *testing.B, h http.Handler, queries *atomic.Int64) {
		serve(h, target) // warm: prepared statements, catalog, overlay
		before := queries.Load()
		// Requests wait on the network and the loaders' batch window, not
		// the CPU: as many in flight as a load test's connections.
		b.SetParallelism(16)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if code := serve(h, target); code != 200 {
					b.Errorf("status %d", code)
				}
			}
		})
		b.ReportMetric(float64(queries.Load()-before)/float64(b.N), "roundtrips/op")
	}
	b.Run("plain", func(b *testing.B) {
		d, _ := dbtest.New(b)
		dbtest.LoadFixture(b, d)
		d.SetMaxOpenConns(16) // as the edge's
		var n atomic.Int64
		svc := service.New(db.NewStore(d, db.StoreOptions{OnQuery: func(string) { n.Add(1) }}),
			service.Options{Now: func() time.Time { return now }})
		run(b, rest.NewRouter(rest.Deps{Service: svc, RequestTimeout: 10 * time.Second}), &n)
	})
	b.Run("strategy", func(b *testing.B) {
		never := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b.Errorf("a fresh cached lookup went online: %s", r.URL)
		}))
		b.Cleanup(never.Close)
		e := newEdge(b, never.URL, edgeOptions{snapshot: true})
		run(b, e.h, &e.queries)
	})
	b.Run("edge", func(b *testing.B) {
		a := newCentral(b)
		e := newEdge(b, a.srv.URL, edgeOptions{})
		if code := serve(e.h, target); code != 200 {
			b.Fatalf("fill the overlay: status %d", code)
		}
		calls := a.calls.total()
		run(b, e.h, &e.queries)
		if a.calls.total() != calls {
			b.Errorf("the edge went online %d times", a.calls.total()-calls)
		}
	})
}

func serve(h http.Handler, target string) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Code
}
