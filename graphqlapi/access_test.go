package graphqlapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/graphqlapi"
	"github.com/cnpjgraph/cnpjgraph/imagery"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/cnpjgraph/cnpjgraph/upstream"
	"github.com/cnpjgraph/cnpjgraph/upstream/upstreamtest"
)

// accessEnv is the whole server (REST and GraphQL) with accounts, an online
// source (another instance over the same data, counting its calls) and
// image providers, on a fixed clock.
type accessEnv struct {
	t        *testing.T
	db       *sqlx.DB
	auth     *auth.Service
	h        http.Handler
	upstream *atomic.Int64 // requests the online source received
	plan     string
	credits  int // the plan's daily credits
	accounts int
}

const (
	planCredits = 1000
	planRate    = 1000
)

func newAccessEnv(t *testing.T) *accessEnv {
	t.Helper()
	ctx := context.Background()
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	e := &accessEnv{t: t, db: d, upstream: &atomic.Int64{}, plan: "matrix", credits: planCredits}

	// The online source: an instance without accounts over the same data.
	central := rest.NewRouter(rest.Deps{Service: service.New(db.NewStore(d, db.StoreOptions{}),
		service.Options{Now: func() time.Time { return now }})})
	// In front of it, the online-only portals (CCC, SUFRAMA) as the
	// commercial API answers them.
	portals := &upstreamtest.Portals{Next: central, Updated: now}
	source := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.upstream.Add(1)
		portals.ServeHTTP(w, r)
	}))
	t.Cleanup(source.Close)
	client, err := upstream.New(upstream.Config{URL: source.URL})
	if err != nil {
		t.Fatal(err)
	}
	demo := httptest.NewServer(imagery.Demo())
	t.Cleanup(demo.Close)
	maps, err := imagery.NewMaps(imagery.MapConfig{Templates: imagery.TileTemplates(imagery.DemoTileURL(demo.URL), nil)})
	if err != nil {
		t.Fatal(err)
	}
	street, err := imagery.NewStreet(imagery.StreetConfig{Template: imagery.DemoStreetURL(demo.URL)})
	if err != nil {
		t.Fatal(err)
	}
	seats, err := imagery.LoadMunicipalities(filepath.Join(dbtest.SharedDir(t), "data", "municipios", "municipios-coordenadas.csv"))
	if err != nil {
		t.Fatal(err)
	}

	e.auth, err = auth.New(ctx, auth.Config{DB: d, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.auth.Close() })
	// A geocoder that places every address at the same point.
	geo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"lat":"-15.78","lon":"-47.88"}]`))
	}))
	t.Cleanup(geo.Close)
	geocoder, err := imagery.NewGeocoder(geo.URL, time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{
		Now: func() time.Time { return now }, Source: client, Meter: e.auth.Meter(),
		Imagery:  &imagery.Provider{Maps: maps, Street: street, Locator: &imagery.Locator{Seats: seats}},
		Geocoder: geocoder, SignLink: e.auth.SignLink,
	})
	e.h = rest.NewRouter(rest.Deps{Service: svc, RequestTimeout: 10 * time.Second,
		Authenticate: e.auth.Middleware(auth.DoorPermission, rest.RenderError),
		Mount:        graphqlapi.Mount(graphqlapi.Options{Service: svc})})
	if err := auth.SetPlan(ctx, d, auth.Plan{Name: e.plan, CreditsPerDay: planCredits, RequestsPerMinute: planRate}); err != nil {
		t.Fatal(err)
	}
	return e
}

// caller is a fresh account with one key, so its rate and credits count
// one scenario only.
type caller struct {
	e   *accessEnv
	id  int64
	key string
}

func (e *accessEnv) caller(perms []string) caller {
	e.t.Helper()
	ctx := context.Background()
	e.accounts++
	a, err := auth.CreateAccount(ctx, e.db, "caller-"+strconv.Itoa(e.accounts), e.plan, nil, now)
	if err != nil {
		e.t.Fatal(err)
	}
	_, key, err := auth.AddKey(ctx, e.db, a.ID, "key", perms)
	if err != nil {
		e.t.Fatal(err)
	}
	return caller{e: e, id: a.ID, key: key}
}

// spent is what the caller has used: rate-limit units this minute and
// credits today.
func (c caller) spent() (units, credits int) {
	c.e.t.Helper()
	d, err := c.e.auth.Allow(context.Background(), c.id, planRate, 0)
	if err != nil {
		c.e.t.Fatal(err)
	}
	a, err := auth.FindAccount(context.Background(), c.e.db, strconv.FormatInt(c.id, 10), now)
	if err != nil {
		c.e.t.Fatal(err)
	}
	return planRate - d.Remaining, c.e.credits - int(a.Credits)
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
}

func (c caller) do(req *http.Request) answer {
	c.e.t.Helper()
	req.Header.Set("Authorization", c.key)
	rec := httptest.NewRecorder()
	c.e.h.ServeHTTP(rec, req)
	a := answer{status: rec.Code, header: rec.Header()}
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.UseNumber()
	if ct := rec.Header().Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		if err := dec.Decode(&a.body); err != nil {
			c.e.t.Fatalf("%s: %v", req.URL, err)
		}
	}
	return a
}

func (c caller) get(target string) answer {
	return c.do(httptest.NewRequest(http.MethodGet, target, nil))
}

func (c caller) graphql(query string) answer {
	body, _ := json.Marshal(map[string]string{"query": query})
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return c.do(req)
}

// access is what a scenario ended in, to compare REST with GraphQL.
type access struct {
	refused    string // the permission named by the refusal; "" when answered
	status     int    // REST's last status, GraphQL's extensions.status (200 when answered)
	units      int
	credits    int
	onlineHits int64
}

// TestAccessMatrix: every lookup kind, reached by its REST route, by a
// top-level GraphQL field and by a nested GraphQL field that reaches it,
// with a key holding its permission and one without: the refusal, the
// credits charged and the rate-limit units used are the same over REST
// (the requests the query stands for) and GraphQL. The table is the audit:
// each row says what it expects.
func TestAccessMatrix(t *testing.T) {
	e := newAccessEnv(t)
	office := "/office/" + dbtest.SerproBranch
	person := dbtest.SerproMembers[0].Person.ID()
	var memberPersons []string // the REST requests of the members' persons, one per member
	for _, m := range dbtest.SerproMembers {
		memberPersons = append(memberPersons, "/person/"+m.Person.ID())
	}
	// The REST requests of the person's membership companies, one each.
	var membershipCompanies []string
	for _, m := range e.caller(nil).get("/person/" + person).body["membership"].([]any) {
		membershipCompanies = append(membershipCompanies, fmt.Sprintf("/company/%v", m.(map[string]any)["company"].(map[string]any)["id"]))
	}
	prices := service.DefaultPrices
	everything := []string{auth.ReadGraphQL, auth.ReadOffice, auth.ReadCompany, auth.ReadPerson, auth.ReadRFB,
		auth.ReadSimples, auth.ReadCertificate, auth.ReadMap, auth.ReadStreet, auth.ReadCCC, auth.ReadSuframa,
		service.SearchOffice, service.SearchPerson}

	rows := []struct {
		name       string
		permission string   // the permission of the lookup kind reached
		lead       int      // how many of rest are the top-level lookup's, which must answer
		rest       []string // the REST requests it stands for: the lead's, then the kind's own
		query      string   // the GraphQL query ("" for routes GraphQL does not have)
		units      int      // units used with the permission
		credits    int      // credits charged with the permission
	}{
		{"office", auth.ReadOffice, 0, []string{office + "?simples=true"},
			`{ office(taxId: "` + dbtest.SerproBranch + `", simples: true) { taxId } }`, 1, 0},
		{"office online", auth.ReadOffice, 0, []string{office + "?simples=true&strategy=ONLINE"},
			`{ office(taxId: "` + dbtest.SerproBranch + `", simples: true, strategy: ONLINE) { taxId } }`, 1, 2 * prices.Online},
		{"company", auth.ReadCompany, 0, []string{"/company/" + dbtest.SerproRoot},
			`{ company(id: "` + dbtest.SerproRoot + `") { name offices { totalCount } members { role { id } } } }`, 1, 0},
		{"person", auth.ReadPerson, 0, []string{"/person/" + person},
			`{ person(id: "` + person + `") { name membership { totalCount } } }`, 1, 0},
		{"rfb", auth.ReadRFB, 0, []string{"/rfb?taxId=" + dbtest.SerproBranch},
			`{ rfb(taxId: "` + dbtest.SerproBranch + `") { taxId } }`, 1, 0},
		{"rfb online", auth.ReadRFB, 0, []string{"/rfb?strategy=ONLINE&taxId=" + dbtest.SerproBranch},
			`{ rfb(taxId: "` + dbtest.SerproBranch + `", strategy: ONLINE) { taxId } }`, 1, prices.Online},
		{"simples", auth.ReadSimples, 0, []string{"/simples?taxId=" + dbtest.SerproBranch},
			`{ simples(taxId: "` + dbtest.SerproBranch + `") { taxId } }`, 1, 0},
		{"simples online", auth.ReadSimples, 0, []string{"/simples?strategy=ONLINE&taxId=" + dbtest.SerproBranch},
			`{ simples(taxId: "` + dbtest.SerproBranch + `", strategy: ONLINE) { taxId } }`, 1, prices.Online},
		{"certificate", auth.ReadCertificate, 0, []string{"/rfb/certificate?taxId=" + dbtest.SerproBranch}, "", 1, prices.Certificate},
		{"simples certificate", auth.ReadCertificate, 0, []string{"/simples/certificate?taxId=" + dbtest.SerproBranch}, "", 1, prices.Certificate},
		{"map", auth.ReadMap, 0, []string{office + "/map?width=80&height=80"}, "", 1, prices.Map},
		{"street", auth.ReadStreet, 0, []string{office + "/street?width=80&height=80"}, "", 1, prices.Street},

		// The rest of a CNPJá client's surface (REST only: GraphQL has no
		// root field for them), and the office lookup's options.
		{"ccc", auth.ReadCCC, 0, []string{"/ccc?states=BR&strategy=ONLINE&taxId=" + dbtest.SerproBranch}, "", 1, prices.Online},
		{"suframa", auth.ReadSuframa, 0, []string{"/suframa?strategy=ONLINE&taxId=" + dbtest.BigHead}, "", 1, prices.Online},
		{"ccc certificate", auth.ReadCertificate, 0, []string{"/ccc/certificate?state=DF&taxId=" + dbtest.SerproBranch}, "", 1, prices.Certificate + prices.Online},
		{"suframa certificate", auth.ReadCertificate, 0, []string{"/suframa/certificate?taxId=" + dbtest.BigHead}, "", 1, prices.Certificate + prices.Online},
		{"zip", auth.ReadOffice, 0, []string{"/zip/70836900"}, "", 1, 0},
		{"office with suframa online", auth.ReadOffice, 0, []string{"/office/" + dbtest.BigHead + "?suframa=true&strategy=ONLINE"},
			`{ office(taxId: "` + dbtest.BigHead + `", suframa: true, strategy: ONLINE) { suframa { number status { id } incentives { tribute } } } }`, 1, 2 * prices.Online},
		{"office with geocoding online", auth.ReadOffice, 0, []string{office + "?geocoding=true&strategy=ONLINE"},
			`{ office(taxId: "` + dbtest.SerproBranch + `", geocoding: true, strategy: ONLINE) { address { latitude longitude } } }`, 1, 2 * prices.Online},
		{"office with links and history", auth.ReadOffice, 0, []string{office + "?simplesHistory=true&links=RFB_CERTIFICATE,OFFICE_MAP,OFFICE_STREET"},
			`{ office(taxId: "` + dbtest.SerproBranch + `", simplesHistory: true, links: ["RFB_CERTIFICATE", "OFFICE_MAP", "OFFICE_STREET"]) { links { type url } } }`, 1, 0},

		// A page of search results is one search, whatever its size.
		{"office search", service.SearchOffice, 0, []string{"/office?address.state.in=SP&limit=5"},
			`{ searchOffices(filter: {address: {state: {in: ["SP"]}}}, first: 5) { totalCount nodes { taxId company { members { role { id } } } } } }`,
			1, prices.Search},
		{"person search", service.SearchPerson, 0, []string{"/person?type.in=LEGAL,NATURAL"},
			`{ searchPersons(filter: {type: {in: ["LEGAL", "NATURAL"]}}) { totalCount nodes { name membership { totalCount } } } }`,
			1, prices.Search},
		{"company's offices from a search", auth.ReadCompany, 1, []string{"/office?names.in=serpro&limit=1", "/company/" + dbtest.SerproRoot},
			`{ searchOffices(filter: {names: {in: ["serpro"]}}, first: 1) { nodes { company { offices(first: 1) { totalCount } } } } }`,
			2, prices.Search},

		// Nested fields that reach another kind of lookup are that lookup.
		{"company's offices from an office", auth.ReadCompany, 1, []string{office, "/company/" + dbtest.SerproRoot},
			`{ office(taxId: "` + dbtest.SerproBranch + `") { company { offices(first: 1) { totalCount } } } }`, 2, 0},
		{"company's members from a membership", auth.ReadCompany, 1, append([]string{"/person/" + person}, membershipCompanies...),
			`{ person(id: "` + person + `") { membership { nodes { company { members { role { id } } } } } } }`,
			1 + len(membershipCompanies), 0},
		{"members' memberships from an office", auth.ReadPerson, 1, append([]string{office}, memberPersons...),
			`{ office(taxId: "` + dbtest.SerproBranch + `") { company { members { person { membership(first: 1) { totalCount } } } } } }`,
			1 + len(memberPersons), 0},
	}
	leadCredits := map[string]int{"company's offices from a search": prices.Search}
	for _, row := range rows {
		for _, with := range []bool{true, false} {
			perms := everything
			if !with {
				perms = slices.DeleteFunc(slices.Clone(everything), func(p string) bool { return p == row.permission })
			}
			name := row.name + map[bool]string{true: ", with ", false: ", without "}[with] + row.permission
			t.Run(name, func(t *testing.T) {
				viaREST := e.restAccess(t, e.caller(perms), row.rest, row.lead)
				wantUnits, wantCredits := row.units, row.credits
				if !with {
					// The refused lookup costs nothing; a lead that answers
					// costs what it costs.
					wantCredits = leadCredits[row.name]
				}
				if viaREST.units != wantUnits || viaREST.credits != wantCredits {
					t.Errorf("REST used %d units and %d credits, want %d and %d", viaREST.units, viaREST.credits, wantUnits, wantCredits)
				}
				if with && (viaREST.refused != "" || viaREST.status != 200) {
					t.Errorf("REST with the permission: %+v", viaREST)
				}
				if !with && (viaREST.refused != row.permission || viaREST.status != 403) {
					t.Errorf("REST without the permission: %+v", viaREST)
				}
				if row.query == "" {
					return
				}
				viaGraphQL := e.graphqlAccess(t, e.caller(perms), row.query)
				if viaGraphQL != viaREST {
					t.Errorf("GraphQL %+v, REST %+v", viaGraphQL, viaREST)
				}
			})
		}
	}
}

// restAccess sends the requests in order and sums what they used; the
// first lead ones, of another kind, must answer.
func (e *accessEnv) restAccess(t *testing.T, c caller, targets []string, lead int) access {
	t.Helper()
	hits := e.upstream.Load()
	var out access
	for i, target := range targets {
		a := c.get(target)
		out.status = a.status
		if a.status == 403 {
			if p, _ := a.body["permission"].(string); p != "" {
				out.refused = p
			}
		} else if a.status != 200 {
			t.Fatalf("%s: %d %v", target, a.status, a.body)
		}
		if i < lead && a.status != 200 {
			t.Fatalf("%s: %d, but only the row's own lookups may be refused", target, a.status)
		}
	}
	out.units, out.credits = c.spent()
	out.onlineHits = e.upstream.Load() - hits
	return out
}

// graphqlAccess sends the query: its errors must all be the same refusal.
func (e *accessEnv) graphqlAccess(t *testing.T, c caller, query string) access {
	t.Helper()
	hits := e.upstream.Load()
	a := c.graphql(query)
	out := access{status: 200}
	errs, _ := a.body["errors"].([]any)
	for _, x := range errs {
		ext, _ := x.(map[string]any)["extensions"].(map[string]any)
		if ext["code"] != "FORBIDDEN" {
			t.Fatalf("unexpected error: %v", x)
		}
		out.refused, _ = ext["permission"].(string)
		out.status, _ = strconv.Atoi(fmt.Sprint(ext["status"]))
	}
	if len(errs) == 0 && a.status != 200 {
		t.Fatalf("status %d: %v", a.status, a.body)
	}
	out.units, out.credits = c.spent()
	out.onlineHits = e.upstream.Load() - hits
	return out
}

// TestNoCreditsNoOnlineFetch: an account without credits asking for an
// online answer is refused before the source is called, over REST and
// GraphQL alike, and nothing is written to the overlay (the next cached
// answer is the snapshot's, not a record fetched for free).
func TestNoCreditsNoOnlineFetch(t *testing.T) {
	e := newAccessEnv(t)
	ctx := context.Background()
	if err := auth.SetPlan(ctx, e.db, auth.Plan{Name: "broke", CreditsPerDay: 0, RequestsPerMinute: planRate}); err != nil {
		t.Fatal(err)
	}
	e.plan, e.credits = "broke", 0
	overlay := func() int {
		var n int
		if err := e.db.Get(&n, `SELECT count(*) FROM overlay_records`); err != nil {
			t.Fatal(err)
		}
		return n
	}
	c := e.caller(nil)
	for _, try := range []func() answer{
		func() answer { return c.get("/office/" + dbtest.SerproBranch + "?strategy=ONLINE") },
		func() answer { return c.get("/rfb?strategy=ONLINE&taxId=" + dbtest.SerproBranch) },
		func() answer { return c.get("/simples?strategy=ONLINE&taxId=" + dbtest.SerproBranch) },
		func() answer {
			return c.graphql(`{ office(taxId: "` + dbtest.SerproBranch + `", strategy: ONLINE) { taxId } }`)
		},
		func() answer {
			return c.graphql(`{ offices(taxIds: ["` + dbtest.SerproBranch + `", "` + dbtest.SerproHead + `"], strategy: ONLINE) { taxId } }`)
		},
	} {
		a := try()
		if a.status != 429 || !strings.Contains(fmt.Sprint(a.body), "not enough credits") {
			t.Errorf("status %d %v, want 429 not enough credits", a.status, a.body)
		}
	}
	if n := e.upstream.Load(); n != 0 {
		t.Errorf("the online source was called %d times", n)
	}
	if n := overlay(); n != 0 {
		t.Errorf("%d overlay records written", n)
	}
	// Then a cached answer is the snapshot's, free.
	a := c.get("/office/" + dbtest.SerproBranch + "?strategy=CACHE")
	if a.status != 200 || a.body["updated"] != "2025-12-07T00:00:00.000Z" {
		t.Errorf("cached answer: %d %v", a.status, a.body["updated"])
	}
	if _, credits := c.spent(); credits != 0 {
		t.Errorf("charged %d", credits)
	}
}
