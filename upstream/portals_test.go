package upstream_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/cnpjgraph/cnpjgraph/upstream"
	"github.com/cnpjgraph/cnpjgraph/upstream/upstreamtest"
)

// newPortals is a source speaking the whole CNPJá wire: the online-only
// portals (CCC, SUFRAMA) answered as the commercial API shapes them, the
// rest by a central cnpjgraph over the fixture. The portals say they got
// their data a day before the tests' clock.
func newPortals(t *testing.T) (*upstreamtest.Portals, *httptest.Server) {
	t.Helper()
	a := newCentral(t)
	p := &upstreamtest.Portals{Next: a.srv.Config.Handler, Updated: now.Add(-days(1))}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv
}

// TestCCCUnderStrategies: GET /ccc is fetched from the source once (every
// state), kept in the overlay, answered from it under the strategies, and
// priced like any portal fetched online.
func TestCCCUnderStrategies(t *testing.T) {
	p, src := newPortals(t)
	b := newEdge(t, src.URL, edgeOptions{config: func(c *upstream.Config) { c.BreakerFailures = -1 }})
	ccc := "/ccc?taxId=" + upstreamtest.CCCTaxID

	r := b.get(t, ccc+"&states=DF")
	r.want(t, 200, "")
	m := r.object(t)
	regs := m["registrations"].([]any)
	if len(regs) != 1 || field(regs[0], "state") != "DF" || field(regs[0], "number") != upstreamtest.CCCNumbers["DF"] ||
		field(regs[0], "status", "text") != "Sem restrição" || field(regs[0], "type", "id") != "1" || field(regs[0], "statusDate") != "2004-05-22" {
		t.Errorf("registrations of DF: %v", regs)
	}
	if m["originState"] != "DF" || m["name"] != "SERVICO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)" || m["taxId"] != upstreamtest.CCCTaxID {
		t.Errorf("record: %s", r.body)
	}
	if r.updated(t) != stamp(now) {
		t.Errorf("online answer updated %s, want the request time", r.updated(t))
	}
	q, _ := url.ParseQuery(p.LastQuery("/ccc"))
	if p.Calls("/ccc") != 1 || q.Get("states") != "ALL" || q.Get("strategy") != "CACHE_IF_ERROR" || q.Get("maxAge") != "1" {
		t.Errorf("source asked %d times, last %s", p.Calls("/ccc"), p.LastQuery("/ccc"))
	}
	if b.charged.Load() != 1 {
		t.Errorf("charged %d, want 1 for the portal fetched", b.charged.Load())
	}

	// From the overlay now: every state was kept, the source's own time
	// shows, nothing more is charged.
	r = b.get(t, ccc+"&states=ALL")
	r.want(t, 200, "")
	if n := len(r.object(t)["registrations"].([]any)); n != 2 {
		t.Errorf("ALL: %d registrations, want 2", n)
	}
	if r.updated(t) != stamp(p.Updated) {
		t.Errorf("cached answer updated %s, want the source's %s", r.updated(t), stamp(p.Updated))
	}
	r = b.get(t, ccc+"&states=ORIGIN&strategy=CACHE")
	r.want(t, 200, "")
	if regs := r.object(t)["registrations"].([]any); len(regs) != 1 || field(regs[0], "state") != "DF" {
		t.Errorf("ORIGIN: %v", regs)
	}
	if p.Calls("/ccc") != 1 || b.charged.Load() != 1 {
		t.Errorf("cached answers asked the source (%d calls) or were charged (%d)", p.Calls("/ccc"), b.charged.Load())
	}

	// ONLINE asks again and pays again.
	b.get(t, ccc+"&states=SP&strategy=ONLINE").want(t, 200, "")
	if p.Calls("/ccc") != 2 || b.charged.Load() != 2 {
		t.Errorf("ONLINE: %d calls, charged %d", p.Calls("/ccc"), b.charged.Load())
	}
	// CACHE with nothing cached.
	b.get(t, "/ccc?states=BR&strategy=CACHE&taxId="+dbtest.BigHead).want(t, 404, fault.MsgCacheMissing)

	// The source goes away: stale data within maxStale, else the CCC's
	// own offline sentence.
	src.Close()
	b.age(t, upstreamtest.CCCTaxID, db.PortalCCCRecord, now.Add(-days(100)))
	charged := b.charged.Load()
	if r := b.get(t, ccc+"&states=DF"); r.status != 200 || r.updated(t) != stamp(now.Add(-days(100))) {
		t.Errorf("stale under CACHE_IF_ERROR: %d %s", r.status, r.body)
	}
	b.get(t, ccc+"&states=DF&maxStale=99").want(t, 503, fault.MsgOfflineCCC)
	b.get(t, ccc+"&states=DF&strategy=CACHE_IF_FRESH").want(t, 503, fault.MsgOfflineCCC)
	if b.charged.Load() != charged {
		t.Errorf("stale answers and failures were charged")
	}
}

// TestSuframaUnderStrategies: GET /suframa and the office lookup's suframa
// option share one portal: one fetch, kept (a "not registered" too).
func TestSuframaUnderStrategies(t *testing.T) {
	p, src := newPortals(t)
	b := newEdge(t, src.URL, edgeOptions{})
	suframa := "/suframa?taxId=" + upstreamtest.SuframaTaxID

	r := b.get(t, suframa)
	r.want(t, 200, "")
	m := r.object(t)
	if m["number"] != upstreamtest.SuframaNumber || m["approved"] != true || field(m, "status", "text") != "Ativa" ||
		field(m, "address", "city") != "Manaus" || field(m, "mainActivity", "performed") != "true" ||
		len(m["incentives"].([]any)) != 1 || field(m["incentives"].([]any)[0], "tribute") != "IPI" || m["updated"] != stamp(now) {
		t.Errorf("suframa: %s", r.body)
	}
	if b.charged.Load() != 1 || p.Calls("/suframa") != 1 {
		t.Errorf("charged %d, %d calls", b.charged.Load(), p.Calls("/suframa"))
	}
	// The office lookup's suframa comes from the same record (the
	// registry record, which this edge has not seen, goes online).
	r = b.get(t, "/office/"+upstreamtest.SuframaTaxID+"?suframa=true")
	r.want(t, 200, "")
	list := r.object(t)["suframa"].([]any)
	if len(list) != 1 || field(list[0], "number") != upstreamtest.SuframaNumber || field(list[0], "approvalDate") != "2021-01-01" ||
		len(list[0].(map[string]any)["incentives"].([]any)) != 1 {
		t.Errorf("office suframa: %v", list)
	}
	if p.Calls("/suframa") != 1 {
		t.Errorf("the office lookup asked the source again")
	}
	// An office the SUFRAMA does not know: 404 once asked, [] in the
	// office; the answer "none" is kept, and an error is not charged.
	charged := b.charged.Load()
	b.get(t, "/suframa?taxId="+dbtest.SerproBranch).want(t, 404, service.MsgSuframaNotFound)
	if b.charged.Load() != charged {
		t.Errorf("a 404 was charged")
	}
	r = b.get(t, "/office/"+dbtest.SerproBranch+"?suframa=true")
	r.want(t, 200, "")
	if list, ok := r.object(t)["suframa"].([]any); !ok || len(list) != 0 {
		t.Errorf("office without SUFRAMA: %s", r.body)
	}
	if p.Calls("/suframa") != 2 {
		t.Errorf("%d SUFRAMA calls, want 2: a known 'none' is cached", p.Calls("/suframa"))
	}
	// Without the option, no suframa key.
	if _, has := b.get(t, "/office/"+dbtest.SerproBranch).object(t)["suframa"]; has {
		t.Errorf("suframa present without the option")
	}
}

// TestPortalCertificates: the CCC and SUFRAMA certificates are the source's
// PDFs, fetched each time (never kept), priced as a certificate plus the
// online fetch.
func TestPortalCertificates(t *testing.T) {
	p, src := newPortals(t)
	b := newEdge(t, src.URL, edgeOptions{})
	prices := service.DefaultPrices
	for _, c := range []struct{ path, query string }{
		{"/ccc/certificate", "state=DF&taxId=" + upstreamtest.CCCTaxID},
		{"/suframa/certificate", "taxId=" + upstreamtest.SuframaTaxID},
	} {
		before := b.charged.Load()
		for i := 1; i <= 2; i++ {
			res, err := http.Get(b.srv.URL + c.path + "?" + c.query)
			if err != nil {
				t.Fatal(err)
			}
			var body bytes.Buffer
			_, _ = body.ReadFrom(res.Body)
			_ = res.Body.Close()
			if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/pdf" || !bytes.Equal(body.Bytes(), upstreamtest.PDF) {
				t.Fatalf("%s: %d %s %q", c.path, res.StatusCode, res.Header.Get("Content-Type"), body.String())
			}
			if p.Calls(c.path) != i {
				t.Errorf("%s: %d calls after %d requests: certificates are not kept", c.path, p.Calls(c.path), i)
			}
		}
		if q, _ := url.ParseQuery(p.LastQuery(c.path)); q.Encode() != c.query {
			t.Errorf("%s: the source was asked %q, want %q (no cache parameters)", c.path, q.Encode(), c.query)
		}
		if got, want := b.charged.Load()-before, int64(2*(prices.Certificate+prices.Online)); got != want {
			t.Errorf("%s: charged %d, want %d", c.path, got, want)
		}
	}
	b.get(t, "/ccc/certificate?taxId="+upstreamtest.CCCTaxID+"&state=XX").want(t, 400, fault.MsgValidation)
}

// TestPortalsThroughAnEdge: another cnpjgraph in front of the edge reads
// the edge's /ccc and /suframa as it reads the commercial API's.
func TestPortalsThroughAnEdge(t *testing.T) {
	_, src := newPortals(t)
	b := newEdge(t, src.URL, edgeOptions{})
	b2 := newEdge(t, b.srv.URL, edgeOptions{})
	for _, target := range []string{
		"/ccc?states=ALL&taxId=" + upstreamtest.CCCTaxID,
		"/suframa?taxId=" + upstreamtest.SuframaTaxID,
	} {
		got, want := b2.get(t, target), b.get(t, target)
		got.want(t, 200, "")
		if withoutUpdated(t, got) != withoutUpdated(t, want) {
			t.Errorf("%s through two edges differs:\n %s\n %s", target, got.body, want.body)
		}
	}
	b2.get(t, "/suframa?taxId="+dbtest.SerproBranch).want(t, 404, service.MsgSuframaNotFound)
}

// TestPortalsOffline: without a source for them the online-only portals
// answer 503 with their own sentence, whatever the strategy, and charge
// nothing; so does the office lookup's suframa option.
func TestPortalsOffline(t *testing.T) {
	a := newCentral(t) // no upstream
	for _, c := range []struct{ target, message string }{
		{"/ccc?states=BR&taxId=" + dbtest.SerproBranch, fault.MsgOfflineCCC},
		{"/ccc?states=BR&strategy=CACHE&taxId=" + dbtest.SerproBranch, fault.MsgOfflineCCC},
		{"/ccc/certificate?taxId=" + dbtest.SerproBranch, fault.MsgOfflineCCC},
		{"/suframa?taxId=" + dbtest.SerproBranch, fault.MsgOfflineSuframa},
		{"/suframa?strategy=CACHE&taxId=" + dbtest.SerproBranch, fault.MsgOfflineSuframa},
		{"/suframa/certificate?taxId=" + dbtest.SerproBranch, fault.MsgOfflineSuframa},
		{"/office/" + dbtest.SerproBranch + "?suframa=true", fault.MsgOfflineSuframa},
		{"/office/" + dbtest.SerproBranch + "?links=SUFRAMA_CERTIFICATE", fault.MsgOfflineSuframa},
		{"/office/" + dbtest.SerproBranch + "?links=CCC_CERTIFICATE", fault.MsgOfflineCCC},
	} {
		httpGet(t, a.srv.URL+c.target).want(t, 503, c.message)
	}
	// An upstream that does not serve the portal is the same.
	b := newEdge(t, a.srv.URL, edgeOptions{snapshot: true, config: func(c *upstream.Config) { c.Portals = []string{"rfb"} }})
	b.get(t, "/suframa?taxId="+dbtest.SerproBranch).want(t, 503, fault.MsgOfflineSuframa)
	if b.charged.Load() != 0 {
		t.Errorf("charged %d", b.charged.Load())
	}
}

// field walks a decoded JSON object; numbers and booleans come back as
// their text.
func field(v any, path ...string) string {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}
