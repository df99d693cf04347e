package config

import (
	"net/url"
	"regexp"
	"strings"
)

// Redact is a URL as it may be logged or printed: the password of its user
// information and the values of query parameters that name a secret (key,
// token, secret, password, signature, ...) become "xxxxx"; the rest is left
// as written (templates keep their braces). Something that does not parse
// as a URL loses whatever lies between "//" and "@".
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return userInfo.ReplaceAllString(raw, "//xxxxx@")
	}
	out := raw
	if _, ok := u.User.Password(); ok {
		out = userInfo.ReplaceAllLiteralString(out, "//"+u.User.Username()+":xxxxx@")
	}
	base, query, ok := strings.Cut(out, "?")
	if !ok {
		return out
	}
	query, fragment, hasFragment := strings.Cut(query, "#")
	params := strings.Split(query, "&")
	for i, p := range params {
		k, _, _ := strings.Cut(p, "=")
		if name, err := url.QueryUnescape(k); err == nil && secretParam.MatchString(name) {
			params[i] = k + "=xxxxx"
		}
	}
	out = base + "?" + strings.Join(params, "&")
	if hasFragment {
		out += "#" + fragment
	}
	return out
}

// secretParam matches the names providers give their credentials.
var secretParam = regexp.MustCompile(`(?i)key|token|secret|pass|signature|sig$|auth|credential`)

// userInfo is the user:password@ part of a URL.
var userInfo = regexp.MustCompile(`//[^/?#]*@`)
