package graphqlapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// BenchmarkNestedQuery runs office → company → members → person →
// membership → company through the full router, with the production batch
// window (loaders.Wait), for the fixture's offices in turn, and reports
// the SQL round trips per request.
//
//	go test ./graphqlapi -run '^$' -bench NestedQuery -benchtime 2000x
func BenchmarkNestedQuery(b *testing.B) {
	s := newServer(b, serverOptions{})
	ids := []string{dbtest.SerproBranch, dbtest.BigHead, dbtest.AlphaTaxID, dbtest.AbroadTaxID}
	bodies := make([][]byte, len(ids))
	for i, id := range ids {
		bodies[i], _ = json.Marshal(map[string]any{"query": benchQuery, "variables": map[string]any{"id": id}})
	}
	run := func(i int) {
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(bodies[i%len(bodies)]))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) {
			b.Fatalf("%d %s", rec.Code, rec.Body.Bytes())
		}
	}
	for i := range bodies {
		run(i) // code tables, prepared statements, parsed query cache
	}
	b.Run("serial", func(b *testing.B) {
		before := s.roundTrips.Load()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			run(i)
		}
		b.ReportMetric(float64(s.roundTrips.Load()-before)/float64(b.N), "sql/op")
	})
	// 16 requests in flight per CPU, as a load test's connections: the
	// batch windows overlap, so throughput is not bounded by them.
	b.Run("parallel", func(b *testing.B) {
		before := s.roundTrips.Load()
		b.ReportAllocs()
		b.SetParallelism(16)
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				run(int(next.Add(1)))
			}
		})
		b.ReportMetric(float64(s.roundTrips.Load()-before)/float64(b.N), "sql/op")
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	})
}

const benchQuery = `query($id: String!) {
  office(taxId: $id) {
    taxId
    company {
      name
      members {
        role { id }
        person { id name membership { nodes { role { id } company { id name equity } } } }
      }
    }
  }
}`
