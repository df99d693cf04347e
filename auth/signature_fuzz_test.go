package auth

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzVerifySignedURL: whatever request target arrives, the verifier never
// panics and accepts only a URL it signed (the same path and parameters,
// in any order) that has not expired, naming the key it was signed for.
// `go test` runs the seed corpus; `make fuzz` explores.
func FuzzVerifySignedURL(f *testing.F) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	s := &Service{signingKey: []byte("fuzz-signing-key-with-32-bytes!!"), now: func() time.Time { return now }}
	later, earlier := now.Add(time.Hour), now.Add(-time.Second)
	signedFor := map[string]int64{} // signed message → key id
	sign := func(path string, q url.Values, keyID int64, expires time.Time) string {
		link := s.SignURL(path, q, keyID, expires)
		if expires.After(now) {
			u, _ := url.Parse(link)
			signedFor[message(u)] = keyID
		}
		return link
	}
	valid := []string{
		sign("/rfb/certificate", url.Values{"taxId": {"33683111000280"}, "pages": {"REGISTRATION", "MEMBERS"}}, 7, later),
		sign("/office/33683111000280/map", url.Values{"type": {"satellite"}, "zoom": {"18"}}, 7, later),
		sign("/simples/certificate", nil, 42, later),
		sign("/office/12ABC34501DE35/street", url.Values{"width": {"80"}, "fov": {"90"}}, 1, later),
		sign("/rfb/certificate", url.Values{"q": {"a b&c=d", "ç%"}}, 9, later),
	}
	for _, v := range valid {
		f.Add(v)
		u, _ := url.Parse(v)
		q := u.Query()
		f.Add(u.Path + "?" + q.Encode())                                                 // reordered: still valid
		f.Add(strings.Replace(v, "keyId=", "keyId=1", 1))                                // another key
		f.Add(strings.Replace(v, "expires=", "expires=9", 1))                            // a later expiry
		f.Add(v + "&keyId=8")                                                            // a second key id
		f.Add(v + "&signature=" + q.Get("signature"))                                    // a second signature
		f.Add(strings.Replace(v, "/rfb/", "/rfb%2F", 1))                                 // the path encoded otherwise
		f.Add(strings.Replace(v, "signature=", "signature=A", 1))                        // a longer signature
		f.Add(v[:len(v)-3])                                                              // a shorter one
		f.Add(strings.Replace(v, "&", ";", 1))                                           // another separator
		f.Add(strings.Replace(u.Path, "/", "//", 1) + "?" + u.RawQuery)                  // another path
		f.Add(u.Path + "?" + strings.ReplaceAll(u.RawQuery, "keyId", "account"))         // the first format
		f.Add(u.Path + "?" + u.RawQuery + "&" + strings.Repeat("x=1&", 50) + "expires=") // padding
	}
	f.Add(sign("/rfb/certificate", nil, 7, earlier)) // expired
	f.Add("/rfb/certificate?account=1&expires=" + strconv.FormatInt(later.Unix(), 10) + "&signature=AAAA")
	f.Add("/rfb/certificate?signature=&expires=&keyId=")
	f.Add("/rfb/certificate?keyId=-1&expires=99999999999&signature=%ZZ")
	f.Add("?signature=x")
	f.Add("/")
	f.Fuzz(func(t *testing.T, target string) {
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return
		}
		keyID, err := s.verifySignedURL(&http.Request{URL: u})
		if err != nil {
			if !errors.Is(err, ErrInvalid) || keyID != 0 {
				t.Fatalf("%q: refused with %v and key %d, want ErrInvalid and 0", target, err, keyID)
			}
			return
		}
		want, ok := signedFor[message(u)]
		if !ok {
			t.Fatalf("%q was accepted (key %d), but this URL was never signed", target, keyID)
		}
		if keyID != want {
			t.Fatalf("%q: key %d, signed for %d", target, keyID, want)
		}
	})
}

// message is what a URL's signature covers: its escaped path and its
// canonical query without the signature.
func message(u *url.URL) string {
	q, _ := url.ParseQuery(u.RawQuery)
	q.Del(paramSignature)
	return u.EscapedPath() + "?" + canonicalQuery(q)
}
