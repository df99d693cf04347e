package db

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// EnsureDatabase creates the database named in rawURL when it does not exist,
// connecting to the server's "postgres" database to do so. It lets a fresh
// machine go from nothing to a served snapshot with one command.
func EnsureDatabase(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return nil // a key=value DSN: leave it to the operator
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" || name == "postgres" {
		return nil
	}
	admin := *u
	admin.Path = "/postgres"
	d, err := sqlx.Open("postgres", admin.String())
	if err != nil {
		return err
	}
	defer d.Close()
	var exists bool
	if err := d.GetContext(ctx, &exists, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name); err != nil {
		return fmt.Errorf("connect to database server: %w", err)
	}
	if exists {
		return nil
	}
	if _, err := d.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)); err != nil {
		var pqErr *pq.Error
		if errors.As(err, &pqErr) && pqErr.Code == "42P04" { // created meanwhile
			return nil
		}
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}
