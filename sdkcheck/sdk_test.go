// Package sdkcheck runs the official CNPJá client (@cnpja/sdk 1.8.1, pinned
// in package-lock.json; `make test` installs it with scripts/sdk-check.sh)
// against cnpjgraph servers: its credit.read, zip.read, ccc.read,
// ccc.certificate, suframa.read and suframa.certificate must reach a real
// route and get data, or, without an online source, the documented 503; its
// searches and its list service (every method) must work as its users run
// them.
package sdkcheck_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/exporter"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/cnpjgraph/cnpjgraph/upstream"
	"github.com/cnpjgraph/cnpjgraph/upstream/upstreamtest"
)

var now = dbtest.Reference().Add(10 * 24 * time.Hour)

// result is what check.cjs reports for one SDK method.
type result struct {
	Data  map[string]any `json:"data"`
	PDF   string         `json:"pdf"`
	Bytes int            `json:"bytes"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func TestOfficialClient(t *testing.T) {
	// make test installs both; a run without them fails rather than pass
	// without checking anything.
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed (make test installs it)")
	}
	if _, err := os.Stat("node_modules/@cnpja/sdk/package.json"); err != nil {
		t.Fatal("@cnpja/sdk is not installed: run scripts/sdk-check.sh (make test does)")
	}
	ctx := context.Background()
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	a, err := auth.New(ctx, auth.Config{DB: d, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	acct, err := auth.CreateAccount(ctx, d, "sdk", "free", nil, now)
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := auth.AddKey(ctx, d, acct.ID, "sdk", nil)
	if err != nil {
		t.Fatal(err)
	}
	server := func(source service.Source) string {
		svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{
			Now: func() time.Time { return now }, Meter: a.Meter(), Source: source, SignLink: a.SignLink, Owners: a,
		})
		exports, stop := context.WithCancel(ctx)
		t.Cleanup(stop)
		go exporter.Run(exports, svc, exporter.Options{Poll: 50 * time.Millisecond})
		srv := httptest.NewServer(rest.NewRouter(rest.Deps{Service: svc, RequestTimeout: 10 * time.Second,
			Authenticate: a.Middleware(auth.DoorPermission, rest.RenderError)}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	// The online source: the commercial API's portals in front of an
	// instance over the same data.
	central := rest.NewRouter(rest.Deps{Service: service.New(db.NewStore(d, db.StoreOptions{}), service.Options{Now: func() time.Time { return now }})})
	portals := httptest.NewServer(&upstreamtest.Portals{Next: central, Updated: now})
	t.Cleanup(portals.Close)
	client, err := upstream.New(upstream.Config{URL: portals.URL})
	if err != nil {
		t.Fatal(err)
	}

	run := func(base string) map[string]result {
		t.Helper()
		cmd := exec.CommandContext(ctx, "node", "check.cjs", base, key, upstreamtest.CCCTaxID, upstreamtest.SuframaTaxID, "70836900",
			dbtest.SerproBranch+","+dbtest.AlphaTaxID)
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				stderr = ee.Stderr
			}
			t.Fatalf("node check.cjs: %v\n%s", err, stderr)
		}
		var res map[string]result
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return res
	}

	// With an online source: data.
	res := run(server(client))
	ok := func(name string, check bool) {
		t.Helper()
		if r := res[name]; !check || r.Error != nil {
			t.Errorf("%s: %+v", name, r)
		}
	}
	ok("credit.read", res["credit.read"].Data["transient"] != nil && res["credit.read"].Data["perpetual"] == float64(0))
	ok("zip.read", res["zip.read"].Data["code"] == "70836900" && res["zip.read"].Data["municipality"] == float64(5300108) &&
		res["zip.read"].Data["street"] == "AVENIDA L2 SGAN")
	ok("ccc.read", res["ccc.read"].Data["originState"] == "DF" && len(res["ccc.read"].Data["registrations"].([]any)) == 2)
	ok("ccc.certificate", res["ccc.certificate"].PDF == "%PDF-")
	ok("suframa.read", res["suframa.read"].Data["number"] == upstreamtest.SuframaNumber)
	ok("suframa.certificate", res["suframa.certificate"].PDF == "%PDF-")
	// The searches: every match once, in key order, over as many pages as
	// the page size makes.
	for name, q := range map[string]struct {
		sql   string
		limit int
	}{
		"office.search": {`SELECT tax_id FROM cnpj.offices WHERE state = 'SP' ORDER BY tax_id`, 7},
		"person.search": {`SELECT id FROM cnpj.persons WHERE type = 'NATURAL' ORDER BY id`, 10},
	} {
		var want []string
		if err := d.Select(&want, q.sql); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range res[name].Data["keys"].([]any) {
			got = append(got, k.(string))
		}
		pages := (len(want) + q.limit - 1) / q.limit
		ok(name, len(want) > q.limit && slices.Equal(got, want) && res[name].Data["pages"] == float64(pages))
	}

	// The list service: every method reaches its route and gets data.
	list := res["list.create"].Data
	ok("list.create", list["title"] == "Fornecedores" && list["size"] == float64(2) && len(list["id"].(string)) == 36)
	ok("list.read", res["list.read"].Data["id"] == list["id"] && len(res["list.read"].Data["items"].([]any)) == 2)
	ok("list.update", res["list.update"].Data["description"] == "Unidade de Manaus")
	// Both made at the fixed clock's instant: in id order, either way round.
	titles := res["list.search"].Data["keys"].([]any)
	ok("list.search", res["list.search"].Data["pages"] == float64(2) && len(titles) == 2 &&
		slices.Contains(titles, any("Fornecedores")) && slices.Contains(titles, any("Sócios")))
	x := res["list.readExport"].Data
	files, _ := x["files"].(map[string]any)
	ok("list.readExport", x["status"] == "COMPLETED" && len(files) == 2)
	for typ, f := range files {
		f := f.(map[string]any)
		if f["status"] != float64(200) || f["magic"] != "PK" {
			t.Errorf("list.readExport: the %s link gave %v", typ, f)
		}
	}
	ok("list.searchExport", slices.Equal(res["list.searchExport"].Data["keys"].([]any), []any{res["list.createExport"].Data["id"]}))
	ok("list.delete", res["list.delete"].Data["deleted"] == true)

	// Without one: the online-only portals answer the documented 503, the
	// others still answer.
	res = run(server(nil))
	ok("credit.read", res["credit.read"].Data["transient"] != nil)
	ok("zip.read", res["zip.read"].Data["code"] == "70836900")
	for name, message := range map[string]string{
		"ccc.read": fault.MsgOfflineCCC, "ccc.certificate": fault.MsgOfflineCCC,
		"suframa.read": fault.MsgOfflineSuframa, "suframa.certificate": fault.MsgOfflineSuframa,
	} {
		if e := res[name].Error; e == nil || e.Code != http.StatusServiceUnavailable || e.Message != message {
			t.Errorf("%s without an online source: %+v, want 503 %q", name, res[name], message)
		}
	}
}
