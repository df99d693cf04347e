package db

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Portals whose online answers the overlay keeps, by the name stored in
// overlay_records.portal.
const (
	PortalRegistry      = "rfb"     // federal registry record: office, company, members
	PortalSimples       = "simples" // Simples Nacional and SIMEI, with history
	PortalRegistrations = "ccc"     // state registrations, every state
	PortalSuframa       = "suframa" // SUFRAMA registrations
	// Records the overlay keeps that are not a portal's answer as the
	// office lookup reads it.
	PortalCCCRecord = "ccc-record" // the whole CCC record (GET /ccc): name, origin state, registrations
	PortalGeocode   = "geocode"    // the geocoder's answer for the office's address
)

// OverlayRecord is one portal's answer fetched online for one tax id.
// Updated is when the source obtained the data; Body is the portal's data
// as the service encodes it.
type OverlayRecord struct {
	TaxID   string          `db:"tax_id"`
	Portal  string          `db:"portal"`
	Updated time.Time       `db:"updated"`
	Body    json.RawMessage `db:"body"`
}

// Overlay returns the overlay records of a tax id, every portal in one
// query, keyed by portal.
func Overlay(ctx context.Context, q sqlx.QueryerContext, taxID string) (map[string]OverlayRecord, error) {
	const query = `SELECT tax_id, portal, updated, body FROM overlay_records WHERE tax_id = $1`
	rows, err := q.QueryxContext(ctx, query, taxID)
	if err != nil {
		return nil, fmt.Errorf("read overlay: %w", err)
	}
	defer func() { _ = rows.Close() }()
	out := make(map[string]OverlayRecord, 3)
	for rows.Next() {
		var r OverlayRecord
		if err := rows.StructScan(&r); err != nil {
			return nil, fmt.Errorf("read overlay: %w", err)
		}
		r.Updated = r.Updated.UTC()
		out[r.Portal] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read overlay: %w", err)
	}
	return out, nil
}

// OverlayRecordOf returns one overlay record of a tax id; false when there
// is none.
func OverlayRecordOf(ctx context.Context, q sqlx.QueryerContext, taxID, portal string) (OverlayRecord, bool, error) {
	const query = `SELECT tax_id, portal, updated, body FROM overlay_records WHERE tax_id = $1 AND portal = $2`
	rows, err := q.QueryxContext(ctx, query, taxID, portal)
	if err != nil {
		return OverlayRecord{}, false, fmt.Errorf("read overlay: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var r OverlayRecord
	found := rows.Next()
	if found {
		if err := rows.StructScan(&r); err != nil {
			return OverlayRecord{}, false, fmt.Errorf("read overlay: %w", err)
		}
		r.Updated = r.Updated.UTC()
	}
	if err := rows.Err(); err != nil {
		return OverlayRecord{}, false, fmt.Errorf("read overlay: %w", err)
	}
	return r, found, nil
}

// SaveOverlay upserts a record by (tax id, portal). An older record never
// replaces a newer one, so two fetches that finish out of order keep the
// fresher data.
func SaveOverlay(ctx context.Context, e sqlx.ExecerContext, r OverlayRecord) error {
	const query = `INSERT INTO overlay_records (tax_id, portal, updated, body) VALUES ($1, $2, $3, $4)
		ON CONFLICT (tax_id, portal) DO UPDATE SET updated = EXCLUDED.updated, body = EXCLUDED.body
		WHERE overlay_records.updated <= EXCLUDED.updated`
	// The body as text: a []byte would travel in binary format (db.Open),
	// which jsonb reads only with a version byte.
	if _, err := e.ExecContext(ctx, query, r.TaxID, r.Portal, r.Updated, string(r.Body)); err != nil {
		return fmt.Errorf("save overlay: %w", err)
	}
	return nil
}

// PruneOverlay deletes the overlay records obtained before olderThan and
// returns how many went. An import calls it with its reference date: the
// snapshot it swapped in is newer than those records, so they would never
// be served again. Geocoder answers stay: they are kept with the address
// they place, which a new dump does not make older.
func PruneOverlay(ctx context.Context, e sqlx.ExecerContext, olderThan time.Time) (int64, error) {
	res, err := e.ExecContext(ctx, `DELETE FROM overlay_records WHERE updated < $1 AND portal <> '`+PortalGeocode+`'`, olderThan)
	if err != nil {
		return 0, fmt.Errorf("prune overlay: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("prune overlay: %w", err)
	}
	return n, nil
}
