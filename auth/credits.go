package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
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
	err = s.stmts.debit.QueryRowContext(ctx, accountID, today, n).Scan(&remaining, &day)
	if errors.Is(err, sql.ErrNoRows) {
		var balance int64
		if err := s.stmts.balance.QueryRowContext(ctx, accountID, today).Scan(&balance); err != nil {
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

// Charge prices the current request: it debits cost credits from the
// account (or from what Hold already took), and returns *CreditsError when the
// account is short. If the request ends in an error (status >= 400), the
// middleware refunds everything it charged.
func Charge(ctx context.Context, cost int) error {
	st := stateFrom(ctx)
	if st == nil {
		return ErrMissing
	}
	return st.take(ctx, int64(cost), true)
}

// Hold takes n credits up front for the current request, refusing it with
// *CreditsError before any work when the account is short; later Charge calls
// draw from the hold, and what is left of it is refunded when the request
// ends. GraphQL holds the worst-case price of a query before running it.
func Hold(ctx context.Context, n int) error {
	st := stateFrom(ctx)
	if st == nil {
		return ErrMissing
	}
	return st.take(ctx, int64(n), false)
}

// Reserve counts n more requests of the current principal against its
// per-minute limit, refusing with *RateLimitError (counting nothing) when they
// do not fit: GraphQL reserves a query's lookups before running it, so that
// batching does not bypass the limit.
func Reserve(ctx context.Context, n int) error {
	st := stateFrom(ctx)
	if st == nil {
		return ErrMissing
	}
	if st.svc.unlimited || n <= 0 {
		return nil
	}
	d, err := st.svc.Allow(ctx, st.p.AccountID, st.p.Rate, n)
	if err != nil {
		return err
	}
	st.setRateHeaders(d)
	if !d.Allowed {
		return &RateLimitError{RetryAfter: d.Reset}
	}
	return nil
}

// Refund gives back at once every credit the current request has taken;
// the middleware does it itself when the answer is an error.
func Refund(ctx context.Context) error {
	st := stateFrom(ctx)
	if st == nil {
		return nil
	}
	return st.refund(ctx, true)
}

// Charged is what the current request has charged so far.
func Charged(ctx context.Context) int64 {
	st := stateFrom(ctx)
	if st == nil {
		return 0
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.spent
}

// PrincipalFrom returns who the current request runs as.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	st := stateFrom(ctx)
	if st == nil {
		return Principal{}, false
	}
	return st.p, true
}

// take debits n credits for the request. spend: the credits pay for work
// (Charge), drawing first on the hold; otherwise they extend the hold (Hold).
func (st *requestState) take(ctx context.Context, n int64, spend bool) error {
	if n <= 0 {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	need := n
	if spend {
		need = max(0, n-st.hold)
	}
	if need > 0 {
		_, day, err := st.svc.Debit(ctx, st.p.AccountID, need)
		if err != nil {
			var ce *CreditsError
			if errors.As(err, &ce) && spend {
				ce.Required, ce.Remaining = n, ce.Remaining+st.hold
			}
			return err
		}
		if !day.Equal(st.day) {
			st.day, st.refundable = day, 0
		}
		st.refundable += need
		st.debited += need
		st.hold += need
	}
	if spend {
		st.hold -= n
		st.spent += n
	}
	return nil
}

// refund returns credits to the account: all of them (failed request) or
// only the unused hold.
func (st *requestState) refund(ctx context.Context, all bool) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := min(st.hold, st.refundable)
	if all {
		n = st.refundable
	}
	if n <= 0 {
		return nil
	}
	if err := st.svc.Refund(context.WithoutCancel(ctx), st.p.AccountID, n, st.day); err != nil {
		return err
	}
	st.refundable -= n
	st.refunded += n
	if all {
		st.hold, st.spent = 0, 0
	} else {
		st.hold -= n
	}
	return nil
}
