// Package db holds the PostgreSQL store: connections, embedded migrations, the
// snapshot schema an import swaps in, and the queries the service layer runs.
package db

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the PostgreSQL driver
	"github.com/pressly/goose/v3"
)

// LiveSchema is the schema that holds the snapshot being served.
const LiveSchema = "cnpj"

//go:embed migrations/*.sql
var migrations embed.FS

//go:embed snapshot/tables.sql
var SnapshotTables string

//go:embed snapshot/indexes.sql
var SnapshotIndexes string

// Open connects to PostgreSQL and checks the connection within timeout.
func Open(ctx context.Context, url string) (*sqlx.DB, error) {
	d, err := sqlx.Open("postgres", url)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := d.PingContext(ctx); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return d, nil
}

// Migrate applies the embedded migrations that have not run yet.
func Migrate(ctx context.Context, d *sqlx.DB) error {
	provider, err := goose.NewProvider(goose.DialectPostgres, d.DB, migrationsFS())
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}
