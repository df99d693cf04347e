package auth

import (
	"context"
	"net/url"
	"time"
)

// SignLink is the link an answer gives to a file route (path?q) for the
// credential of the request in ctx, and whether the answer may carry it at
// all: never a link its caller cannot open, so false when the credential
// lacks permission (the route's: read:certificate, read:map, read:street).
//
//   - An API key's links are signed for that key (SignURL), valid until
//     expires and for as long as the key may open them with a header.
//   - A JWT names no key, and its narrowed permissions are known only while
//     it is presented: its links are not signed. They open with a
//     credential in the header, the JWT itself included, like any route.
//   - Without a credential (no request of the middleware in ctx: the
//     command line, AUTH_DISABLED) links are not signed either.
func (s *Service) SignLink(ctx context.Context, permission, path string, q url.Values, expires time.Time) (string, bool) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return unsigned(path, q), true
	}
	if !p.Permissions.Has(permission) {
		return "", false
	}
	if p.KeyID == 0 {
		return unsigned(path, q), true
	}
	return s.SignURL(path, q, p.KeyID, expires), true
}

func unsigned(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}
