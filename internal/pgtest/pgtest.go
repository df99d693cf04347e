// Package pgtest creates throwaway PostgreSQL databases for tests on the
// server named by TEST_DATABASE_URL (default: the local server on
// 127.0.0.1:5432, user postgres). It imports nothing of the project, so
// package db's own tests use it too; dbtest builds on it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the driver
)

// AdminURL is the server the throwaway databases are created on.
func AdminURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// NewURL creates an empty database and returns its URL; the database is
// dropped when the test ends.
func NewURL(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	admin, err := sqlx.Open("postgres", AdminURL())
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer admin.Close()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "cnpjgraph_test_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database (is PostgreSQL running? make test starts it): %v", err)
	}
	t.Cleanup(func() {
		admin, err := sqlx.Open("postgres", AdminURL())
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
	})
	u, err := url.Parse(AdminURL())
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}
