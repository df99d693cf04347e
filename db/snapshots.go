package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
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

// LiveSnapshot returns the snapshot being served, or ErrNoSnapshot.
func LiveSnapshot(ctx context.Context, q sqlx.QueryerContext) (Snapshot, error) {
	const query = `SELECT ` + snapshotColumns + ` FROM snapshots WHERE state = 'live'`
	var s Snapshot
	err := sqlx.GetContext(ctx, q, &s, query)
	if errors.Is(err, sql.ErrNoRows) {
		return s, ErrNoSnapshot
	}
	return s, err
}

// RecentSnapshots returns the last n import attempts, newest first.
func RecentSnapshots(ctx context.Context, q sqlx.QueryerContext, n int) ([]Snapshot, error) {
	const query = `SELECT ` + snapshotColumns + ` FROM snapshots ORDER BY id DESC LIMIT $1`
	var s []Snapshot
	err := sqlx.SelectContext(ctx, q, &s, query, n)
	return s, err
}
