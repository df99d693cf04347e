package db_test

import (
	"os"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// TestMain drops the fixtures' templates (dbtest.Copied) after the tests.
func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }
