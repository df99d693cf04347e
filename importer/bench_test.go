package importer_test

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/importer"
	"github.com/cnpjgraph/cnpjgraph/importer/generator"
)

// BenchmarkImport imports a generated dump of CNPJGRAPH_BENCH_OFFICES
// establishments (default 100,000) and reports input rows per second, swap
// included. For the 1,000,000-establishment figure:
//
//	CNPJGRAPH_BENCH_OFFICES=1000000 go test -run '^$' -bench Import -benchtime 1x ./importer
func BenchmarkImport(b *testing.B) {
	offices := 100_000
	if v := os.Getenv("CNPJGRAPH_BENCH_OFFICES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatal(err)
		}
		offices = n
	}
	dir := b.TempDir()
	sum, err := generator.Generate(generator.Options{Companies: generator.CompaniesForOffices(offices), Out: dir, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	d, _ := dbtest.New(b)
	rows := sum.Companies + sum.Offices + sum.Members + sum.Simples
	var total time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		snap, err := importer.Import(context.Background(), d, importer.Options{Paths: []string{dir}})
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		var counts map[string]int
		_ = json.Unmarshal(snap.RowCounts, &counts)
		if counts["offices"] != sum.Offices {
			b.Fatalf("offices %d, generated %d", counts["offices"], sum.Offices)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/total.Seconds(), "rows/s")
}
