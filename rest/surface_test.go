package rest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/imagery"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// TestZip: postal codes derived from the fixture's offices.
func TestZip(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for code, want := range map[string]string{
		// SERPRO's CEP ends in 900: a large user's, one address, so the number.
		"70836900": `{"updated":"2025-12-07T00:00:00.000Z","code":"70836900","municipality":5300108,"street":"AVENIDA L2 SGAN","number":"601","district":"ASA NORTE","city":"BRASILIA","state":"DF"}`,
		// A street's CEP: 31 offices at numbers 101 to 131, no number.
		"01001000": `{"updated":"2025-12-07T00:00:00.000Z","code":"01001000","municipality":3550308,"street":"RUA DAS FLORES","number":null,"district":"CENTRO","city":"SAO PAULO","state":"SP"}`,
	} {
		r := s.get(t, "/zip/"+code)
		if r.status != 200 || string(r.body) != want {
			t.Errorf("/zip/%s: %d %s\n want %s", code, r.status, r.body, want)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
	}
	assertError(t, s.get(t, "/zip/12345678"), 404, service.MsgZipNotFound)
	for _, bad := range []string{"1234567", "123456789", "1234567A", "70836-900", "7083690%C3%A9"} {
		o := assertError(t, s.get(t, "/zip/"+bad), 400, fault.MsgValidation)
		if fmt.Sprint(o["constraints"]) != "[code must be a CEP of 8 digits]" {
			t.Errorf("/zip/%s: %v", bad, o["constraints"])
		}
	}
}

// TestZipRules: which address a CEP gets when its offices disagree, and
// what post office boxes and large users' codes carry.
func TestZipRules(t *testing.T) {
	t.Parallel()
	d := fixtureDB(t)
	type office struct{ zip, street, number, district, municipality string }
	rows := []office{
		// Majority: two offices on RUA Z beat one on RUA A.
		{"33333000", "RUA Z", "1", "BAIRRO", "7107"}, {"33333000", "RUA Z", "2", "BAIRRO", "7107"}, {"33333000", "RUA A", "3", "BAIRRO", "7107"},
		// A tie goes to the first street in byte order.
		{"22222000", "RUA B", "1", "X", "7107"}, {"22222000", "RUA A", "1", "Y", "7107"},
		// The same street, districts tied: the first district.
		{"22222100", "RUA C", "1", "VILA B", "7107"}, {"22222100", "RUA C", "2", "VILA A", "7107"},
		// A post office box (suffix 970-999): the municipality only.
		{"44444975", "RUA DO CORREIO", "10", "CENTRO", "9701"}, {"44444999", "RUA DO CORREIO", "10", "CENTRO", "9701"},
		// A large user's CEP (900-959): the number when every office agrees...
		{"55555910", "AVENIDA GRANDE", "500", "CENTRO", "7107"}, {"55555910", "AVENIDA GRANDE", "500", "CENTRO", "7107"},
		// ... and none when they do not.
		{"55555920", "AVENIDA GRANDE", "500", "CENTRO", "7107"}, {"55555920", "AVENIDA GRANDE", "501", "CENTRO", "7107"},
		// Not a CEP: ignored.
		{"00000000", "RUA ZERO", "1", "C", "7107"}, {"1234567X", "RUA X", "1", "C", "7107"},
	}
	for i, o := range rows {
		mustExec(t, d, `INSERT INTO cnpj.offices (tax_id, root, head, street, number, district, zip, state, municipality)
			VALUES ($1, '99999999', false, $2, $3, $4, $5, 'SP', $6)`, fmt.Sprintf("9999999900%04d", i), o.street, o.number, o.district, o.zip, o.municipality)
	}
	s := serverOver(t, d, 5*time.Second)
	for code, want := range map[string][4]any{ // street, number, district, municipality
		"33333000": {"RUA Z", nil, "BAIRRO", "3550308"},
		"22222000": {"RUA A", nil, "Y", "3550308"},
		"22222100": {"RUA C", nil, "VILA A", "3550308"},
		"44444975": {nil, nil, nil, "5300108"},
		"44444999": {nil, nil, nil, "5300108"},
		"55555910": {"AVENIDA GRANDE", "500", "CENTRO", "3550308"},
		"55555920": {"AVENIDA GRANDE", nil, "CENTRO", "3550308"},
	} {
		r := s.get(t, "/zip/"+code)
		if r.status != 200 {
			t.Errorf("/zip/%s: %d %s", code, r.status, r.body)
			continue
		}
		o := r.object(t)
		got := [4]any{o["street"], o["number"], o["district"], fmt.Sprint(o["municipality"])}
		if got != want {
			t.Errorf("/zip/%s = %v, want %v", code, got, want)
		}
	}
	assertError(t, s.get(t, "/zip/00000000"), 404, service.MsgZipNotFound)
}

func mustExec(t *testing.T, d *sqlx.DB, q string, args ...any) {
	t.Helper()
	if _, err := d.Exec(q, args...); err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
}

// authServer is the router with accounts: a key on the dev plan (all
// permissions) and one restricted to what perms names.
func authServer(t *testing.T, d *sqlx.DB, set setup) (s *server, a *auth.Service, key func(perms ...string) string) {
	t.Helper()
	ctx := context.Background()
	a, err := auth.New(ctx, auth.Config{DB: d, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	if err := auth.SetPlan(ctx, d, auth.Plan{Name: "surface", CreditsPerDay: 1000, RequestsPerMinute: 1000}); err != nil {
		t.Fatal(err)
	}
	opts := service.Options{Now: func() time.Time { return now }, Meter: a.Meter(), SignLink: a.SignLink}
	deps := rest.Deps{RequestTimeout: 5 * time.Second,
		Authenticate: a.Middleware(auth.DoorPermission, rest.RenderError)}
	if set != nil {
		set(&opts, &deps)
	}
	deps.Service = service.New(db.NewStore(d, db.StoreOptions{}), opts)
	n := 0
	key = func(perms ...string) string {
		t.Helper()
		n++
		acct, err := auth.CreateAccount(ctx, d, fmt.Sprintf("surface-%d", n), "surface", nil, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(perms) == 0 {
			perms = nil
		}
		_, k, err := auth.AddKey(ctx, d, acct.ID, "k", perms)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	return &server{h: rest.NewRouter(deps), db: d}, a, key
}

func (s *server) as(t *testing.T, key, target string) response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if key != "" {
		req.Header.Set("Authorization", key)
	}
	return s.do(t, req)
}

// TestCredit: GET /credit is the caller's balance: free, any valid
// credential, the day's allowance as transient.
func TestCredit(t *testing.T) {
	t.Parallel()
	s, _, key := authServer(t, fixtureDB(t), nil)
	k := key(auth.ReadCompany) // no read:office or anything else: any valid key may ask
	r := s.as(t, k, "/credit")
	if r.status != 200 || string(r.body) != `{"perpetual":0,"transient":1000}` {
		t.Fatalf("credit: %d %s", r.status, r.body)
	}
	if r := s.as(t, k, "/credit"); string(r.body) != `{"perpetual":0,"transient":1000}` {
		t.Errorf("asking for credits cost credits: %s", r.body)
	}
	full := key()
	if r := s.as(t, full, "/rfb/certificate?taxId="+dbtest.SerproBranch); r.status != 200 {
		t.Fatalf("certificate: %d %s", r.status, r.body)
	}
	if r := s.as(t, full, "/credit"); string(r.body) != `{"perpetual":0,"transient":999}` {
		t.Errorf("after a certificate: %s", r.body)
	}
	assertError(t, s.as(t, "", "/credit"), 401, fault.MsgMissingAuth)
	// Without accounts there are no credits to tell.
	assertError(t, newServer(t).get(t, "/credit"), 404, service.MsgNoCredits)
}

// noList is a list id no list has.
const noList = "5680a75e-750e-4c31-a1a1-e61e0e4f5618"

// TestHead: HEAD on every GET route answers as GET does, without a body.
func TestHead(t *testing.T) {
	t.Parallel()
	d := fixtureDB(t)
	srv := httptest.NewServer(serverOver(t, d, 5*time.Second).h)
	t.Cleanup(srv.Close)
	targets := map[string]string{
		"GET /office/{taxId}": "/office/" + dbtest.SerproBranch, "GET /company/{id}": "/company/" + dbtest.SerproRoot,
		"GET /person/{id}": "/person/" + dbtest.OKBRMember.ID(), "GET /rfb": "/rfb?taxId=" + dbtest.SerproBranch,
		"GET /simples": "/simples?taxId=" + dbtest.SerproBranch, "GET /rfb/certificate": "/rfb/certificate?taxId=" + dbtest.SerproBranch,
		"GET /simples/certificate": "/simples/certificate?taxId=" + dbtest.SerproBranch,
		"GET /office/{taxId}/map":  "/office/" + dbtest.SerproBranch + "/map", "GET /office/{taxId}/street": "/office/" + dbtest.SerproBranch + "/street",
		"GET /companies/{taxId}": "/companies/" + dbtest.SerproBranch, "GET /file/{token}": "/file/abc", "GET /me/requests": "/me/requests",
		"GET /credit": "/credit", "GET /zip/{code}": "/zip/70836900", "GET /ccc": "/ccc?states=BR&taxId=" + dbtest.SerproBranch,
		"GET /ccc/certificate": "/ccc/certificate?taxId=" + dbtest.SerproBranch, "GET /suframa": "/suframa?taxId=" + dbtest.SerproBranch,
		"GET /suframa/certificate": "/suframa/certificate?taxId=" + dbtest.SerproBranch,
		"GET /office":              "/office?address.state.in=SP&limit=2", "GET /person": "/person?type.in=LEGAL",
		"GET /list": "/list?limit=2", "GET /list/{listId}": "/list/" + noList,
		"GET /list/{listId}/export": "/list/" + noList + "/export", "GET /list/{listId}/export/{exportId}": "/list/" + noList + "/export/" + noList,
		"GET /list/{listId}/export/{exportId}/{file}": "/list/" + noList + "/export/" + noList + "/offices.zip",
	}
	do := func(method, target string) (int, string, []byte) {
		req, _ := http.NewRequest(method, srv.URL+target, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header.Get("Content-Type"), body
	}
	for _, route := range rest.Routes {
		if !strings.HasPrefix(route, "GET ") {
			continue
		}
		target, ok := targets[route]
		if !ok {
			t.Errorf("no HEAD test for %s", route)
			continue
		}
		gs, gct, _ := do(http.MethodGet, target)
		hs, hct, body := do(http.MethodHead, target)
		if hs != gs || hct != gct || len(body) != 0 {
			t.Errorf("HEAD %s: %d %q %d bytes; GET: %d %q", target, hs, hct, len(body), gs, gct)
		}
	}
	// Unknown routes stay 404 for HEAD too.
	if st, _, _ := do(http.MethodHead, "/nowhere"); st != 404 {
		t.Errorf("HEAD /nowhere: %d", st)
	}
}

// TestOfficeSimplesHistory: simplesHistory adds the periods /simples gives
// with history=true, and implies simples.
func TestOfficeSimplesHistory(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	office := s.get(t, "/office/"+dbtest.AlphaTaxID+"?simplesHistory=true").object(t)
	simples := s.get(t, "/simples?history=true&taxId="+dbtest.AlphaTaxID).object(t)
	for _, regime := range []string{"simples", "simei"} {
		got := fmt.Sprint(path(t, office, "company", regime))
		if want := fmt.Sprint(simples[regime]); got != want || !strings.Contains(got, "history") {
			t.Errorf("%s: office %s, /simples %s", regime, got, want)
		}
	}
	if h := path(t, office, "company", "simples", "history").([]any); len(h) != 2 {
		t.Errorf("history: %v", h)
	}
	o := assertError(t, s.get(t, "/office/"+dbtest.AlphaTaxID+"?simplesHistory=yes"), 400, fault.MsgValidation)
	if fmt.Sprint(o["constraints"]) != "[simplesHistory must be a boolean: true, false, 1 or 0]" {
		t.Errorf("%v", o["constraints"])
	}
}

// TestOfficeGeocoding: coordinates from the configured geocoder, kept with
// the record (the geocoder is asked once per address), never the
// municipality seat; without a geocoder a 503 naming it.
func TestOfficeGeocoding(t *testing.T) {
	t.Parallel()
	d := fixtureDB(t)
	assertError(t, serverOver(t, d, 5*time.Second).get(t, "/office/"+dbtest.SerproBranch+"?geocoding=true"), 503, fault.MsgGeocoderNotConfigured)

	var queries atomic.Int64
	geocoder, err := imagery.NewGeocoder(newGeocoder(t, &queries).URL, time.Second, 100)
	if err != nil {
		t.Fatal(err)
	}
	s := routerWith(t, d, func(o *service.Options, _ *rest.Deps) { o.Geocoder = geocoder })
	for i := 0; i < 2; i++ {
		a := path(t, s.get(t, "/office/"+dbtest.SerproBranch+"?geocoding=true").object(t), "address").(map[string]any)
		if fmt.Sprint(a["latitude"], ",", a["longitude"]) != fmt.Sprint(serproPoint.Lat, ",", serproPoint.Lon) {
			t.Errorf("coordinates %v %v, want %v", a["latitude"], a["longitude"], serproPoint)
		}
	}
	// A fresh geocoder (empty memory cache): the overlay keeps the answer.
	geocoder2, _ := imagery.NewGeocoder(newGeocoder(t, &queries).URL, time.Second, 100)
	s = routerWith(t, d, func(o *service.Options, _ *rest.Deps) { o.Geocoder = geocoder2 })
	s.get(t, "/office/"+dbtest.SerproBranch+"?geocoding=true")
	if n := queries.Load(); n != 1 {
		t.Errorf("geocoder asked %d times, want once", n)
	}
	// Not found: no coordinates (not the seat), and "not found" is kept too.
	for i := 0; i < 2; i++ {
		a := path(t, s.get(t, "/office/"+dbtest.BigHead+"?geocoding=true").object(t), "address")
		if has(a, "latitude") || has(a, "longitude") {
			t.Errorf("an address the geocoder does not know has coordinates: %v", a)
		}
	}
	if n := queries.Load(); n != 2 {
		t.Errorf("geocoder asked %d times, want 2", n)
	}
	// Abroad: nothing to search.
	if a := path(t, s.get(t, "/office/"+dbtest.AbroadTaxID+"?geocoding=true").object(t), "address"); has(a, "latitude") || queries.Load() != 2 {
		t.Errorf("abroad: %v, %d queries", a, queries.Load())
	}
	// Without the option, no coordinates.
	if a := path(t, s.get(t, "/office/"+dbtest.SerproBranch).object(t), "address"); has(a, "latitude") {
		t.Errorf("coordinates without geocoding: %v", a)
	}
	// A geocoder that is down.
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	t.Cleanup(down.Close)
	broken, _ := imagery.NewGeocoder(down.URL, time.Second, 100)
	s = routerWith(t, d, func(o *service.Options, _ *rest.Deps) { o.Geocoder = broken })
	assertError(t, s.get(t, "/office/"+dbtest.AlphaTaxID+"?geocoding=true"), 503, fault.MsgGeocoderDown)
}

// TestOfficeLinks: links to the files asked for, absolute, signed for the
// caller, only those the caller may open; an unknown type is a 400 and a
// type this configuration cannot serve a 503.
func TestOfficeLinks(t *testing.T) {
	t.Parallel()
	d := fixtureDB(t)
	tiles := newTileServer(t)
	s, _, key := authServer(t, d, func(o *service.Options, deps *rest.Deps) {
		mapDeps(t, tiles, "", 5*time.Second)(o, deps)
		deps.PublicURL = "https://cnpj.example.com/"
	})
	target := "/office/" + dbtest.SerproBranch + "?links=OFFICE_MAP,RFB_CERTIFICATE&links=SIMPLES_CERTIFICATE"
	links := func(key string) map[string]string {
		r := s.as(t, key, target)
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		out := map[string]string{}
		var order []string
		for _, l := range path(t, r.object(t), "links").([]any) {
			m := l.(map[string]any)
			out[m["type"].(string)] = m["url"].(string)
			order = append(order, m["type"].(string))
		}
		out["order"] = strings.Join(order, ",")
		return out
	}
	all := links(key())
	if all["order"] != "RFB_CERTIFICATE,SIMPLES_CERTIFICATE,OFFICE_MAP" {
		t.Errorf("order %s", all["order"])
	}
	for _, typ := range []string{"RFB_CERTIFICATE", "SIMPLES_CERTIFICATE", "OFFICE_MAP"} {
		u, err := url.Parse(all[typ])
		if err != nil || u.Scheme != "https" || u.Host != "cnpj.example.com" || u.Query().Get("signature") == "" {
			t.Errorf("%s: %s", typ, all[typ])
			continue
		}
		// The signed link opens the file without a credential.
		r := s.as(t, "", u.RequestURI())
		if r.status != 200 || (r.header.Get("Content-Type") != "application/pdf" && r.header.Get("Content-Type") != "image/png") {
			t.Errorf("%s: opening %s: %d %s", typ, u.RequestURI(), r.status, r.body)
		}
	}
	// A key without read:map gets no map link; one without read:certificate
	// no certificate links.
	if got := links(key(auth.ReadOffice, auth.ReadCertificate))["order"]; got != "RFB_CERTIFICATE,SIMPLES_CERTIFICATE" {
		t.Errorf("without read:map: %s", got)
	}
	if got := links(key(auth.ReadOffice, auth.ReadMap))["order"]; got != "OFFICE_MAP" {
		t.Errorf("without read:certificate: %s", got)
	}
	// Asked with an empty list: an empty list.
	if r := s.as(t, key(), "/office/"+dbtest.SerproBranch+"?links="); string(r.body) == "" || fmt.Sprint(path(t, r.object(t), "links")) != "[]" {
		t.Errorf("links= : %s", r.body)
	}
	// Without the option: no links key.
	if has(s.as(t, key(), "/office/"+dbtest.SerproBranch).object(t), "links") {
		t.Errorf("links without the option")
	}
	o := assertError(t, s.as(t, key(), "/office/"+dbtest.SerproBranch+"?links=RFB_CERTIFICATE,LOGO"), 400, fault.MsgValidation)
	if fmt.Sprint(o["constraints"]) != "[links must contain only: RFB_CERTIFICATE, SIMPLES_CERTIFICATE, CCC_CERTIFICATE, SUFRAMA_CERTIFICATE, OFFICE_MAP, OFFICE_STREET]" {
		t.Errorf("%v", o["constraints"])
	}
	// No street provider here, and no online source: those links fail loudly.
	assertError(t, s.as(t, key(), "/office/"+dbtest.SerproBranch+"?links=OFFICE_STREET"), 503, fault.MsgStreetNotConfigured)
	assertError(t, s.as(t, key(), "/office/"+dbtest.SerproBranch+"?links=CCC_CERTIFICATE"), 503, fault.MsgOfflineCCC)

	// Without accounts: unsigned links, from the request's host.
	plain := newServer(t)
	r := plain.get(t, "/office/"+dbtest.SerproBranch+"?links=RFB_CERTIFICATE")
	if got := fmt.Sprint(path(t, r.object(t), "links")); got != "[map[type:RFB_CERTIFICATE url:http://example.com/rfb/certificate?taxId="+dbtest.SerproBranch+"]]" {
		t.Errorf("unsigned: %s", got)
	}
	assertError(t, plain.get(t, "/office/"+dbtest.SerproBranch+"?links=OFFICE_MAP"), 503, fault.MsgMapNotConfigured)
}

// TestOfficeShowsSimplesWhenAsked: the office lookup is one statement,
// which reads the company's Simples with the company (its row holds it),
// and the answer shows it only when asked (simples=true); without, the
// answer has no simples or simei, and neither has the registry record
// (/rfb), which never shows them. With it, the answer's Simples are
// /simples'.
func TestOfficeShowsSimplesWhenAsked(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	simples := s.get(t, "/simples?taxId="+dbtest.AlphaTaxID).object(t)
	for _, c := range []struct {
		target string
		reads  bool
	}{
		{"/office/" + dbtest.AlphaTaxID + "?simples=true", true},
		{"/office/" + dbtest.AlphaTaxID, false},
		{"/office/" + dbtest.AlphaTaxID + "?simples=false", false},
		{"/rfb?taxId=" + dbtest.AlphaTaxID, false},
	} {
		s.takeSQL()
		r := s.get(t, c.target)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", c.target, r.status, r.body)
		}
		if statements := s.takeSQL(); len(statements) != 1 || strings.Contains(statements[0], ".simples s ON") {
			t.Fatalf("%s: %d statements, want 1, of the companies' own columns: %v", c.target, len(statements), statements)
		}
		o := r.object(t)
		company, _ := o["company"].(map[string]any)
		if company == nil {
			company = o // /rfb: the registry's own shape
		}
		for _, regime := range []string{"simples", "simei"} {
			v, shown := company[regime]
			if shown != c.reads {
				t.Errorf("%s: %s shown: %v, want %v", c.target, regime, shown, c.reads)
			}
			if shown && fmt.Sprint(v) != fmt.Sprint(simples[regime]) {
				t.Errorf("%s: %s %v, /simples %v", c.target, regime, v, simples[regime])
			}
		}
	}
}
