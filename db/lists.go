package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// List is an account's list of tax ids (CNPJá's list service), or a search
// kept with a limit until its first export resolves it into tax ids.
type List struct {
	ID          string         `db:"id"`
	AccountID   int64          `db:"account_id"`
	Created     time.Time      `db:"created"`
	Updated     time.Time      `db:"updated"`
	Title       string         `db:"title"`
	Description sql.NullString `db:"description"`
	Query       []byte         `db:"query"` // JSON object of search parameters; nil: none
	Limit       sql.NullInt32  `db:"query_limit"`
	Items       pq.StringArray `db:"items"` // only when read with them
	Size        int            `db:"size"`
}

// ListExport is an export of a list into files, run in the background.
type ListExport struct {
	ID           string         `db:"id"`
	ListID       string         `db:"list_id"`
	Created      time.Time      `db:"created"`
	Updated      time.Time      `db:"updated"`
	Status       string         `db:"status"`
	StatusReason sql.NullString `db:"status_reason"`
	Progress     float64        `db:"progress"`
	Options      []byte         `db:"options"` // JSON object
	Files        pq.StringArray `db:"files"`   // the types of its stored files
}

// ListPage is where the next page of a listing starts.
type ListPage struct {
	Token        string    `db:"token"`
	AccountID    int64     `db:"account_id"`
	ListID       *string   `db:"list_id"` // exports of this list; nil: lists
	Search       string    `db:"search"`
	Limit        int       `db:"page_limit"`
	AfterCreated time.Time `db:"after_created"`
	AfterID      string    `db:"after_id"`
}

// Lists stores lists and their exports (in the public schema: they outlive
// imports).
type Lists struct{ DB *sqlx.DB }

const listColumns = `id, account_id, created, updated, title, description, query, query_limit, size`

func listNotFound(id string) error { return &NotFoundError{What: "list", Key: id} }

// CountLists is how many lists an account holds.
func (l Lists) CountLists(ctx context.Context, account int64) (int, error) {
	var n int
	err := l.DB.GetContext(ctx, &n, `SELECT count(*) FROM lists WHERE account_id = $1`, account)
	return n, err
}

// CreateList stores a new list.
func (l Lists) CreateList(ctx context.Context, v List) error {
	_, err := l.DB.ExecContext(ctx, `
		INSERT INTO lists (id, account_id, created, updated, title, description, query, query_limit, items, size)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		v.ID, v.AccountID, v.Created, v.Updated, v.Title, v.Description, nullJSON(v.Query), v.Limit, v.Items, len(v.Items))
	return err
}

// List reads one of an account's lists, with its items when asked.
func (l Lists) List(ctx context.Context, account int64, id string, items bool) (List, error) {
	cols := listColumns
	if items {
		cols += ", items"
	}
	var v List
	err := l.DB.GetContext(ctx, &v, `SELECT `+cols+` FROM lists WHERE id = $1 AND account_id = $2`, id, account)
	if errors.Is(err, sql.ErrNoRows) {
		return List{}, listNotFound(id)
	}
	return v, err
}

// AccountLists reads all of an account's lists without their items, in
// the order of their pages (created, id). An account holds at most a
// thousand.
func (l Lists) AccountLists(ctx context.Context, account int64) ([]List, error) {
	var out []List
	err := l.DB.SelectContext(ctx, &out, `SELECT `+listColumns+` FROM lists WHERE account_id = $1 ORDER BY created, id`, account)
	return out, err
}

// ListChange is what an update changes; nil fields stay.
type ListChange struct {
	Title       *string
	Description *string
	Items       []string // nil: unchanged
}

// UpdateList changes one of an account's lists.
func (l Lists) UpdateList(ctx context.Context, account int64, id string, c ListChange, now time.Time) error {
	var items any
	if c.Items != nil {
		items = pq.StringArray(c.Items)
	}
	res, err := l.DB.ExecContext(ctx, `
		UPDATE lists SET
			title = coalesce($3, title),
			description = coalesce($4, description),
			items = coalesce($5, items),
			size = coalesce(cardinality($5::text[]), size),
			updated = $6
		WHERE id = $1 AND account_id = $2`,
		id, account, c.Title, c.Description, items, now)
	if err != nil {
		return err
	}
	return oneRow(res, id)
}

// SetListItems stores the tax ids an export resolved a list's search into.
func (l Lists) SetListItems(ctx context.Context, id string, items []string, now time.Time) error {
	_, err := l.DB.ExecContext(ctx, `UPDATE lists SET items = $2, size = cardinality($2::text[]), updated = $3 WHERE id = $1`,
		id, pq.StringArray(items), now)
	return err
}

// DeleteList removes one of an account's lists with its exports, and
// returns it as it was.
func (l Lists) DeleteList(ctx context.Context, account int64, id string) (List, error) {
	var v List
	err := l.DB.GetContext(ctx, &v, `DELETE FROM lists WHERE id = $1 AND account_id = $2 RETURNING `+listColumns, id, account)
	if errors.Is(err, sql.ErrNoRows) {
		return List{}, listNotFound(id)
	}
	return v, err
}

func oneRow(res sql.Result, id string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return listNotFound(id)
	}
	return nil
}

func nullJSON(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

const exportColumns = `e.id, e.list_id, e.created, e.updated, e.status, e.status_reason, e.progress, e.options,
	ARRAY(SELECT DISTINCT f.type FROM list_export_files f WHERE f.export_id = e.id ORDER BY 1) AS files`

// ErrExportsQueued refuses an export to an account with MaxQueuedExports
// unfinished.
var ErrExportsQueued = errors.New("db: the account has as many exports queued or running as it may")

// MaxQueuedExports is how many exports an account may have queued or
// running: each may read a million offices, and they run one at a time.
const MaxQueuedExports = 10

// CreateExport adds a pending export to one of an account's lists.
func (l Lists) CreateExport(ctx context.Context, account int64, e ListExport) error {
	var queued int
	err := l.DB.GetContext(ctx, &queued, `
		SELECT count(*) FROM list_exports e JOIN lists l ON l.id = e.list_id
		WHERE l.account_id = $1 AND e.status NOT IN ('COMPLETED', 'FAILED')`, account)
	if err != nil {
		return err
	}
	if queued >= MaxQueuedExports {
		return ErrExportsQueued
	}
	res, err := l.DB.ExecContext(ctx, `
		INSERT INTO list_exports (id, list_id, created, updated, status, options)
		SELECT $1, id, $3, $3, 'PENDING', $4 FROM lists WHERE id = $2 AND account_id = $5`,
		e.ID, e.ListID, e.Created, string(e.Options), account)
	if err != nil {
		return err
	}
	return oneRow(res, e.ListID)
}

// Export reads one export of one of an account's lists.
func (l Lists) Export(ctx context.Context, account int64, listID, id string) (ListExport, error) {
	var e ListExport
	err := l.DB.GetContext(ctx, &e, `
		SELECT `+exportColumns+` FROM list_exports e JOIN lists l ON l.id = e.list_id
		WHERE e.id = $1 AND e.list_id = $2 AND l.account_id = $3`, id, listID, account)
	if errors.Is(err, sql.ErrNoRows) {
		return ListExport{}, &NotFoundError{What: "export", Key: id}
	}
	return e, err
}

// Exports reads a page of a list's exports after (created, id), and how
// many the list has.
func (l Lists) Exports(ctx context.Context, listID string, afterCreated time.Time, afterID string, limit int) ([]ListExport, int, error) {
	var out []ListExport
	err := l.DB.SelectContext(ctx, &out, `
		SELECT `+exportColumns+` FROM list_exports e
		WHERE e.list_id = $1 AND (e.created, e.id) > ($2, $3::uuid)
		ORDER BY e.created, e.id LIMIT $4`, listID, afterCreated, afterID, limit)
	if err != nil {
		return nil, 0, err
	}
	var n int
	err = l.DB.GetContext(ctx, &n, `SELECT count(*) FROM list_exports WHERE list_id = $1`, listID)
	return out, n, err
}

// SavePage stores a page token; tokens older than a day go at the same time.
func (l Lists) SavePage(ctx context.Context, p ListPage) error {
	if _, err := l.DB.ExecContext(ctx, `DELETE FROM list_pages WHERE created_at < now() - interval '1 day'`); err != nil {
		return err
	}
	_, err := l.DB.ExecContext(ctx, `
		INSERT INTO list_pages (token, account_id, list_id, search, page_limit, after_created, after_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		p.Token, p.AccountID, p.ListID, p.Search, p.Limit, p.AfterCreated, p.AfterID)
	return err
}

// Page reads a page token of an account; ok is false when it is unknown or
// expired.
func (l Lists) Page(ctx context.Context, account int64, token string) (p ListPage, ok bool, err error) {
	err = l.DB.GetContext(ctx, &p, `
		SELECT token, account_id, list_id, search, page_limit, after_created, after_id FROM list_pages
		WHERE token = $1 AND account_id = $2 AND created_at >= now() - interval '1 day'`, token, account)
	if errors.Is(err, sql.ErrNoRows) {
		return ListPage{}, false, nil
	}
	return p, err == nil, err
}

// ClaimExport takes the oldest export no instance is working on: a
// pending one, or one whose heartbeat is older than stale (its instance
// stopped), which starts again. ok is false when there is none.
func (l Lists) ClaimExport(ctx context.Context, stale time.Duration) (e ListExport, ok bool, err error) {
	err = l.DB.GetContext(ctx, &e, `
		UPDATE list_exports e SET status = 'PROCESSING', progress = 0, status_reason = NULL,
			heartbeat = now(), updated = now()
		WHERE e.id = (
			SELECT id FROM list_exports
			WHERE status = 'PENDING'
				OR (status IN ('PROCESSING', 'PROCESSED', 'EXPORTING') AND heartbeat < now() - $1 * interval '1 millisecond')
			ORDER BY created FOR UPDATE SKIP LOCKED LIMIT 1)
		RETURNING `+exportColumns, stale.Milliseconds())
	if errors.Is(err, sql.ErrNoRows) {
		return ListExport{}, false, nil
	}
	return e, err == nil, err
}

// ExportList reads the list of an export with its items, whoever owns it.
func (l Lists) ExportList(ctx context.Context, listID string) (List, error) {
	var v List
	err := l.DB.GetContext(ctx, &v, `SELECT `+listColumns+`, items FROM lists WHERE id = $1`, listID)
	if errors.Is(err, sql.ErrNoRows) {
		return List{}, listNotFound(listID)
	}
	return v, err
}

// ErrExportGone is returned for an export deleted (with its list) while it ran.
var ErrExportGone = errors.New("db: the export was deleted while it ran")

// MarkExport records an export's status and progress and refreshes its
// heartbeat.
func (l Lists) MarkExport(ctx context.Context, id, status string, progress float64) error {
	res, err := l.DB.ExecContext(ctx, `
		UPDATE list_exports SET status = $2, progress = $3, heartbeat = now(), updated = now() WHERE id = $1`,
		id, status, progress)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrExportGone
	}
	return nil
}

// FailExport ends an export with the reason its owner reads.
func (l Lists) FailExport(ctx context.Context, id, reason string) error {
	_, err := l.DB.ExecContext(ctx, `
		UPDATE list_exports SET status = 'FAILED', status_reason = $2, heartbeat = NULL, updated = now() WHERE id = $1`,
		id, reason)
	return err
}

// FilePartSize is the most a stored part of an export file holds.
const FilePartSize = 1 << 20

// ExportFile is a file of an export to store.
type ExportFile struct {
	Type string // EXCEL or JSON_ZIP
	Body io.Reader
}

// CompleteExport stores an export's files and marks it COMPLETED, in one
// transaction: an export has all its files or none.
func (l Lists) CompleteExport(ctx context.Context, id string, files []ExportFile) error {
	tx, err := l.DB.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `DELETE FROM list_export_files WHERE export_id = $1`, id); err != nil {
		return err
	}
	buf := make([]byte, FilePartSize)
	for _, f := range files {
		for part := 0; ; part++ {
			n, rerr := io.ReadFull(f.Body, buf)
			if n > 0 || part == 0 {
				if _, err := tx.ExecContext(ctx, `INSERT INTO list_export_files (export_id, type, part, data) VALUES ($1, $2, $3, $4)`,
					id, f.Type, part, buf[:n]); err != nil {
					return err
				}
			}
			if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
				break
			}
			if rerr != nil {
				return fmt.Errorf("db: reading the %s file: %w", f.Type, rerr)
			}
		}
	}
	res, err := tx.ExecContext(ctx, `
		UPDATE list_exports SET status = 'COMPLETED', progress = 1, heartbeat = NULL, updated = now() WHERE id = $1`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrExportGone
	}
	return tx.Commit()
}

// FileSize is the size of an export's file, and whether it exists.
func (l Lists) FileSize(ctx context.Context, exportID, typ string) (int64, bool, error) {
	var size sql.NullInt64
	err := l.DB.GetContext(ctx, &size, `SELECT sum(length(data)) FROM list_export_files WHERE export_id = $1 AND type = $2`, exportID, typ)
	return size.Int64, size.Valid, err
}

// FilePart reads part n of an export's file; false past its last.
func (l Lists) FilePart(ctx context.Context, exportID, typ string, n int) ([]byte, bool, error) {
	var data []byte
	err := l.DB.GetContext(ctx, &data, `SELECT data FROM list_export_files WHERE export_id = $1 AND type = $2 AND part = $3`,
		exportID, typ, n)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	return data, err == nil, err
}

// DropOldFiles deletes the files of exports that ended before cutoff; the
// exports stay, COMPLETED without links. It returns how many parts went.
func (l Lists) DropOldFiles(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := l.DB.ExecContext(ctx, `
		DELETE FROM list_export_files f USING list_exports e
		WHERE f.export_id = e.id AND e.status = 'COMPLETED' AND e.updated < $1`, cutoff)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// ExportStatuses are the statuses of an export, in the order they go.
var ExportStatuses = []string{"PENDING", "PROCESSING", "PROCESSED", "EXPORTING", "COMPLETED", "FAILED"}

// ExportCounts counts the exports of every account by status.
func (l Lists) ExportCounts(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		Status string `db:"status"`
		N      int64  `db:"n"`
	}
	if err := l.DB.SelectContext(ctx, &rows, `SELECT status, count(*) AS n FROM list_exports GROUP BY status`); err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(ExportStatuses))
	for _, s := range ExportStatuses {
		out[s] = 0
	}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}
