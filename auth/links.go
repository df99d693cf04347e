package auth

import (
	"context"
	"net/url"
	"strconv"
	"time"
)

// SignLink is the link an answer gives to a file route (path?q) for the
// caller of ctx, and whether the answer may carry it at all: never a link
// the caller cannot open, so false when its credential lacks the route's
// permission (read:certificate, read:map, read:street). The link is signed
// as SignURL signs, valid until expires. Outside a request of the
// middleware (the command line, AUTH_DISABLED) links are not signed.
// It is the service's SignLink for the office lookup's links option.
func (s *Service) SignLink(ctx context.Context, permission, path string, q url.Values, expires time.Time) (string, bool) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		if len(q) == 0 {
			return path, true
		}
		return path + "?" + q.Encode(), true
	}
	if !p.Permissions.Has(permission) {
		return "", false
	}
	return s.SignURL(path, q, strconv.FormatInt(p.AccountID, 10), expires), true
}
