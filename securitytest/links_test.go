package securitytest_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// firstFormatLink signs a link as links were signed before they belonged to
// keys: for an account (account=), without the format's version tag.
func firstFormatLink(path string, q url.Values, accountID int64, expires time.Time) string {
	v := url.Values{}
	for k, vs := range q {
		v[k] = vs
	}
	v.Set("account", strconv.FormatInt(accountID, 10))
	v.Set("expires", strconv.FormatInt(expires.Unix(), 10))
	escaped := (&url.URL{Path: path}).EscapedPath()
	canon := v.Encode() // sorted by key, single values: the first format's canonical query
	m := hmac.New(sha256.New, []byte(signingKey))
	m.Write([]byte(escaped + "?" + canon))
	return escaped + "?" + canon + "&signature=" + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

type legacyLinks struct {
	certificate, membership, roads, satellite, street *string
}

func (w *world) legacyLinks(credential string) legacyLinks {
	w.t.Helper()
	a := w.get("/companies/"+dbtest.SerproBranch, credential)
	if a.status != 200 {
		w.t.Fatalf("/companies: %d %s", a.status, a.raw)
	}
	link := func(group, name string) *string {
		g, _ := a.body[group].(map[string]any)
		v, present := g[name]
		if !present {
			w.t.Fatalf("%s.%s is missing: it must be present, null when withheld", group, name)
		}
		if v == nil {
			return nil
		}
		s := v.(string)
		return &s
	}
	return legacyLinks{
		certificate: link("files", "registration"), membership: link("files", "membership"),
		roads: link("maps", "roads"), satellite: link("maps", "satellite"), street: link("maps", "street"),
	}
}

// path strips the scheme and host of an absolute link.
func path(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil || u.Host == "" {
		t.Fatalf("link %q is not absolute", link)
	}
	return u.RequestURI()
}

// TestLinksOfAnOfficeOnlyKey ("Done when"): a read:office key's answer
// carries no link, and a link signed for it opens no certificate.
func TestLinksOfAnOfficeOnlyKey(t *testing.T) {
	w := newWorld(t, worldOptions{})
	k, secret := w.key(w.account(), []string{auth.ReadOffice})
	l := w.legacyLinks(secret)
	if l.certificate != nil || l.membership != nil || l.roads != nil || l.satellite != nil || l.street != nil {
		t.Errorf("a read:office key got links: %+v", l)
	}
	// Were one forged for it (signed as the service would), it opens nothing.
	cert := w.auth.SignURL("/rfb/certificate", url.Values{"taxId": {dbtest.SerproBranch}}, k.ID, now.Add(time.Hour))
	if got, want := outcomeOf(route{kind: fileRoute}, w.get(cert, "")), refused(auth.ReadCertificate); got != want {
		t.Errorf("certificate link of a read:office key: %s, want %s", got, want)
	}
	// A key with some file permissions gets exactly those links.
	_, mapsOnly := w.key(w.account(), []string{auth.ReadOffice, auth.ReadMap})
	l = w.legacyLinks(mapsOnly)
	if l.certificate != nil || l.membership != nil || l.street != nil || l.roads == nil || l.satellite == nil {
		t.Errorf("a read:office,read:map key: %+v", l)
	}
	if got := outcomeOf(route{kind: fileRoute}, w.get(path(t, *l.roads), "")); got != answered {
		t.Errorf("its map link: %s", got)
	}
}

// TestLinksDieWithTheirKey ("Done when"): the links of an answer open
// without a header, charge the key's account, and stop as soon as the key
// is revoked (this world caches no credential, AUTH_KEY_CACHE_TTL=0).
func TestLinksDieWithTheirKey(t *testing.T) {
	w := newWorld(t, worldOptions{})
	a := w.account()
	k, secret := w.key(a, nil)
	l := w.legacyLinks(secret)
	for _, link := range []*string{l.certificate, l.membership, l.roads, l.satellite, l.street} {
		if link == nil {
			t.Fatalf("a full key's answer lacks a link: %+v", l)
		}
		if !strings.Contains(*link, "keyId="+strconv.FormatInt(k.ID, 10)) || strings.Contains(*link, "account=") {
			t.Errorf("link %s is not signed for key %d", *link, k.ID)
		}
		if got := outcomeOf(route{kind: fileRoute}, w.get(path(t, *link), "")); got != answered {
			t.Errorf("%s: %s", *link, got)
		}
	}
	acct, err := auth.FindAccount(context.Background(), w.db, strconv.FormatInt(a.ID, 10), now)
	if err != nil {
		t.Fatal(err)
	}
	if spent := 1_000_000 - acct.Credits; spent != 1+1+3+3+10 {
		t.Errorf("the links charged %d credits to the key's account, want 18", spent)
	}
	if err := auth.RevokeKey(context.Background(), w.db, k.ID, now); err != nil {
		t.Fatal(err)
	}
	for _, link := range []*string{l.certificate, l.street} {
		if got := outcomeOf(route{kind: fileRoute}, w.get(path(t, *link), "")); got != invalid {
			t.Errorf("%s after its key was revoked: %s, want %s", *link, got, invalid)
		}
	}
}

// TestLinksOfAJWT: a JWT names no key, so its links are not signed; they
// are given when the JWT holds the route's permission and open with it.
func TestLinksOfAJWT(t *testing.T) {
	w := newWorld(t, worldOptions{})
	a := w.account()
	narrow, err := w.auth.IssueJWT(a.ID, []string{auth.ReadOffice, auth.ReadCertificate}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	l := w.legacyLinks(narrow)
	if l.certificate == nil || l.roads != nil || l.street != nil {
		t.Fatalf("a read:office,read:certificate JWT: %+v", l)
	}
	if strings.Contains(*l.certificate, "signature=") {
		t.Errorf("a JWT's link is signed: %s", *l.certificate)
	}
	if got := outcomeOf(route{kind: fileRoute}, w.get(path(t, *l.certificate), "")); got != `401 401 "missing authorization"` {
		t.Errorf("without the JWT: %s", got)
	}
	if got := outcomeOf(route{kind: fileRoute}, w.get(path(t, *l.certificate), narrow)); got != answered {
		t.Errorf("with the JWT: %s", got)
	}
}
