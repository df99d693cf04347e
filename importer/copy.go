package importer

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// copyFlushBytes is how much COPY text is handed to the driver at once.
const copyFlushBytes = 256 << 10

// copyDataer is lib/pq's raw COPY entry point: it takes preformatted
// text-format lines, which spares the per-value interface boxing and
// re-encoding of Stmt.Exec.
type copyDataer interface {
	CopyData(ctx context.Context, line string) (driver.Result, error)
}

// copyWriter builds COPY text-format rows and streams them to the server.
type copyWriter struct {
	ctx      context.Context
	cd       copyDataer
	buf      []byte
	rowStart int
	col      int
	rows     int64
}

// withCopy runs fill with a writer whose rows are COPYed into table in one
// transaction on conn, which first empties the table: that lets COPY FREEZE
// write the rows already frozen, so the index builds and the first readers
// do not rewrite every page to set hint bits, and no anti-wraparound vacuum
// rewrites the tables later. It returns the rows written.
func withCopy(ctx context.Context, conn *sql.Conn, table string, cols []string, fill func(*copyWriter) error) (rows int64, err error) {
	err = conn.Raw(func(dc any) (err error) {
		beginner, ok1 := dc.(driver.ConnBeginTx)
		preparer, ok2 := dc.(driver.ConnPrepareContext)
		execer, ok3 := dc.(driver.ExecerContext)
		if !ok1 || !ok2 || !ok3 {
			return errors.New("database driver does not support COPY (lib/pq expected)")
		}
		tx, err := beginner.BeginTx(ctx, driver.TxOptions{})
		if err != nil {
			return err
		}
		if _, err := execer.ExecContext(ctx, "TRUNCATE "+stagingSchema+"."+table, nil); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("COPY %s: %w", table, err)
		}
		stmt, err := preparer.PrepareContext(ctx, "COPY "+stagingSchema+"."+table+" ("+strings.Join(cols, ", ")+") FROM STDIN WITH (FREEZE)")
		if err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("COPY %s: %w", table, err)
		}
		cd, ok := stmt.(copyDataer)
		if !ok {
			_ = stmt.Close()
			_ = tx.Rollback()
			return errors.New("database driver does not support raw COPY data (lib/pq v1.12+ expected)")
		}
		w := &copyWriter{ctx: ctx, cd: cd, buf: make([]byte, 0, copyFlushBytes+64<<10)}
		if err := fill(w); err != nil {
			_ = stmt.Close()
			_ = tx.Rollback()
			return err
		}
		if err := w.flush(); err != nil {
			_ = stmt.Close()
			_ = tx.Rollback()
			return fmt.Errorf("COPY %s: %w", table, err)
		}
		// Exec with no values ends the COPY and reports the server's verdict.
		//nolint:staticcheck // the driver-level Exec is how lib/pq ends a COPY
		if _, err := stmt.Exec(nil); err != nil {
			_ = stmt.Close()
			_ = tx.Rollback()
			return fmt.Errorf("COPY %s: %w", table, err)
		}
		if err := stmt.Close(); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("COPY %s: %w", table, err)
		}
		rows = w.rows
		return tx.Commit()
	})
	return rows, err
}

func (w *copyWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	// CopyData appends its own newline and copies the bytes before
	// returning, so the buffer can be lent as a string.
	_, err := w.cd.CopyData(w.ctx, unsafe.String(&w.buf[0], len(w.buf)-1))
	w.buf = w.buf[:0]
	w.rowStart = 0
	return err
}

// end finishes a row.
func (w *copyWriter) end() error {
	w.buf = append(w.buf, '\n')
	w.rows++
	w.col = 0
	w.rowStart = len(w.buf)
	if len(w.buf) >= copyFlushBytes {
		return w.flush()
	}
	return nil
}

// discard drops the row being built.
func (w *copyWriter) discard() {
	w.buf = w.buf[:w.rowStart]
	w.col = 0
}

func (w *copyWriter) sep() {
	if w.col > 0 {
		w.buf = append(w.buf, '\t')
	}
	w.col++
}

func (w *copyWriter) null() {
	w.sep()
	w.buf = append(w.buf, '\\', 'N')
}

// text writes v, or NULL when it is empty.
func (w *copyWriter) text(v []byte) {
	if len(v) == 0 {
		w.null()
		return
	}
	w.sep()
	w.escaped(v)
}

// str writes v as it is, empty included.
func (w *copyWriter) str(v []byte) {
	w.sep()
	w.escaped(v)
}

func (w *copyWriter) raw(v string) {
	w.sep()
	w.buf = append(w.buf, v...)
}

var needsEscape = [256]bool{'\\': true, '\t': true, '\n': true, '\r': true}

func (w *copyWriter) escaped(v []byte) {
	for i, c := range v {
		if needsEscape[c] {
			w.buf = append(w.buf, v[:i]...)
			for _, c := range v[i:] {
				switch c {
				case '\\':
					w.buf = append(w.buf, '\\', '\\')
				case '\t':
					w.buf = append(w.buf, '\\', 't')
				case '\n':
					w.buf = append(w.buf, '\\', 'n')
				case '\r':
					w.buf = append(w.buf, '\\', 'r')
				default:
					w.buf = append(w.buf, c)
				}
			}
			return
		}
	}
	w.buf = append(w.buf, v...)
}
