package exporter_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/xuri/excelize/v2"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/exporter"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

type env struct {
	t   *testing.T
	d   *sqlx.DB
	svc *service.Service
	h   http.Handler
	a   *auth.Service
}

func newEnv(t *testing.T) *env {
	ctx := context.Background()
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	a, err := auth.New(ctx, auth.Config{DB: d, KeyCacheTTL: 0, SigningKey: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{
		Meter: a.Meter(), Owners: a, SignLink: a.SignLink, // the real clock: signed links expire by it
		ExportPageSize: 2, // a query's pages: several
	})
	h := rest.NewRouter(rest.Deps{Service: svc, Authenticate: a.Middleware(auth.DoorPermission, rest.RenderError)})
	return &env{t: t, d: d, svc: svc, h: h, a: a}
}

// account makes an account on plan with a key of perms (nil: all).
func (e *env) account(name, plan string, perms []string) (int64, string) {
	e.t.Helper()
	ctx := context.Background()
	acct, err := auth.CreateAccount(ctx, e.d, name, plan, nil, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	_, key, err := auth.AddKey(ctx, e.d, acct.ID, "k", perms)
	if err != nil {
		e.t.Fatal(err)
	}
	return acct.ID, key
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (e *env) do(method, target, key, body string) answer {
	e.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	if key != "" {
		req.Header.Set("Authorization", key)
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	return answer{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

func (e *env) json(method, target, key, body string, status int, v any) {
	e.t.Helper()
	a := e.do(method, target, key, body)
	if a.status != status {
		e.t.Fatalf("%s %s: %d, want %d: %s", method, target, a.status, status, a.body)
	}
	if v != nil {
		if err := json.Unmarshal(a.body, v); err != nil {
			e.t.Fatalf("%s %s: %v: %s", method, target, err, a.body)
		}
	}
}

type list struct {
	ID          string              `json:"id"`
	Title       string              `json:"title"`
	Description *string             `json:"description"`
	Size        int                 `json:"size"`
	Items       []string            `json:"items"`
	Query       map[string][]string `json:"query"`
	Limit       *int                `json:"limit"`
}

type page[T any] struct {
	Next    *string `json:"next"`
	Limit   int     `json:"limit"`
	Count   int     `json:"count"`
	Records []T     `json:"records"`
}

type export struct {
	ID           string  `json:"id"`
	Status       string  `json:"status"`
	StatusReason *string `json:"statusReason"`
	Progress     float64 `json:"progress"`
	Options      struct {
		Simples bool `json:"simples"`
	} `json:"options"`
	Links []struct {
		Type string `json:"type"`
		URL  string `json:"url"`
	} `json:"links"`
}

type problem struct {
	Code        int      `json:"code"`
	Message     string   `json:"message"`
	Constraints []string `json:"constraints"`
	Permission  string   `json:"permission"`
}

// TestLists walks the list service as the official client's user does:
// lists made, read, searched page by page, changed and deleted, each
// account seeing only its own, each route needing its permission.
func TestLists(t *testing.T) {
	e := newEnv(t)
	acme, key := e.account("acme", "dev", nil)
	_, reader, err := auth.AddKey(context.Background(), e.d, acme, "reader", []string{auth.ReadList})
	if err != nil {
		t.Fatal(err)
	}
	_, other := e.account("other", "dev", nil)

	var l list
	e.json("POST", "/list", key, `{"title":" Fornecedores ","description":"Fornecedores de Manaus",
		"items":["`+dbtest.SerproBranch+`","`+dbtest.AlphaTaxID+`","`+dbtest.SerproBranch+`"]}`, 201, &l)
	if l.Title != "Fornecedores" || l.Size != 2 || !slices.Equal(l.Items, []string{dbtest.SerproBranch, dbtest.AlphaTaxID}) ||
		l.Description == nil || *l.Description != "Fornecedores de Manaus" || l.Query != nil || l.Limit != nil {
		t.Fatalf("created %+v", l)
	}
	var got list
	e.json("GET", "/list/"+l.ID, key, "", 200, &got)
	if got.ID != l.ID || !slices.Equal(got.Items, l.Items) {
		t.Errorf("read %+v, want %+v", got, l)
	}

	// Another account's list does not exist for it; a key without the
	// permission is refused.
	var p problem
	e.json("GET", "/list/"+l.ID, other, "", 404, &p)
	if p.Message != "list not found" {
		t.Errorf("other account: %+v", p)
	}
	e.json("POST", "/list", reader, `{"title":"x"}`, 403, &p)
	if p.Permission != auth.WriteList {
		t.Errorf("reader creating: %+v", p)
	}
	e.json("GET", "/list/"+l.ID, reader, "", 200, nil)

	for _, c := range []struct {
		body string
		want []string
	}{
		{`{"title":"","items":["123"],"limit":5}`, []string{
			"title must be 1 to 50 characters, not only spaces",
			`items must be CNPJs of 14 characters without punctuation: "123" is not`,
			"limit must be sent only with query"}},
		{`{"title":"q","query":{"address.state.in":["XX"],"color.in":["blue"]}}`, []string{
			"query: color.in is not a parameter of this search", "limit is required with query"}},
		{`{"title":"q","items":["` + dbtest.SerproBranch + `"],"query":{"head.eq":true},"limit":10}`, []string{
			"items and query are mutually exclusive"}},
		{`{"title":"q","tags":[]}`, []string{`the request body must be a JSON object of the documented fields: unknown field "tags"`}},
		{`{"title":5}`, []string{"title must be a JSON string"}},
		{`{"title":"q","items":[123]}`, []string{"items must be a list of JSON strings"}},
		{`["q"]`, []string{"the request body must be a JSON object"}},
		{`{"title":"q"} {"title":"r"}`, []string{"the request body must be one JSON object, with nothing after it"}},
	} {
		var p problem
		e.json("POST", "/list", key, c.body, 400, &p)
		for _, w := range c.want {
			if !slices.Contains(p.Constraints, w) {
				t.Errorf("%s: constraints %q lack %q", c.body, p.Constraints, w)
			}
		}
	}

	// The list routes take up to rest.ListMaxBodyBytes (the other routes
	// MAX_BODY_BYTES): a million tax ids fit, more does not.
	big := `{"title":"big","description":"` + strings.Repeat("x", rest.ListMaxBodyBytes) + `"}`
	e.json("POST", "/list", key, big, 413, &p)
	mid := `{"title":"mid","description":"` + strings.Repeat("x", 2<<20) + `"}`
	e.json("POST", "/list", key, mid, 400, &p) // read whole: the description is too long
	if !slices.Equal(p.Constraints, []string{"description must be 1 to 2000 characters, not only spaces"}) {
		t.Errorf("a 2 MiB body: %+v", p)
	}

	// Three more lists; pages of two, in creation order, by tokens.
	for _, title := range []string{"Clientes do Sul", "Concorrentes", "Clientes antigos"} {
		e.json("POST", "/list", key, `{"title":"`+title+`"}`, 201, nil)
	}
	var seen []string
	var pg page[list]
	e.json("GET", "/list?limit=2", key, "", 200, &pg)
	for {
		if pg.Count != 4 || pg.Limit != 2 {
			t.Fatalf("page %+v", pg)
		}
		for _, r := range pg.Records {
			if r.Items != nil {
				t.Errorf("a page's list has items: %+v", r)
			}
			seen = append(seen, r.Title)
		}
		if pg.Next == nil {
			break
		}
		if len(*pg.Next) != 32 {
			t.Fatalf("next %q", *pg.Next)
		}
		e.json("GET", "/list?token="+*pg.Next, key, "", 200, &pg)
	}
	if want := []string{"Fornecedores", "Clientes do Sul", "Concorrentes", "Clientes antigos"}; !slices.Equal(seen, want) {
		t.Errorf("pages gave %q, want %q", seen, want)
	}
	e.json("GET", "/list?search=client", key, "", 200, &pg)
	if pg.Count != 2 || pg.Records[0].Title != "Clientes do Sul" || pg.Records[1].Title != "Clientes antigos" {
		t.Errorf("search=client: %+v", pg)
	}
	e.json("GET", "/list?search=manaus", key, "", 200, &pg)
	if pg.Count != 1 || pg.Records[0].ID != l.ID {
		t.Errorf("search=manaus (the description): %+v", pg)
	}
	e.json("GET", "/list", other, "", 200, &pg)
	if pg.Count != 0 || pg.Records == nil {
		t.Errorf("another account's lists: %+v", pg)
	}
	e.json("GET", "/list?limit=1", key, "", 200, &pg)
	e.json("GET", "/list?limit=1&token="+*pg.Next, key, "", 400, &p)
	e.json("GET", "/list?token=0123456789abcdef0123456789abcdef", key, "", 400, &p)
	if !strings.Contains(p.Constraints[0], "unknown or expired") {
		t.Errorf("forged token: %+v", p)
	}
	e.json("GET", "/list?token="+*pg.Next, other, "", 400, nil) // another account's token
	e.json("GET", "/list?color=1", key, "", 400, nil)

	e.json("PATCH", "/list/"+l.ID, key, `{"title":"Fornecedores AM","items":["`+dbtest.AlphaTaxID+`"]}`, 200, &got)
	if got.Title != "Fornecedores AM" || got.Size != 1 || !slices.Equal(got.Items, []string{dbtest.AlphaTaxID}) ||
		got.Description == nil || *got.Description != "Fornecedores de Manaus" {
		t.Errorf("updated %+v", got)
	}
	e.json("PATCH", "/list/"+l.ID, other, `{"title":"mine"}`, 404, nil)
	e.json("DELETE", "/list/"+l.ID, key, "", 200, &got)
	if got.ID != l.ID {
		t.Errorf("deleted %+v", got)
	}
	e.json("GET", "/list/"+l.ID, key, "", 404, nil)
	e.json("GET", "/list/not-an-id", key, "", 400, nil)
}

// TestExport runs an export as the exporter does in serve: the files hold
// exactly the offices of the list as the office lookup gives them, opened
// by the signed links without a credential; an office no longer in the
// registry is left out.
func TestExport(t *testing.T) {
	e := newEnv(t)
	_, key := e.account("acme", "dev", nil)
	ids := []string{dbtest.AlphaTaxID, dbtest.SerproHead, dbtest.SerproBranch} // SerproHead: not in the registry
	var l list
	e.json("POST", "/list", key, `{"title":"t","items":["`+strings.Join(ids, `","`)+`"]}`, 201, &l)

	var created struct{ ID string }
	e.json("POST", "/list/"+l.ID+"/export", key, `{"options":{"simples":true}}`, 201, &created)
	var x export
	e.json("GET", "/list/"+l.ID+"/export/"+created.ID, key, "", 200, &x)
	if x.Status != "PENDING" || len(x.Links) != 0 || !x.Options.Simples {
		t.Fatalf("queued export %+v", x)
	}
	if !exporter.RunOne(context.Background(), e.svc, exporter.Options{}) {
		t.Fatal("RunOne found no export")
	}
	if exporter.RunOne(context.Background(), e.svc, exporter.Options{}) {
		t.Fatal("RunOne ran a second export")
	}
	// The official client reads an export with POST.
	e.json("POST", "/list/"+l.ID+"/export/"+created.ID, key, "", 200, &x)
	if x.Status != "COMPLETED" || x.Progress != 1 || x.StatusReason != nil || len(x.Links) != 2 {
		t.Fatalf("completed export %+v", x)
	}
	files := map[string][]byte{}
	for _, link := range x.Links {
		target := strings.TrimPrefix(link.URL, "http://example.com")
		a := e.do("GET", target, "", "")
		if a.status != 200 || !strings.Contains(target, "signature=") {
			t.Fatalf("%s: %d %s", target, a.status, a.body)
		}
		files[link.Type] = a.body
	}

	zr, err := zip.NewReader(bytes.NewReader(files["JSON_ZIP"]), int64(len(files["JSON_ZIP"])))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(rc)
		_ = rc.Close()
		want := e.do("GET", "/office/"+strings.TrimSuffix(f.Name, ".json")+"?simples=true", key, "")
		if !bytes.Equal(body, want.body) {
			t.Errorf("%s:\n%s\nwant the lookup's\n%s", f.Name, body, want.body)
		}
	}
	if want := []string{dbtest.AlphaTaxID + ".json", dbtest.SerproBranch + ".json"}; !slices.Equal(names, want) {
		t.Errorf("zip holds %q, want %q", names, want)
	}

	book, err := excelize.OpenReader(bytes.NewReader(files["EXCEL"]))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := book.GetRows("offices")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0][0] != "taxId" || rows[1][0] != dbtest.AlphaTaxID || rows[2][0] != dbtest.SerproBranch {
		t.Errorf("offices sheet %q", rows)
	}

	// A link opens the file it names and nothing else; another
	// account cannot read the export at all.
	zipLink := strings.TrimPrefix(x.Links[1].URL, "http://example.com")
	if a := e.do("GET", strings.Replace(zipLink, "offices.zip", "offices.xlsx", 1), "", ""); a.status != 401 {
		t.Errorf("a zip link edited to the workbook: %d", a.status)
	}
	if a := e.do("GET", strings.Replace(zipLink, "/offices.zip", "", 1), "", ""); a.status != 401 {
		t.Errorf("a zip link edited to the export: %d %s", a.status, a.body)
	}
	_, other := e.account("other", "dev", nil)
	e.json("GET", "/list/"+l.ID+"/export/"+created.ID, other, "", 404, nil)
	e.json("GET", strings.Split(zipLink, "?")[0], other, "", 404, nil)

	// Past LIST_EXPORT_RETENTION_DAYS the files go; the export stays. A
	// second export keeps its files (until the list is deleted, below).
	e.json("POST", "/list/"+l.ID+"/export", key, `{}`, 201, nil)
	exporter.RunOne(context.Background(), e.svc, exporter.Options{})
	exporter.DropOldFiles(context.Background(), e.svc, 24*time.Hour, nil)
	if a := e.do("GET", zipLink, "", ""); a.status != 200 {
		t.Errorf("a file within its retention was dropped: %d", a.status)
	}
	if _, err := e.d.Exec(`UPDATE list_exports SET updated = updated - interval '2 days' WHERE id = $1`, created.ID); err != nil {
		t.Fatal(err)
	}
	exporter.DropOldFiles(context.Background(), e.svc, 24*time.Hour, nil)
	e.json("GET", "/list/"+l.ID+"/export/"+created.ID, key, "", 200, &x)
	if x.Status != "COMPLETED" || len(x.Links) != 0 {
		t.Errorf("an export whose files were dropped: %+v", x)
	}
	if a := e.do("GET", zipLink, "", ""); a.status != 404 {
		t.Errorf("a dropped file: %d", a.status)
	}

	var pg page[export]
	e.json("GET", "/list/"+l.ID+"/export", key, "", 200, &pg)
	if pg.Count != 2 || pg.Records[0].ID != created.ID || len(pg.Records[1].Links) != 2 || pg.Next != nil {
		t.Errorf("exports page %+v", pg)
	}
	// Deleting the list deletes its exports and files.
	e.json("DELETE", "/list/"+l.ID, key, "", 200, nil)
	if a := e.do("GET", "/list/"+l.ID+"/export/"+created.ID, key, ""); a.status != 404 {
		t.Errorf("a deleted list's export: %d", a.status)
	}
	var parts int
	if err := e.d.Get(&parts, `SELECT count(*) FROM list_export_files`); err != nil || parts != 0 {
		t.Errorf("%d file parts left (%v)", parts, err)
	}
}

// TestExportFromQuery resolves a list's search at its first export, as its
// account, across pages (of 2 here), up to the list's limit, priced as the
// search's pages, and keeps the tax ids.
func TestExportFromQuery(t *testing.T) {
	e := newEnv(t)
	acct, key := e.account("acme", "free", nil)
	var want page[struct {
		TaxID string `json:"taxId"`
	}]
	e.json("GET", "/office?address.state.in=SP&limit=5", key, "", 200, &want)
	if len(want.Records) != 5 || want.Count < 6 {
		t.Fatalf("the fixture has %d offices in SP", want.Count)
	}
	var l list
	e.json("POST", "/list", key, `{"title":"SP","query":{"address.state.in":"SP"},"limit":5}`, 201, &l)
	if l.Size != 0 || l.Limit == nil || *l.Limit != 5 || !slices.Equal(l.Query["address.state.in"], []string{"SP"}) {
		t.Fatalf("created %+v", l)
	}
	before := e.credits(acct)
	e.json("POST", "/list/"+l.ID+"/export", key, `{}`, 201, nil)
	exporter.RunOne(context.Background(), e.svc, exporter.Options{})
	e.json("GET", "/list/"+l.ID, key, "", 200, &l)
	var wantIDs []string
	for _, r := range want.Records {
		wantIDs = append(wantIDs, r.TaxID)
	}
	if !slices.Equal(l.Items, wantIDs) || l.Size != 5 {
		t.Errorf("resolved items %q, want %q", l.Items, wantIDs)
	}
	if spent := before - e.credits(acct); spent != 3 {
		t.Errorf("the query's pages cost %d credits, want 3 (COST_SEARCH for each of 2 + 2 + 1)", spent)
	}
	// The usage ledger has the export's row: one, with what it cost.
	if err := e.a.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	usage, err := auth.AccountUsage(context.Background(), e.d, acct, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(usage, func(u auth.Usage) bool { return u.Route == service.ExportRoute })
	if i < 0 || usage[i].Requests != 1 || usage[i].Credits != 3 || usage[i].Errors != 0 {
		t.Errorf("usage %+v, want a row of %s: 1 request, 3 credits", usage, service.ExportRoute)
	}
}

func (e *env) credits(account int64) int64 {
	var n int64
	if err := e.d.Get(&n, `SELECT credits FROM accounts WHERE id = $1`, account); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestExportFailures: an export of a suspended account fails with the
// reason its owner reads; one left by a stopped instance is taken over.
func TestExportFailures(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acct, key := e.account("acme", "dev", nil)
	var l list
	e.json("POST", "/list", key, `{"title":"t","items":["`+dbtest.SerproBranch+`"]}`, 201, &l)
	var first, second struct{ ID string }
	e.json("POST", "/list/"+l.ID+"/export", key, `{}`, 201, &first)

	// Claimed by an instance that stopped: its heartbeat goes stale.
	if _, ok, err := e.svc.ClaimExport(ctx); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if exporter.RunOne(ctx, e.svc, exporter.Options{}) {
		t.Fatal("an export with a fresh heartbeat was taken over")
	}
	if _, err := e.d.Exec(`UPDATE list_exports SET heartbeat = now() - interval '1 hour'`); err != nil {
		t.Fatal(err)
	}
	if !exporter.RunOne(ctx, e.svc, exporter.Options{}) {
		t.Fatal("a stale export was not taken over")
	}
	var x export
	e.json("GET", "/list/"+l.ID+"/export/"+first.ID, key, "", 200, &x)
	if x.Status != "COMPLETED" {
		t.Errorf("taken over: %+v", x)
	}

	e.json("POST", "/list/"+l.ID+"/export", key, `{}`, 201, &second)
	if err := auth.Suspend(ctx, e.d, acct, "payment overdue"); err != nil {
		t.Fatal(err)
	}
	exporter.RunOne(ctx, e.svc, exporter.Options{})
	if err := auth.Resume(ctx, e.d, acct); err != nil {
		t.Fatal(err)
	}
	e.json("GET", "/list/"+l.ID+"/export/"+second.ID, key, "", 200, &x)
	if x.Status != "FAILED" || x.StatusReason == nil || *x.StatusReason != "account has been suspended" || len(x.Links) != 0 {
		t.Errorf("suspended account's export: %+v", x)
	}

	var p problem
	e.json("POST", "/list/"+l.ID+"/export", key, `{"options":{"strategy":"SOMETIMES","maxAge":0,"color":1}}`, 400, &p)
	e.json("POST", "/list/"+l.ID+"/export", key, `{"options":{"strategy":"SOMETIMES","maxAge":0}}`, 400, &p)
	if !slices.Contains(p.Constraints, "options.strategy must be one of: CACHE, CACHE_IF_FRESH, CACHE_IF_ERROR, ONLINE") ||
		!slices.Contains(p.Constraints, "options.maxAge must not be less than 1") {
		t.Errorf("bad options: %+v", p)
	}
	// At most db.MaxQueuedExports queued or running per account.
	for i := 0; i < db.MaxQueuedExports; i++ {
		e.json("POST", "/list/"+l.ID+"/export", key, `{}`, 201, nil)
	}
	e.json("POST", "/list/"+l.ID+"/export", key, `{}`, 400, &p)
	if !slices.Equal(p.Constraints, []string{"an account may have at most 10 exports queued or running: wait for one to end"}) {
		t.Errorf("an 11th export: %+v", p)
	}
	for body, want := range map[string]string{
		`{"options":5}`:                        "options must be a JSON object of the office lookup's options",
		`{"options":{"simples":"yes"}}`:        "options.simples must be a boolean",
		`{"options":{"registrations":"SP"}}`:   "options.registrations must be a list of JSON strings",
		`{"options":{"registrations":[]}}`:     "options.registrations must not be empty",
		`{"options":{"color":1}}`:              `options must be a JSON object of the office lookup's options: unknown field "color"`,
		`{"options":{"registrations":["XX"]}}`: "options.registrations must contain only: " + strings.Join(service.RegistrationValues, ", "),
	} {
		e.json("POST", "/list/"+l.ID+"/export", key, body, 400, &p)
		if !slices.Equal(p.Constraints, []string{want}) {
			t.Errorf("%s: %q, want %q", body, p.Constraints, want)
		}
	}
	// Options this server cannot serve are refused at once.
	e.json("POST", "/list/"+l.ID+"/export", key, `{"options":{"geocoding":true}}`, 503, nil)
}
