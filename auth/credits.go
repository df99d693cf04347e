package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db"
)

// The debit is one statement: refill when the stored day is before today,
// check the balance covers the cost, subtract. Concurrent debits of one
// account serialize on its row, and the WHERE is re-checked on the row each
// one finally sees, so the balance never goes negative.
const (
	qDebit = `
		UPDATE accounts AS a SET
			credits = (CASE WHEN a.credits_day < $2 THEN p.credits_per_day ELSE a.credits END) - $3,
			credits_day = GREATEST(a.credits_day, $2)
		FROM plans AS p
		WHERE a.id = $1 AND p.name = a.plan
			AND (CASE WHEN a.credits_day < $2 THEN p.credits_per_day ELSE a.credits END) >= $3
		RETURNING a.credits, a.credits_day`
	qBalance = `
		SELECT CASE WHEN a.credits_day < $2 THEN p.credits_per_day ELSE a.credits END
		FROM accounts a JOIN plans p ON p.name = a.plan WHERE a.id = $1`
	// A refund only lands on the day it was debited: after a refill the
	// balance is the full allowance again and owes nothing back.
	qRefund = `UPDATE accounts SET credits = credits + $3 WHERE id = $1 AND credits_day = $2`
)

// Debit takes n credits from an account's balance of today, refilled first
// when a new UTC day has begun. It returns the balance left and the day the
// debit belongs to (for Refund), or *CreditsError when the balance is short.
func (s *Service) Debit(ctx context.Context, accountID, n int64) (remaining int64, day time.Time, err error) {
	today := utcDay(s.now())
	// Detached: a request's debit ends with it, without the goroutines
	// that watch a cancellable context (db.Detached).
	stmtCtx := db.Detached(ctx)
	err = s.stmts.debit.QueryRowContext(stmtCtx, accountID, today, n).Scan(&remaining, &day)
	if errors.Is(err, sql.ErrNoRows) {
		var balance int64
		if err := s.stmts.balance.QueryRowContext(stmtCtx, accountID, today).Scan(&balance); err != nil {
			return 0, today, fmt.Errorf("auth: balance: %w", err)
		}
		return balance, today, &CreditsError{Required: n, Remaining: balance}
	}
	if err != nil {
		return 0, today, fmt.Errorf("auth: debit: %w", err)
	}
	return remaining, day, nil
}

// Refund gives n credits debited on day back to an account.
func (s *Service) Refund(ctx context.Context, accountID, n int64, day time.Time) error {
	if n <= 0 {
		return nil
	}
	if _, err := s.stmts.refund.ExecContext(ctx, accountID, day, n); err != nil {
		return fmt.Errorf("auth: refund: %w", err)
	}
	return nil
}

// Meter accounts the service layer's lookups to the principal of the
// request (service.Meter): each lookup needs its permission and counts
// against the per-minute rate, the first one of a request riding on the
// request's own unit, taken at the door; priced work reserves credits, and
// a failure gives them back. A context without a request of the
// middleware (the command line) is not accounted.
type Meter struct{ svc *Service }

// Meter returns the service.Meter of s.
func (s *Service) Meter() Meter { return Meter{svc: s} }

// Admit counts a lookup against the rate and checks its permission. A
// refused lookup still counts, as a refused REST request does.
func (m Meter) Admit(ctx context.Context, permission string) error {
	st := stateFrom(ctx)
	if st == nil {
		return nil
	}
	st.mu.Lock()
	st.lookups++
	extra := st.lookups > 1
	st.mu.Unlock()
	if extra && !m.svc.unlimited && !st.background {
		d, err := m.svc.Allow(ctx, st.p.AccountID, st.p.Rate, 1)
		if err != nil {
			return err
		}
		// A query's lookups are admitted concurrently: one at a time on
		// the shared header map.
		st.mu.Lock()
		st.setRateHeaders(d)
		st.mu.Unlock()
		if !d.Allowed {
			return &RateLimitError{RetryAfter: d.Reset}
		}
	}
	if permission != "" && !st.p.Permissions.Has(permission) { // "": any valid credential
		return &PrivilegeError{Permission: permission}
	}
	return nil
}

// Reserve debits credits from the principal's balance, or refuses with
// *CreditsError and takes nothing.
func (m Meter) Reserve(ctx context.Context, credits int) error {
	st := stateFrom(ctx)
	if st == nil || credits <= 0 {
		return nil
	}
	return st.take(ctx, int64(credits))
}

// Refund gives reserved credits back at once.
func (m Meter) Refund(ctx context.Context, credits int) {
	st := stateFrom(ctx)
	if st == nil || credits <= 0 {
		return
	}
	if err := st.give(ctx, int64(credits)); err != nil {
		m.svc.log.ErrorContext(ctx, "auth: refund failed", "account", st.p.AccountID, "err", err)
	}
}

// PrincipalFrom returns who the current request runs as.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	st := stateFrom(ctx)
	if st == nil {
		return Principal{}, false
	}
	return st.p, true
}

// Charged is what the current request has been charged so far.
func Charged(ctx context.Context) int64 {
	st := stateFrom(ctx)
	if st == nil {
		return 0
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.debited - st.refunded
}

// take debits n credits for the request.
func (st *requestState) take(ctx context.Context, n int64) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	_, day, err := st.svc.Debit(ctx, st.p.AccountID, n)
	if err != nil {
		return err
	}
	if !day.Equal(st.day) {
		st.day, st.refundable = day, 0
	}
	st.refundable += n
	st.debited += n
	return nil
}

// give returns up to n of the request's credits to the account; a refund
// only lands on the day of the debit (after a refill the balance owes
// nothing back).
func (st *requestState) give(ctx context.Context, n int64) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	n = min(n, st.refundable)
	if n <= 0 {
		return nil
	}
	if err := st.svc.Refund(context.WithoutCancel(ctx), st.p.AccountID, n, st.day); err != nil {
		return err
	}
	st.refundable -= n
	st.refunded += n
	return nil
}

// Owner is the account of the request in ctx (service.Owners).
func (s *Service) Owner(ctx context.Context) (int64, bool) {
	p, ok := PrincipalFrom(ctx)
	return p.AccountID, ok
}

// AsAccount is a context whose lookups are admitted and priced as the
// account's, outside any request (service.Owners): a list's export. It has
// the account's permissions, pays from its credits, and is not held to the
// per-minute rate, which is for requests.
func (s *Service) AsAccount(ctx context.Context, account int64) (context.Context, error) {
	id, err := s.accountIdentity(ctx, account)
	if err != nil {
		return nil, err
	}
	if !id.found {
		return nil, ErrInvalid
	}
	if id.suspended {
		return nil, &SuspendedError{Reason: id.reason}
	}
	st := &requestState{svc: s, background: true, p: Principal{
		AccountID: account, Account: id.name, Plan: id.plan, Rate: id.rate,
		Permissions: id.accountPerms, Credential: "export",
	}}
	return context.WithValue(ctx, stateKey{}, st), nil
}

// Record writes the usage-ledger row of work run AsAccount (service.Owners):
// what it cost, as one request of route answered status. Other contexts
// are the middleware's to record.
func (s *Service) Record(ctx context.Context, route string, status int) {
	st := stateFrom(ctx)
	if st == nil || !st.background {
		return
	}
	st.mu.Lock()
	cost := st.debited - st.refunded
	st.mu.Unlock()
	s.ledger.record(usageRow{account: st.p.AccountID, route: route, cost: cost, status: status, at: s.now()})
}
