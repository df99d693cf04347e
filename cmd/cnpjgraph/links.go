package main

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// officeLinkSigner signs the office lookup's links for the caller: only the
// files its credential may open (the file route's permission), signed as
// the legacy links are. Outside a request of the middleware (no caller)
// links are unsigned.
func officeLinkSigner(a *auth.Service) service.SignLink {
	return func(ctx context.Context, permission, path string, q url.Values, expires time.Time) (string, bool) {
		p, ok := auth.PrincipalFrom(ctx)
		if !ok {
			if len(q) == 0 {
				return path, true
			}
			return path + "?" + q.Encode(), true
		}
		if !p.Permissions.Has(permission) {
			return "", false
		}
		return a.SignURL(path, q, strconv.FormatInt(p.AccountID, 10), expires), true
	}
}
