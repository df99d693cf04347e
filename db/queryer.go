package db

import (
	"context"
	"database/sql"
	"sync"

	"github.com/jmoiron/sqlx"
)

// Prepared is a sqlx.QueryerContext over a pool that prepares each distinct
// query text once and reuses the statement. With lib/pq an unprepared query
// with arguments costs two network round trips (parse, then execute); a
// prepared one costs one. database/sql re-prepares the statement on every
// new pooled connection by itself, so a restarted server is handled. Its
// statements run detached (Detached): they end with ctx without a goroutine
// to watch it.
type Prepared struct {
	db    *sqlx.DB
	mu    sync.RWMutex
	stmts map[string]*sqlx.Stmt
}

// NewPrepared returns a preparing queryer over d.
func NewPrepared(d *sqlx.DB) *Prepared {
	return &Prepared{db: d, stmts: make(map[string]*sqlx.Stmt)}
}

func (p *Prepared) stmt(ctx context.Context, query string) (*sqlx.Stmt, error) {
	p.mu.RLock()
	s := p.stmts[query]
	p.mu.RUnlock()
	if s != nil {
		return s, nil
	}
	// Prepared outside the lock: a prepare waits for the locks of the
	// tables it reads (an import's swap, a report's LOCK), and the other
	// queries' prepares must not wait behind it. Two first calls may both
	// prepare; the second statement is closed. A failed prepare (database
	// down, schema not imported yet) is not cached: the next call tries
	// again.
	s, err := p.db.PreparexContext(ctx, query)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if first := p.stmts[query]; first != nil {
		_ = s.Close()
		return first, nil
	}
	p.stmts[query] = s
	return s, nil
}

// QueryContext runs a prepared query.
func (p *Prepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(Detached(ctx), args...)
}

// QueryxContext runs a prepared query.
func (p *Prepared) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	s, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryxContext(Detached(ctx), args...)
}

// QueryRowxContext runs a prepared query; errors surface on Scan.
func (p *Prepared) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	s, err := p.stmt(ctx, query)
	if err != nil {
		// sqlx.Row has no exported way to carry an error; run unprepared so
		// the caller still gets the driver's error (or an answer) on Scan.
		return p.db.QueryRowxContext(ctx, query, args...)
	}
	return s.QueryRowxContext(Detached(ctx), args...)
}

// Close releases the prepared statements.
func (p *Prepared) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for q, s := range p.stmts {
		_ = s.Close()
		delete(p.stmts, q)
	}
	return nil
}

// Counted wraps a queryer and calls OnQuery with each statement it sends,
// so metrics and tests can count SQL round trips (and tests see which).
type Counted struct {
	Q       sqlx.QueryerContext
	OnQuery func(query string)
}

// QueryContext counts and runs the query.
func (c Counted) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	c.OnQuery(query)
	return c.Q.QueryContext(ctx, query, args...)
}

// QueryxContext counts and runs the query.
func (c Counted) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	c.OnQuery(query)
	return c.Q.QueryxContext(ctx, query, args...)
}

// QueryRowxContext counts and runs the query.
func (c Counted) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	c.OnQuery(query)
	return c.Q.QueryRowxContext(ctx, query, args...)
}
