package graphqlapi

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/cnpjgraph/cnpjgraph/auth"
)

// lookupPermission is the permission the same REST lookup needs.
var lookupPermission = map[string]string{
	KindOffice:   auth.ReadOffice,
	KindCompany:  auth.ReadCompany,
	KindPerson:   auth.ReadPerson,
	KindRegistry: auth.ReadRFB,
	KindSimples:  auth.ReadSimples,
}

// AuthMeter prices and limits a query like the REST requests it stands for,
// before it runs: every lookup needs the permission its REST route needs;
// the request itself counted once against the per-minute rate, so the other
// lookups are reserved on top; and when lookups may go online (an upstream is
// configured), the worst case of their credits is held, so that a query the
// account cannot pay for is refused whole. What is not spent is refunded when
// the request ends.
func AuthMeter(online bool, onlineCost int) Meter {
	return func(ctx context.Context, _ *graphql.OperationContext, lookups Lookups) error {
		p, ok := auth.PrincipalFrom(ctx)
		if !ok {
			return nil // served without auth (AUTH_DISABLED)
		}
		worst := 0
		for _, l := range lookups {
			if perm := lookupPermission[l.Kind]; perm != "" && !p.Permissions.Has(perm) {
				return &auth.PrivilegeError{Permission: perm}
			}
			if online && l.Strategy != "CACHE" {
				portals := 0
				switch l.Kind {
				case KindOffice:
					portals = 1
					if l.Simples {
						portals++
					}
					if l.Registrations {
						portals++
					}
				case KindRegistry, KindSimples:
					portals = 1
				}
				worst += l.Count * portals * onlineCost
			}
		}
		if n := lookups.Total(); n > 1 {
			if err := auth.Reserve(ctx, n-1); err != nil {
				return err
			}
		}
		if worst > 0 {
			return auth.Hold(ctx, worst)
		}
		return nil
	}
}
