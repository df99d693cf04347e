package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestJWT(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, _ := e.account(100, 1000, nil)
	secret := []byte("jwt-secret-for-tests")
	sub := strconv.FormatInt(a.ID, 10)
	now := e.clock.Now()
	sign := func(method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
		t.Helper()
		s, err := jwt.NewWithClaims(method, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	valid := jwt.MapClaims{"sub": sub, "exp": now.Add(time.Hour).Unix()}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	// alg none: header and claims, empty signature.
	enc := base64.RawURLEncoding.EncodeToString
	none := enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc([]byte(`{"sub":"`+sub+`","exp":`+strconv.FormatInt(now.Add(time.Hour).Unix(), 10)+`}`)) + "."
	good := sign(jwt.SigningMethodHS256, secret, valid)
	parts := strings.Split(good, ".")

	issued, err := e.svc.IssueJWT(a.ID, nil, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	narrowed, _ := e.svc.IssueJWT(a.ID, []string{ReadCompany}, time.Minute)

	for _, c := range []struct {
		name, token string
		status      int
		message     string
	}{
		{"valid", good, 200, ""},
		{"valid bearer", "Bearer " + good, 200, ""},
		{"issued", issued, 200, ""},
		{"expired", sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": sub, "exp": now.Add(-time.Second).Unix()}), 401, "invalid authorization"},
		{"missing exp", sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": sub}), 401, "invalid authorization"},
		{"forged", sign(jwt.SigningMethodHS256, []byte("another secret"), valid), 401, "invalid authorization"},
		{"tampered claims", parts[0] + "." + enc([]byte(`{"sub":"`+sub+`0","exp":9999999999}`)) + "." + parts[2], 401, "invalid authorization"},
		{"alg none", none, 401, "invalid authorization"},
		{"HS512", sign(jwt.SigningMethodHS512, secret, valid), 401, "invalid authorization"},
		{"RS256", sign(jwt.SigningMethodRS256, rsaKey, valid), 401, "invalid authorization"},
		{"unknown account", sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "999999", "exp": now.Add(time.Hour).Unix()}), 401, "invalid authorization"},
		{"sub not an id", sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": "acme", "exp": now.Add(time.Hour).Unix()}), 401, "invalid authorization"},
		{"not yet valid", sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": sub, "exp": now.Add(time.Hour).Unix(), "nbf": now.Add(time.Minute).Unix()}), 401, "invalid authorization"},
		{"narrowed", narrowed, 403, "not enough privileges"},
		{"narrowed claim", sign(jwt.SigningMethodHS256, secret, jwt.MapClaims{"sub": sub, "exp": now.Add(time.Hour).Unix(), "permissions": []string{"read:office"}}), 200, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			expect(t, e.get(office, c.token), c.status, c.message)
		})
	}
	// Past exp by the service's clock.
	e.clock.Add(2 * time.Minute)
	expect(t, e.get(office, issued), 401, "invalid authorization")

	// Without a configured secret no JWT is accepted.
	_, srv := e.start(func(c *Config) { c.JWTSecret = nil })
	expect(t, get(t, srv, "GET", office, good), 401, "invalid authorization")
}

func TestSignedURLs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	a, _ := e.account(100, 1000, nil)
	k, _, err := AddKey(ctx, e.db, a.ID, "links", nil)
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := AddKey(ctx, e.db, a.ID, "another key of the account", nil)
	if err != nil {
		t.Fatal(err)
	}
	exp := e.clock.Now().Add(90 * 24 * time.Hour)
	cert := e.svc.SignURL("/rfb/certificate", url.Values{"taxId": {"33683111000280"}, "pages": {"REGISTRATION,MEMBERS"}}, k.ID, exp)
	mapURL := e.svc.SignURL(office+"/map", url.Values{"type": {"satellite"}, "zoom": {"18"}}, k.ID, exp)

	expect(t, e.get(cert, ""), 200, "")
	expect(t, e.get(mapURL, ""), 200, "")
	if b := e.balance(a.ID); b != 100-1-3 {
		t.Fatalf("balance %d: signed URLs charge the account of their key", b)
	}
	// The parameters may come in any order.
	u, _ := url.Parse(cert)
	q := u.Query()
	keyID := strconv.FormatInt(k.ID, 10)
	reordered := u.Path + "?signature=" + url.QueryEscape(q.Get("signature")) + "&taxId=" + q.Get("taxId") + "&expires=" + q.Get("expires") + "&keyId=" + keyID + "&pages=" + url.QueryEscape(q.Get("pages"))
	expect(t, e.get(reordered, ""), 200, "")

	tamper := func(key, value string) string {
		q := u.Query()
		q.Set(key, value)
		return u.Path + "?" + q.Encode()
	}
	// A link of the first format: signed for an account, without the
	// version tag, as main signed them before links belonged to keys.
	oldMAC := hmac.New(sha256.New, []byte("signing-key-for-tests"))
	oldCanon := "account=" + strconv.FormatInt(a.ID, 10) + "&expires=" + strconv.FormatInt(exp.Unix(), 10) + "&taxId=33683111000280"
	oldMAC.Write([]byte("/rfb/certificate?" + oldCanon))
	oldLink := "/rfb/certificate?" + oldCanon + "&signature=" + base64.RawURLEncoding.EncodeToString(oldMAC.Sum(nil))
	for _, c := range []struct {
		name, url string
		status    int
		message   string
	}{
		{"tampered tax id", tamper("taxId", "11222333000181"), 401, "invalid authorization"},
		{"another key of the account", tamper("keyId", strconv.FormatInt(other.ID, 10)), 401, "invalid authorization"},
		{"extended expiry", tamper("expires", strconv.FormatInt(exp.Add(time.Hour).Unix(), 10)), 401, "invalid authorization"},
		{"added parameter", cert + "&pages=MEMBERS", 401, "invalid authorization"},
		{"key id twice", cert + "&keyId=" + keyID, 401, "invalid authorization"},
		{"forged signature", tamper("signature", base64.RawURLEncoding.EncodeToString(make([]byte, 32))), 401, "invalid authorization"},
		{"garbled signature", tamper("signature", "%%%"), 401, "invalid authorization"},
		{"another path", strings.Replace(cert, "/rfb/certificate", "/simples/certificate", 1), 401, "invalid authorization"},
		{"another office", strings.Replace(mapURL, "33683111000280", "11222333000181", 1), 401, "invalid authorization"},
		{"another signer", (&Service{signingKey: []byte("other")}).SignURL("/rfb/certificate", nil, k.ID, exp), 401, "invalid authorization"},
		{"not signable", e.svc.SignURL(office, nil, k.ID, exp), 403, "not enough privileges"},
		{"unknown key", e.svc.SignURL("/rfb/certificate", nil, 999999, exp), 401, "invalid authorization"},
		{"first format, signed for an account", oldLink, 401, "invalid authorization"},
	} {
		t.Run(c.name, func(t *testing.T) {
			expect(t, e.get(c.url, ""), c.status, c.message)
		})
	}

	e.clock.Add(90*24*time.Hour - time.Second)
	expect(t, e.get(cert, ""), 200, "")
	e.clock.Add(time.Second)
	expect(t, e.get(cert, ""), 401, "invalid authorization")
}

// TestSignedURLFollowsItsKey: a link is worth what its key is worth now: it
// stops with the key's revocation, its account's suspension, or the loss of
// the route's permission, exactly as a header credential would, after at
// most the key cache's TTL.
func TestSignedURLFollowsItsKey(t *testing.T) {
	t.Parallel()
	const ttl = 2 * time.Second
	e := newEnv(t, func(c *Config) { c.KeyCacheTTL = ttl })
	ctx := context.Background()
	a, _ := e.account(1000, 1000, nil)
	full, _, _ := AddKey(ctx, e.db, a.ID, "full", nil)
	officeOnly, _, _ := AddKey(ctx, e.db, a.ID, "office only", []string{ReadOffice})
	certOnly, _, _ := AddKey(ctx, e.db, a.ID, "certificates only", []string{ReadCertificate})
	exp := e.clock.Now().Add(24 * time.Hour)
	link := func(k Key, path string) string {
		return e.svc.SignURL(path, url.Values{"taxId": {"33683111000280"}}, k.ID, exp)
	}

	// Permissions: those of the key, narrowed to the route's.
	expect(t, e.get(link(officeOnly, "/rfb/certificate"), ""), 403, "not enough privileges", "permission", ReadCertificate)
	expect(t, e.get(link(certOnly, "/rfb/certificate"), ""), 200, "")
	expect(t, e.get(link(certOnly, office+"/map"), ""), 403, "not enough privileges", "permission", ReadMap)

	cert := link(full, "/rfb/certificate")
	expect(t, e.get(cert, ""), 200, "")

	// Suspension: refused with the reason, within the TTL.
	if err := Suspend(ctx, e.db, a.ID, "payment overdue"); err != nil {
		t.Fatal(err)
	}
	expect(t, e.get(cert, ""), 200, "") // cached: the TTL is the only delay
	e.clock.Add(ttl)
	expect(t, e.get(cert, ""), 403, "account has been suspended", "reason", "payment overdue")
	if err := Resume(ctx, e.db, a.ID); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(ttl)
	expect(t, e.get(cert, ""), 200, "")

	// The account loses the permission.
	if err := SetAccountPermissions(ctx, e.db, a.ID, []string{ReadOffice, ReadMap}); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(ttl)
	expect(t, e.get(cert, ""), 403, "not enough privileges", "permission", ReadCertificate)
	if err := SetAccountPermissions(ctx, e.db, a.ID, nil); err != nil {
		t.Fatal(err)
	}
	e.clock.Add(ttl)
	expect(t, e.get(cert, ""), 200, "")

	// Revocation: for good.
	if err := RevokeKey(ctx, e.db, full.ID, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	expect(t, e.get(cert, ""), 200, "")
	e.clock.Add(ttl)
	expect(t, e.get(cert, ""), 401, "invalid authorization")
}
