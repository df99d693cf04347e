package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Snapshot describes one import: the row with state "live" is the data served.
type Snapshot struct {
	ID            int64           `db:"id" json:"id"`
	State         string          `db:"state" json:"state"`
	DumpMonth     string          `db:"dump_month" json:"dumpMonth"`
	ReferenceDate time.Time       `db:"reference_date" json:"referenceDate"`
	RowCounts     json.RawMessage `db:"row_counts" json:"rowCounts"`
	RejectedRows  json.RawMessage `db:"rejected_rows" json:"rejectedRows"`
	StartedAt     time.Time       `db:"started_at" json:"startedAt"`
	FinishedAt    *time.Time      `db:"finished_at" json:"finishedAt,omitempty"`
	Error         *string         `db:"error" json:"error,omitempty"`
}

// ErrNoSnapshot means no import has been swapped in yet.
var ErrNoSnapshot = errors.New("no snapshot has been imported yet")

const snapshotColumns = `id, state, dump_month, reference_date, row_counts, rejected_rows, started_at, finished_at, error`

// LiveSnapshot returns the snapshot being served, or ErrNoSnapshot: none
// was imported, or the one the catalog names has no tables
// (MissingTablesError).
func LiveSnapshot(ctx context.Context, q sqlx.QueryerContext) (Snapshot, error) {
	const query = `SELECT ` + snapshotColumns + `, to_regclass('` + LiveSchema + `.offices') IS NOT NULL AS has_tables
		FROM snapshots WHERE state = 'live'`
	var row struct {
		Snapshot
		HasTables bool `db:"has_tables"`
	}
	err := sqlx.GetContext(ctx, q, &row, query)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Snapshot{}, ErrNoSnapshot
	case err != nil:
		return Snapshot{}, err
	case !row.HasTables:
		return Snapshot{}, &MissingTablesError{Snapshot: row.Snapshot}
	}
	return row.Snapshot, nil
}

// MissingTablesError is a live snapshot in the catalog whose tables are not
// there: the database was restored from a backup of the accounts without
// the registry (README, "Backups"), or the schema dropped by hand. Nothing
// can be served from it, so it counts as no snapshot (errors.Is
// ErrNoSnapshot): readiness says so, and the next import or sync loads one
// whatever the month.
type MissingTablesError struct{ Snapshot Snapshot }

func (e *MissingTablesError) Error() string {
	return fmt.Sprintf("snapshot #%d (dump %s) is live in the catalog, but its tables are missing from schema %s (restored without them?): import the dump again",
		e.Snapshot.ID, e.Snapshot.DumpMonth, LiveSchema)
}

// Is makes a MissingTablesError an ErrNoSnapshot.
func (e *MissingTablesError) Is(target error) bool { return target == ErrNoSnapshot }

// RecentSnapshots returns the last n import attempts, newest first.
func RecentSnapshots(ctx context.Context, q sqlx.QueryerContext, n int) ([]Snapshot, error) {
	const query = `SELECT ` + snapshotColumns + ` FROM snapshots ORDER BY id DESC LIMIT $1`
	var s []Snapshot
	err := sqlx.SelectContext(ctx, q, &s, query, n)
	return s, err
}
