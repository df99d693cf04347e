// Package pgtest creates throwaway PostgreSQL databases for tests on the
// server named by TEST_DATABASE_URL (default: the local server on
// 127.0.0.1:5432, user postgres). It imports nothing of the project, so
// package db's own tests use it too; dbtest builds on it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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
	return CopyURL(t, "")
}

// CopyURL creates a database that is a copy of template ("": an empty
// one) and returns its URL; the database is dropped when the test ends.
// Nobody may be connected to template while it is copied.
func CopyURL(t testing.TB, template string) string {
	t.Helper()
	name := "cnpjgraph_test_" + randomSuffix()
	if err := create(name, template); err != nil {
		t.Fatalf("pgtest: create database (is PostgreSQL running? make test starts it): %v", err)
	}
	t.Cleanup(func() { _ = Drop(name) })
	return URLOf(t, name)
}

// CreateTemplate copies the database from (nobody connected to it) into
// one that outlives the test that asks, for CopyURL to copy again;
// DropTemplates drops it. Its name says when it was made, so that a later
// run drops the templates of a run killed before it could.
func CreateTemplate(from string) (string, error) {
	name := fmt.Sprintf("%s%d_%s", templatePrefix, time.Now().Unix(), randomSuffix())
	return name, create(name, from)
}

const templatePrefix = "cnpjgraph_template_"

// DropTemplates drops the templates this process made, and those of any
// run older than a day (killed before it dropped its own).
func DropTemplates() error {
	admin, err := sqlx.Open("postgres", AdminURL())
	if err != nil {
		return err
	}
	defer admin.Close()
	var names []string
	if err := admin.Select(&names, `SELECT datname FROM pg_database WHERE datname LIKE $1`, templatePrefix+"%"); err != nil {
		return err
	}
	mine.Lock()
	defer mine.Unlock()
	for _, name := range names {
		stamp, _, _ := strings.Cut(strings.TrimPrefix(name, templatePrefix), "_")
		made, err := strconv.ParseInt(stamp, 10, 64)
		if mine.names[name] || err == nil && time.Since(time.Unix(made, 0)) > 24*time.Hour {
			if err := Drop(name); err != nil {
				return err
			}
		}
	}
	return nil
}

// mine are the templates this process made.
var mine struct {
	sync.Mutex
	names map[string]bool
}

// URLOf is the URL of the database name on the test server.
func URLOf(t testing.TB, name string) string {
	t.Helper()
	u, err := url.Parse(AdminURL())
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// Drop drops the database name, closing its connections.
func Drop(name string) error {
	admin, err := sqlx.Open("postgres", AdminURL())
	if err != nil {
		return err
	}
	defer admin.Close()
	_, err = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
	return err
}

func create(name, template string) error {
	admin, err := sqlx.Open("postgres", AdminURL())
	if err != nil {
		return err
	}
	defer admin.Close()
	q := "CREATE DATABASE " + name
	if template != "" {
		q += " TEMPLATE " + template
	}
	if _, err := admin.ExecContext(context.Background(), q); err != nil {
		return err
	}
	if strings.HasPrefix(name, templatePrefix) {
		mine.Lock()
		if mine.names == nil {
			mine.names = map[string]bool{}
		}
		mine.names[name] = true
		mine.Unlock()
	}
	return nil
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
