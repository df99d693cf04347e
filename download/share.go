package download

import (
	"fmt"
	"net/url"
	"strings"
)

// Share is the WebDAV side of a Nextcloud public share: the endpoint and the
// share token, which Nextcloud takes as the basic-auth user (empty password).
type Share struct {
	Endpoint *url.URL // https://HOST[/base]/public.php/webdav/, no user info
	Token    string
}

// ParseShare derives the WebDAV endpoint from a share URL: the page
// https://HOST[/base]/index.php/s/TOKEN (or .../s/TOKEN), or the endpoint
// itself with the token as user, https://TOKEN@HOST/public.php/webdav.
func ParseShare(raw string) (Share, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Share{}, fmt.Errorf("%q is not a URL: %w", Redact(raw), err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Share{}, fmt.Errorf("%q is not an http(s) URL", Redact(raw))
	}
	p := strings.TrimSuffix(u.Path, "/")
	var base, token string
	if i := strings.Index(p, "/public.php/webdav"); i >= 0 {
		if u.User == nil || u.User.Username() == "" {
			return Share{}, fmt.Errorf("%q: a /public.php/webdav URL needs the share token as its user: https://TOKEN@%s/public.php/webdav", Redact(raw), u.Host)
		}
		base, token = p[:i], u.User.Username()
	} else {
		i := strings.LastIndex(p, "/s/")
		if i < 0 || strings.Contains(p[i+3:], "/") || p[i+3:] == "" {
			return Share{}, fmt.Errorf("%q is not a Nextcloud public share URL (https://HOST/index.php/s/TOKEN)", Redact(raw))
		}
		base, token = strings.TrimSuffix(p[:i], "/index.php"), p[i+3:]
	}
	return Share{Endpoint: &url.URL{Scheme: u.Scheme, Host: u.Host, Path: base + "/public.php/webdav/"}, Token: token}, nil
}

// url is the address of a path below the share's root ("2026-10/Cnaes.zip").
func (s Share) url(rel string) string {
	u := *s.Endpoint
	u.Path += rel
	return u.String()
}
