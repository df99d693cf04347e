package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// URL signatures. A signed URL carries the id of the API key that asked for
// it (keyId) and its expiry (expires, unix seconds) in its query, and a
// signature: HMAC-SHA256, under SIGNING_KEY, of a version tag, the escaped
// path, "?", and the canonical query (every parameter except signature,
// sorted by key then value, each key=value query-escaped, joined by "&").
// So the path, every parameter, the expiry and the key are all signed.
//
// Verification then loads the key as it is now: the link opens what the key
// could open with a header, only while it could (see authenticate).
// Links of the first format named an account (account=) and are refused.

// signatureVersion separates this format's messages from any other's.
const signatureVersion = "cnpjgraph-link-v2\n"

// Query parameters of a signed URL.
const (
	paramKeyID     = "keyId"
	paramExpires   = "expires"
	paramSignature = "signature"
)

// SignURL returns path?query with keyId, expires and signature added: a
// link that opens exactly that URL, as the key keyID would, until expires.
func (s *Service) SignURL(path string, query url.Values, keyID int64, expires time.Time) string {
	q := make(url.Values, len(query)+2)
	for k, v := range query {
		if k != paramSignature {
			q[k] = append([]string(nil), v...)
		}
	}
	q.Set(paramKeyID, strconv.FormatInt(keyID, 10))
	q.Set(paramExpires, strconv.FormatInt(expires.Unix(), 10))
	escaped := (&url.URL{Path: path}).EscapedPath()
	canon := canonicalQuery(q)
	return escaped + "?" + canon + "&" + paramSignature + "=" + base64.RawURLEncoding.EncodeToString(s.mac(escaped, canon))
}

func (s *Service) mac(escapedPath, canonical string) []byte {
	m := hmac.New(sha256.New, s.signingKey)
	m.Write([]byte(signatureVersion))
	m.Write([]byte(escapedPath))
	m.Write([]byte{'?'})
	m.Write([]byte(canonical))
	return m.Sum(nil)
}

func canonicalQuery(q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		vs := append([]string(nil), q[k]...)
		sort.Strings(vs)
		ek := url.QueryEscape(k)
		for _, v := range vs {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(ek)
			b.WriteByte('=')
			b.WriteString(url.QueryEscape(v))
		}
	}
	return b.String()
}

// verifySignedURL checks the request's signature (in constant time) and
// expiry, and returns the id of the key it was signed for. Every failure is
// ErrInvalid: the answer tells a forger nothing.
func (s *Service) verifySignedURL(r *http.Request) (int64, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil || len(q[paramSignature]) != 1 || len(q[paramExpires]) != 1 || len(q[paramKeyID]) != 1 {
		return 0, ErrInvalid
	}
	sig, err := base64.RawURLEncoding.DecodeString(q.Get(paramSignature))
	if err != nil {
		return 0, ErrInvalid
	}
	q.Del(paramSignature)
	if !hmac.Equal(sig, s.mac(r.URL.EscapedPath(), canonicalQuery(q))) {
		return 0, ErrInvalid
	}
	expires, err := strconv.ParseInt(q.Get(paramExpires), 10, 64)
	if err != nil || s.now().Unix() >= expires {
		return 0, ErrInvalid
	}
	keyID, err := strconv.ParseInt(q.Get(paramKeyID), 10, 64)
	if err != nil || keyID <= 0 {
		return 0, ErrInvalid
	}
	return keyID, nil
}
