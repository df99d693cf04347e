package dbtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/importer"
)

// SharedDir finds the project's shared folder (real registry files for
// tests) by walking up from the test's directory: CI clones the project with
// shared/ beside it. CNPJGRAPH_SHARED overrides.
func SharedDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("CNPJGRAPH_SHARED"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, "shared", "data", "rfb-sample")); err == nil && st.IsDir() {
			return filepath.Join(dir, "shared")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("dbtest: shared/data/rfb-sample not found above the test's directory (set CNPJGRAPH_SHARED)")
		}
		dir = parent
	}
}

// ImportSample imports the real RFB sample of shared/data/rfb-sample (SERPRO
// and Open Knowledge Brasil) with the real TABMUN and country tables.
func ImportSample(t testing.TB, d *sqlx.DB) {
	t.Helper()
	shared := SharedDir(t)
	_, err := importer.Import(context.Background(), d, importer.Options{
		Paths:          []string{filepath.Join(shared, "data", "rfb-sample")},
		Municipalities: filepath.Join(shared, "data", "municipios", "TABMUN.CSV"),
		Countries:      filepath.Join(shared, "data", "paises", "paises-m49.csv"),
		WordTables:     importer.On,
	})
	if err != nil {
		t.Fatalf("dbtest: import the sample: %v", err)
	}
}
