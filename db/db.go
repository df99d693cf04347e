// Package db holds the PostgreSQL store: connections, embedded migrations, the
// snapshot schema an import swaps in, and the queries the service layer runs.
package db

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq" // also the PostgreSQL driver
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
func Open(ctx context.Context, dsn string) (*sqlx.DB, error) {
	connector, err := pq.NewConnector(withBinaryParameters(dsn))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	d := sqlx.NewDb(sql.OpenDB(cancellingConnector{connector}), "postgres")
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := d.PingContext(ctx); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return d, nil
}

// withBinaryParameters turns on lib/pq's binary_parameters unless the DSN
// says otherwise. Without it an unprepared statement with arguments costs
// two round trips (parse and describe, then bind and execute); with it, one,
// as a prepared statement does. A search sends three such statements. The
// one difference it makes: a []byte argument travels in binary format, so
// it must not be meant for a jsonb column (pass a string there).
func withBinaryParameters(dsn string) string {
	return WithDefaultParams(dsn, "binary_parameters", "yes")
}

// WithDefaultParams adds connection parameters (name, value pairs) to a
// DSN, URL or key=value form, each unless the DSN already names it: the
// operator's DATABASE_URL wins.
func WithDefaultParams(dsn string, pairs ...string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" { // key=value form
		for i := 0; i+1 < len(pairs); i += 2 {
			if !strings.Contains(dsn, pairs[i]+"=") {
				dsn = strings.TrimSpace(dsn + " " + pairs[i] + "=" + pairs[i+1])
			}
		}
		return dsn
	}
	q := u.Query()
	for i := 0; i+1 < len(pairs); i += 2 {
		if q.Get(pairs[i]) == "" {
			q.Set(pairs[i], pairs[i+1])
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Migrate applies the embedded migrations that have not run yet, and makes
// a live snapshot imported by an earlier version readable by this one
// (foldLegacySnapshot).
func Migrate(ctx context.Context, d *sqlx.DB) error {
	provider, err := goose.NewProvider(goose.DialectPostgres, d.DB, migrationsFS())
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return foldLegacySnapshot(ctx, d)
}

// AutovacuumOff says whether the server runs without autovacuum. The
// service updates a few rows per priced request (an account's credits) and
// appends the usage ledger and search tokens; without autovacuum the
// credit rows' dead versions pile up, and every request that reads the
// account (the ledger's foreign key checks among them) walks them: office
// lookups at 32 connections fell from 6,770 to 4,060 req/s after a night
// of searches on one account.
func AutovacuumOff(ctx context.Context, d *sqlx.DB) (bool, error) {
	var on string
	if err := d.GetContext(ctx, &on, `SELECT setting FROM pg_settings WHERE name = 'autovacuum'`); err != nil {
		return false, fmt.Errorf("read autovacuum: %w", err)
	}
	return on != "on", nil
}

// IsUniqueViolation reports whether err is PostgreSQL's unique_violation
// (a duplicate key).
func IsUniqueViolation(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Code == "23505"
}
