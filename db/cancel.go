package db

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Cancelling a statement at its request's deadline without a goroutine per
// statement.
//
// database/sql and lib/pq each start a goroutine for every statement whose
// context can be cancelled, only to watch that context, and stop it with a
// channel handshake when the statement ends: CPU spent on every statement
// (6-26 % of the server's CPU for a lookup at one connection on a PVM guest:
// docs/benchmarks.md, "A statement's cancel without watchers"). A statement
// run under Detached(ctx) gets a context that cannot be cancelled, so
// neither starts one. The connection registers context.AfterFunc on the
// request's context instead, which costs an entry in a map until the
// statement ends; only when the context ends first does a goroutine run,
// sending pg_cancel_backend over a connection of its own. A connection
// whose statement saw that cancel start is not reused, so a late cancel
// cannot reach its next statement.

// requestKey holds, inside a detached context, the request's context whose
// end cancels the statement.
type requestKey struct{}

// Detached returns a context for a statement (prepared, or unprepared on a
// pooled connection) that the connection cancels when ctx ends, without the
// goroutines that watch a cancellable context. What is not a statement does
// not end with ctx: waiting for a pooled connection when all are busy (each
// busy one ends at its own deadline) and opening one (given ctx's deadline).
func Detached(ctx context.Context) context.Context {
	if ctx.Done() == nil {
		return ctx
	}
	return context.WithValue(context.WithoutCancel(ctx), requestKey{}, ctx)
}

// requestOf returns the context a detached ctx ends with, or nil.
func requestOf(ctx context.Context) context.Context {
	req, _ := ctx.Value(requestKey{}).(context.Context)
	return req
}

// cancelTimeout bounds the connection that sends a cancel.
const cancelTimeout = 10 * time.Second

// pqConn is what database/sql and the importer use of a lib/pq connection.
type pqConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.QueryerContext
	driver.ExecerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

// cancellingConnector opens lib/pq connections that cancel detached
// statements.
type cancellingConnector struct {
	driver.Connector
}

// Connect opens a connection (within the request's deadline when ctx is
// detached) and learns its backend's pid, which a cancel names.
func (c cancellingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if req := requestOf(ctx); req != nil {
		ctx = req
	}
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc, ok := dc.(pqConn)
	if !ok {
		_ = dc.Close()
		return nil, fmt.Errorf("database driver: %T is not a lib/pq connection", dc)
	}
	pid, err := backendPID(ctx, pc)
	if err != nil {
		_ = dc.Close()
		return nil, err
	}
	return &cancellingConn{pqConn: pc, connector: c.Connector, pid: pid}, nil
}

func backendPID(ctx context.Context, c driver.QueryerContext) (int64, error) {
	rows, err := c.QueryContext(ctx, "SELECT pg_backend_pid()", nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = rows.Close() }()
	v := make([]driver.Value, 1)
	if err := rows.Next(v); err != nil {
		return 0, fmt.Errorf("read backend pid: %w", err)
	}
	pid, ok := v[0].(int64)
	if !ok {
		return 0, fmt.Errorf("read backend pid: got %T", v[0])
	}
	return pid, nil
}

// cancellingConn is a lib/pq connection whose detached statements end with
// their request's context.
type cancellingConn struct {
	pqConn
	connector driver.Connector
	pid       int64
	// cancelled is set once a cancel for this backend may have been sent:
	// the connection is then discarded rather than reused.
	cancelled atomic.Bool
}

// watch starts watching a detached ctx's request for the statement about
// to run; it returns nil for any other ctx, and the request's error when
// it has ended already (after a wait for a pooled connection, say): the
// statement is then not sent.
func (c *cancellingConn) watch(ctx context.Context) (stop func() bool, err error) {
	req := requestOf(ctx)
	if req == nil {
		return nil, nil
	}
	if err := req.Err(); err != nil {
		return nil, err
	}
	return context.AfterFunc(req, c.cancel), nil
}

// end stops the watch of a statement that has ended.
func (c *cancellingConn) end(stop func() bool) {
	if stop != nil && !stop() {
		// The cancel has started (and may not yet have marked us).
		c.cancelled.Store(true)
	}
}

// cancel asks the server to cancel whatever this connection's backend runs.
func (c *cancellingConn) cancel() {
	c.cancelled.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), cancelTimeout)
	defer cancel()
	dc, err := c.connector.Connect(ctx)
	if err != nil {
		return // the statement ends at statement_timeout instead
	}
	defer func() { _ = dc.Close() }()
	if ex, ok := dc.(driver.ExecerContext); ok {
		_, _ = ex.ExecContext(ctx, "SELECT pg_cancel_backend($1)", []driver.NamedValue{{Ordinal: 1, Value: c.pid}})
	}
}

// IsValid reports false once a cancel may have been sent, so that
// database/sql closes the connection instead of pooling it.
func (c *cancellingConn) IsValid() bool {
	return !c.cancelled.Load() && c.pqConn.IsValid()
}

// ResetSession refuses reuse once a cancel may have been sent.
func (c *cancellingConn) ResetSession(ctx context.Context) error {
	if c.cancelled.Load() {
		return driver.ErrBadConn
	}
	return c.pqConn.ResetSession(ctx)
}

// QueryContext runs an unprepared query, cancelled with a detached ctx's
// request.
func (c *cancellingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	stop, err := c.watch(ctx)
	if err != nil {
		return nil, err
	}
	r, err := c.pqConn.QueryContext(ctx, query, args)
	return c.rows(r, err, stop)
}

// ExecContext runs an unprepared statement, cancelled with a detached ctx's
// request.
func (c *cancellingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	stop, err := c.watch(ctx)
	if err != nil {
		return nil, err
	}
	res, err := c.pqConn.ExecContext(ctx, query, args)
	c.end(stop)
	return res, err
}

// PrepareContext prepares a statement whose runs are cancelled with a
// detached ctx's request. A COPY statement is returned as lib/pq made it
// (the importer uses its CopyData).
func (c *cancellingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	stop, err := c.watch(ctx)
	if err != nil {
		return nil, err
	}
	st, err := c.pqConn.PrepareContext(ctx, query)
	c.end(stop)
	if err != nil {
		return nil, err
	}
	if ps, ok := st.(pqStmt); ok {
		return &cancellingStmt{pqStmt: ps, conn: c}, nil
	}
	return st, nil
}

// pqStmt is what database/sql uses of a lib/pq prepared statement.
type pqStmt interface {
	driver.Stmt
	driver.StmtQueryContext
	driver.StmtExecContext
}

type cancellingStmt struct {
	pqStmt
	conn *cancellingConn
}

// QueryContext runs the statement, cancelled with a detached ctx's request.
func (s *cancellingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	stop, err := s.conn.watch(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.pqStmt.QueryContext(ctx, args)
	return s.conn.rows(r, err, stop)
}

// ExecContext runs the statement, cancelled with a detached ctx's request.
func (s *cancellingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	stop, err := s.conn.watch(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.pqStmt.ExecContext(ctx, args)
	s.conn.end(stop)
	return res, err
}

// pqRows is what database/sql uses of lib/pq's rows.
type pqRows interface {
	driver.Rows
	driver.RowsNextResultSet
	driver.RowsColumnTypeScanType
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeLength
	driver.RowsColumnTypePrecisionScale
}

// cancellingRows keep the watch until they are closed: lib/pq reads a
// result as the rows are read.
type cancellingRows struct {
	pqRows
	conn *cancellingConn
	stop func() bool
}

func (r *cancellingRows) Close() error {
	err := r.pqRows.Close()
	r.conn.end(r.stop)
	return err
}

// rows hands back a query's rows, watched until closed.
func (c *cancellingConn) rows(r driver.Rows, err error, stop func() bool) (driver.Rows, error) {
	if stop == nil {
		return r, err
	}
	if err != nil {
		c.end(stop)
		return nil, err
	}
	pr, ok := r.(pqRows)
	if !ok {
		c.end(stop)
		_ = r.Close()
		return nil, errors.New("database driver: rows are not lib/pq's")
	}
	return &cancellingRows{pqRows: pr, conn: c, stop: stop}, nil
}
