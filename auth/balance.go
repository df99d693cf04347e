package auth

import (
	"context"
	"fmt"

	"github.com/cnpjgraph/cnpjgraph/model"
)

// Balance is what the caller of ctx may still spend (GET /credit), false
// outside a request of the middleware. Accounts have one balance: the
// plan's daily allowance, refilled at 00:00 UTC, and whatever `account
// grant --credits` added to it today; all of it is transient (it resets
// at the refill). No credit outlives the day, so perpetual is 0.
func (m Meter) Balance(ctx context.Context) (model.Credits, bool, error) {
	st := stateFrom(ctx)
	if st == nil {
		return model.Credits{}, false, nil
	}
	var balance int64
	if err := m.svc.stmts.balance.QueryRowContext(ctx, st.p.AccountID, utcDay(m.svc.now())).Scan(&balance); err != nil {
		return model.Credits{}, true, fmt.Errorf("auth: balance: %w", err)
	}
	return model.Credits{Transient: balance}, true, nil
}
