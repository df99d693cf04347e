package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/imagery"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// testSigner stands in for auth.Service.SignLink of a credential holding
// every permission: it appends the expiry and a fake signature to the path
// and query, as a relative reference.
func testSigner(_ context.Context, _, path string, q url.Values, expires time.Time) (string, bool) {
	q2 := url.Values{}
	for k, v := range q {
		q2[k] = v
	}
	q2.Set("expires", strconv.FormatInt(expires.Unix(), 10))
	q2.Set("signature", "test-signature")
	return path + "?" + q2.Encode(), true
}

func legacyDeps(t *testing.T) setup {
	seats, err := imagery.LoadMunicipalities(seatsPath(t))
	if err != nil {
		t.Fatal(err)
	}
	return func(o *service.Options, d *rest.Deps) {
		d.Seats = seats
		o.SignLink = testSigner
		d.PublicURL = "https://api.example.com/"
	}
}

func TestLegacyGolden(t *testing.T) {
	t.Parallel()
	s := routerWith(t, fixtureDB(t), legacyDeps(t))
	for _, c := range []struct{ name, target string }{
		{"companies_serpro", "/companies/" + dbtest.SerproBranch},
		{"companies_big_head", "/companies/" + dbtest.BigHead},
		{"companies_alpha", "/companies/" + dbtest.AlphaTaxID},
		{"companies_abroad", "/companies/" + dbtest.AbroadTaxID},
		{"companies_big_closed", "/companies/" + string(cnpj.Build(dbtest.BigRoot, "0005"))}, // baixada, with a reason
	} {
		t.Run(c.name, func(t *testing.T) {
			r := s.get(t, c.target)
			if r.status != 200 || r.header.Get("Content-Type") != "application/json; charset=utf-8" {
				t.Fatalf("%d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
			}
			golden(t, c.name, r.body)
		})
	}
}

// TestLegacySerproFields repeats the contract's rules, so a careless
// -update cannot hide a wrong value.
func TestLegacySerproFields(t *testing.T) {
	t.Parallel()
	s := routerWith(t, fixtureDB(t), legacyDeps(t))
	o := s.get(t, "/companies/"+dbtest.SerproBranch).object(t)
	want := map[string]any{
		"last_update": "2025-12-07T00:00:00.000Z",
		"tax_id":      "33683111000280",
		"type":        "FILIAL",
		"size":        "DEMAIS",
		"capital":     json.Number("1061004829.23"),
		"founded":     "1967-06-30",
	}
	for k, v := range want {
		if got := path(t, o, k); got != v {
			t.Errorf("%s = %#v, want %#v", k, got, v)
		}
	}
	checks := []struct {
		steps []any
		want  any
	}{
		{[]any{"registration", "status"}, "ATIVA"},
		{[]any{"registration", "status_reason"}, nil},
		{[]any{"address", "city"}, "Brasília"}, // the IBGE name, with its accent
		{[]any{"address", "city_ibge"}, "5300108"},
		{[]any{"address", "state_ibge"}, "53"},
		{[]any{"address", "neighborhood"}, "ASA NORTE"},
		{[]any{"legal_nature", "code"}, "2011"},
		{[]any{"legal_nature", "description"}, "Empresa Pública"},
		{[]any{"primary_activity", "code"}, "6204000"},
		{[]any{"secondary_activities", 4, "code"}, "6311900"},
		{[]any{"membership", 0, "name"}, "ANDRE DE CESERO"},
		{[]any{"membership", 0, "tax_id"}, "***220050**"},
		{[]any{"membership", 0, "role", "code"}, "10"},
		{[]any{"membership", 0, "role", "description"}, "Diretor"},
		{[]any{"simples_nacional", "simples_optant"}, true},
		{[]any{"simples_nacional", "simples_included"}, "2014-01-01"},
		{[]any{"simples_nacional", "simei_optant"}, false},
		{[]any{"sintegra", "home_state_registration"}, nil},
	}
	for _, c := range checks {
		if got := path(t, o, c.steps...); got != c.want {
			t.Errorf("%v = %#v, want %#v", c.steps, got, c.want)
		}
	}
	if p, ok := path(t, o, "partnership").([]any); !ok || len(p) != 0 {
		t.Errorf("partnership = %#v, want []", path(t, o, "partnership"))
	}
	// Links: absolute on PUBLIC_URL, signed, expiring 90 days after the
	// query date.
	expires := strconv.FormatInt(now.Add(90*24*time.Hour).Unix(), 10)
	for _, steps := range [][]any{{"files", "registration"}, {"files", "membership"}, {"maps", "roads"}, {"maps", "satellite"}, {"maps", "street"}} {
		link, _ := path(t, o, steps...).(string)
		u, err := url.Parse(link)
		if err != nil || u.Scheme != "https" || u.Host != "api.example.com" ||
			u.Query().Get("signature") != "test-signature" || u.Query().Get("expires") != expires {
			t.Errorf("%v = %q", steps, link)
		}
	}
	if got := path(t, o, "files", "membership"); got != "https://api.example.com/rfb/certificate?expires="+expires+"&pages=MEMBERS&signature=test-signature&taxId=33683111000280" {
		t.Errorf("files.membership = %v", got)
	}
	if got := path(t, o, "maps", "satellite"); got != "https://api.example.com/office/33683111000280/map?expires="+expires+"&signature=test-signature&type=satellite" {
		t.Errorf("maps.satellite = %v", got)
	}
}

// TestLegacyLinksWithheld: a link the caller's credential may not open is
// null, the field still present; the others are given.
func TestLegacyLinksWithheld(t *testing.T) {
	t.Parallel()
	var asked []string
	s := routerWith(t, fixtureDB(t), func(o *service.Options, _ *rest.Deps) {
		o.SignLink = func(ctx context.Context, permission, path string, q url.Values, expires time.Time) (string, bool) {
			asked = append(asked, permission+" "+path)
			if permission != service.ReadMap {
				return "", false
			}
			return testSigner(ctx, permission, path, q, expires)
		}
	})
	o := s.get(t, "/companies/"+dbtest.SerproBranch).object(t)
	for _, c := range []struct {
		steps []any
		given bool
	}{
		{[]any{"files", "registration"}, false}, {[]any{"files", "membership"}, false},
		{[]any{"maps", "roads"}, true}, {[]any{"maps", "satellite"}, true}, {[]any{"maps", "street"}, false},
	} {
		group := o[c.steps[0].(string)].(map[string]any)
		link, present := group[c.steps[1].(string)]
		if !present || (link != nil) != c.given {
			t.Errorf("%v = %#v (present %v), want a link: %v", c.steps, link, present, c.given)
		}
	}
	want := []string{
		service.ReadCertificate + " /rfb/certificate", service.ReadCertificate + " /rfb/certificate",
		service.ReadMap + " /office/" + dbtest.SerproBranch + "/map", service.ReadMap + " /office/" + dbtest.SerproBranch + "/map",
		service.ReadStreet + " /office/" + dbtest.SerproBranch + "/street",
	}
	if strings.Join(asked, "\n") != strings.Join(want, "\n") {
		t.Errorf("the signer was asked for %q, want %q", asked, want)
	}
}

// TestLegacyLinksFollow fetches the legacy answer's links: each one is a
// route of this router that answers a file.
func TestLegacyLinksFollow(t *testing.T) {
	t.Parallel()
	s := routerWith(t, fixtureDB(t), nil)
	req := httptest.NewRequest(http.MethodGet, "/companies/"+dbtest.SerproBranch, nil)
	req.Host = "cnpj.example.org"
	o := s.do(t, req).object(t)
	for _, steps := range [][]any{{"files", "registration"}, {"files", "membership"}} {
		link, _ := path(t, o, steps...).(string)
		// Unsigned without a signer, on the request's own host.
		if !strings.HasPrefix(link, "http://cnpj.example.org/rfb/certificate?") || strings.Contains(link, "signature") {
			t.Fatalf("%v = %q", steps, link)
		}
		r := s.get(t, strings.TrimPrefix(link, "http://cnpj.example.org"))
		if r.status != 200 || r.header.Get("Content-Type") != "application/pdf" {
			t.Errorf("%s: %d %s", link, r.status, r.body)
		}
	}
	// Without providers the map and street links exist but answer 503.
	if link, _ := path(t, o, "maps", "street").(string); link != "http://cnpj.example.org/office/33683111000280/street" {
		t.Errorf("maps.street = %q", link)
	}
}

func TestLegacyErrorsAndDeprecated(t *testing.T) {
	t.Parallel()
	s := routerWith(t, fixtureDB(t), nil)
	for _, c := range []struct {
		target string
		status int
	}{
		{"/companies/" + dbtest.SerproHead, 404},
		{"/companies/123", 400},
		{"/companies/" + dbtest.SerproBranch + "?strategy=ONLINE&maxAge=3", 400},
		{"/companies/" + dbtest.SerproBranch + "?strategy=ONLINE", 503},
		{"/file/abcdef0123456789", 404},
		{"/me/requests", 404},
		{"/me/requests?page=2", 404},
	} {
		r := s.get(t, c.target)
		if r.status != c.status || r.header.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Errorf("%s: %d %s", c.target, r.status, r.body)
			continue
		}
		o := r.object(t)
		if o["code"] != json.Number(strconv.Itoa(c.status)) || o["message"] == "" {
			t.Errorf("%s: body %s", c.target, r.body)
		}
	}
}
