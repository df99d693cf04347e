package upstream_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/upstream"
)

// TestChain: B, with an empty database, serves A's data; its second answer
// comes from its own overlay; ONLINE always asks A.
func TestChain(t *testing.T) {
	a := newCentral(t)
	b := newEdge(t, a.srv.URL, edgeOptions{})
	office := "/office/" + dbtest.SerproBranch

	first := b.get(t, office)
	first.want(t, 200, "")
	fromA := httpGet(t, a.srv.URL+office)
	if got, want := withoutUpdated(t, first), withoutUpdated(t, fromA); got != want {
		t.Errorf("B's office differs from A's:\n B %s\n A %s", got, want)
	}
	if got := first.updated(t); got != stamp(now) {
		t.Errorf("online answer updated %s, want the request time %s", got, stamp(now))
	}
	if n := a.calls.get("/rfb"); n != 1 {
		t.Fatalf("A got %d registry requests, want 1", n)
	}
	if b.charged.Load() != 1 {
		t.Errorf("charged %d, want 1 for one portal online", b.charged.Load())
	}

	// From B's overlay now: A is not asked, the record's own time shows,
	// nothing is charged.
	second := b.get(t, office)
	second.want(t, 200, "")
	if n := a.calls.total(); n != 2 { // the registry fetch and the test's own GET
		t.Errorf("A got %d requests, want 2: the second answer must come from B's cache", n)
	}
	if got := second.updated(t); got != stamp(dbtest.Reference()) {
		t.Errorf("cached answer updated %s, want the data's own time %s", got, stamp(dbtest.Reference()))
	}
	if withoutUpdated(t, second) != withoutUpdated(t, first) {
		t.Errorf("the cached answer differs from the online one")
	}
	if b.charged.Load() != 1 {
		t.Errorf("a cached answer was charged")
	}

	// The registry record from the same overlay equals A's, field by field.
	rfb := "/rfb?taxId=" + dbtest.SerproBranch
	if got, want := b.get(t, rfb), httpGet(t, a.srv.URL+rfb); string(got.body) != string(want.body) {
		t.Errorf("B's /rfb differs from A's:\n B %s\n A %s", got.body, want.body)
	}

	// ONLINE always asks A, and answers with the request time.
	before := a.calls.get("/rfb")
	for i := 1; i <= 2; i++ {
		b.clock.Store(now.Add(time.Duration(i) * time.Hour).UnixNano())
		r := b.get(t, office+"?strategy=ONLINE")
		r.want(t, 200, "")
		if got, want := r.updated(t), stamp(now.Add(time.Duration(i)*time.Hour)); got != want {
			t.Errorf("ONLINE updated %s, want %s", got, want)
		}
	}
	if n := a.calls.get("/rfb") - before; n != 2 {
		t.Errorf("two ONLINE lookups asked A %d times", n)
	}
	b.clock.Store(now.UnixNano())

	// A company with agents, foreigners and a special status: the registry
	// record round-trips exactly through B.
	rfbBig := "/rfb?taxId=" + dbtest.BigHead
	got, want := b.get(t, rfbBig), httpGet(t, a.srv.URL+rfbBig)
	if withoutUpdated(t, got) != withoutUpdated(t, want) {
		t.Errorf("B's /rfb of the big company differs from A's:\n B %s\n A %s", got.body, want.body)
	}

	// Simples with history.
	simples := "/simples?history=true&taxId=" + dbtest.AlphaTaxID
	if got, want := b.get(t, simples), httpGet(t, a.srv.URL+simples); withoutUpdated(t, got) != withoutUpdated(t, want) {
		t.Errorf("B's /simples differs from A's:\n B %s\n A %s", got.body, want.body)
	}

	// A tax id the source does not know is not registered at B either,
	// and costs nothing.
	charged := b.charged.Load()
	b.get(t, "/office/"+dbtest.SerproHead).want(t, 404, fault.MsgTaxIDNotFound)
	if b.charged.Load() != charged {
		t.Errorf("a 404 was charged")
	}
}

// TestSourceDown: with A stopped, CACHE_IF_ERROR serves B's stale data up
// to maxStale, CACHE_IF_FRESH is offline, CACHE answers from cache or 404.
func TestSourceDown(t *testing.T) {
	a := newCentral(t)
	b := newEdge(t, a.srv.URL, edgeOptions{config: func(c *upstream.Config) { c.BreakerFailures = -1 }})
	office := "/office/" + dbtest.SerproBranch
	b.get(t, office).want(t, 200, "")
	a.srv.Close()

	aged := now.Add(-days(100))
	b.age(t, dbtest.SerproBranch, db.PortalRegistry, aged)
	charged := b.charged.Load()

	r := b.get(t, office) // default: maxAge 30, maxStale 365
	r.want(t, 200, "")
	if r.updated(t) != stamp(aged) {
		t.Errorf("stale answer updated %s, want %s", r.updated(t), stamp(aged))
	}
	b.get(t, office+"?maxStale=101").want(t, 200, "")
	b.get(t, office+"?maxStale=99").want(t, 503, fault.MsgOffline)
	b.get(t, office+"?strategy=CACHE_IF_FRESH").want(t, 503, fault.MsgOffline)
	b.get(t, office+"?strategy=ONLINE").want(t, 503, fault.MsgOffline)
	if r := b.get(t, office+"?strategy=CACHE"); r.status != 200 || r.updated(t) != stamp(aged) {
		t.Errorf("CACHE: %d %s", r.status, r.body)
	}
	b.get(t, "/office/"+dbtest.BigHead+"?strategy=CACHE").want(t, 404, fault.MsgCacheMissing)
	b.get(t, "/office/"+dbtest.BigHead).want(t, 503, fault.MsgOffline)
	b.get(t, office+"?strategy=CACHE&simples=true").want(t, 404, fault.MsgCacheMissing)
	if b.charged.Load() != charged {
		t.Errorf("answers from cache or errors were charged")
	}
}

// TestSlowSource: a source slower than the portal's timeout is a 504 within
// about that timeout, charged nothing; CACHE_IF_ERROR then serves stale.
func TestSlowSource(t *testing.T) {
	a := newCentral(t)
	b := newEdge(t, a.srv.URL, edgeOptions{config: func(c *upstream.Config) {
		c.Timeouts = map[string]time.Duration{upstream.PortalRegistry: 200 * time.Millisecond}
		c.BreakerFailures = -1
	}})
	a.delay.Store(int64(3 * time.Second))
	start := time.Now()
	b.get(t, "/office/"+dbtest.SerproBranch).want(t, 504, fault.MsgTimeout)
	if el := time.Since(start); el > time.Second {
		t.Errorf("504 took %v with a 200ms timeout", el)
	}
	if b.charged.Load() != 0 {
		t.Errorf("a timed-out lookup was charged %d", b.charged.Load())
	}

	a.delay.Store(0)
	b.get(t, "/office/"+dbtest.SerproBranch).want(t, 200, "")
	b.age(t, dbtest.SerproBranch, db.PortalRegistry, now.Add(-days(40)))
	a.delay.Store(int64(3 * time.Second))
	charged := b.charged.Load()
	if r := b.get(t, "/office/"+dbtest.SerproBranch); r.status != 200 || r.updated(t) != stamp(now.Add(-days(40))) {
		t.Errorf("CACHE_IF_ERROR with a slow source: %d %s", r.status, r.body)
	}
	b.get(t, "/office/"+dbtest.SerproBranch+"?strategy=CACHE_IF_FRESH").want(t, 504, fault.MsgTimeout)
	if b.charged.Load() != charged {
		t.Errorf("stale answers and timeouts were charged")
	}
}

// TestConcurrentStale: 100 concurrent lookups of one stale tax id share one
// upstream call.
func TestConcurrentStale(t *testing.T) {
	a := newCentral(t)
	b := newEdge(t, a.srv.URL, edgeOptions{})
	office := "/office/" + dbtest.SerproBranch
	b.get(t, office).want(t, 200, "")
	b.age(t, dbtest.SerproBranch, db.PortalRegistry, now.Add(-days(40)))
	before := a.calls.get("/rfb")
	a.delay.Store(int64(500 * time.Millisecond)) // long enough for all to join

	const n = 100
	var wg sync.WaitGroup
	statuses := make([]int, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			rec := httptest.NewRecorder()
			b.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, office, nil))
			statuses[i] = rec.Code
		})
	}
	close(start)
	wg.Wait()
	for i, s := range statuses {
		if s != 200 {
			t.Fatalf("request %d: status %d", i, s)
		}
	}
	if got := a.calls.get("/rfb") - before; got != 1 {
		t.Errorf("%d concurrent lookups made %d upstream calls, want 1", n, got)
	}
}

// TestPerPortalRefresh: in the office lookup each portal goes online only
// when its own cached data fails the age criterion.
func TestPerPortalRefresh(t *testing.T) {
	a := newCentral(t)
	b := newEdge(t, a.srv.URL, edgeOptions{})
	office := "/office/" + dbtest.SerproBranch + "?simples=true&registrations=BR"
	r := b.get(t, office)
	r.want(t, 200, "")
	for _, p := range []string{"/rfb", "/simples", "/office"} {
		if a.calls.get(p) != 1 {
			t.Fatalf("first lookup: %d calls to %s, want 1", a.calls.get(p), p)
		}
	}
	if b.charged.Load() != 3 {
		t.Errorf("charged %d for three portals online", b.charged.Load())
	}
	if s := r.object(t)["company"].(map[string]any)["simples"].(map[string]any); s["optant"] != true || s["since"] != "2014-01-01" {
		t.Errorf("simples: %v", s)
	}

	// Stale Simples, fresh registry and registrations: only Simples.
	b.age(t, dbtest.SerproBranch, db.PortalSimples, now.Add(-days(31)))
	b.get(t, office).want(t, 200, "")
	if a.calls.get("/simples") != 2 || a.calls.get("/rfb") != 1 || a.calls.get("/office") != 1 {
		t.Errorf("stale Simples: calls %v, want only /simples again", a.calls.paths)
	}
	// Stale registrations only.
	b.age(t, dbtest.SerproBranch, db.PortalRegistrations, now.Add(-days(31)))
	b.get(t, office).want(t, 200, "")
	if a.calls.get("/simples") != 2 || a.calls.get("/rfb") != 1 || a.calls.get("/office") != 2 {
		t.Errorf("stale registrations: calls %v, want only /office again", a.calls.paths)
	}
	// maxAge narrows what counts as fresh, per portal: the registry and
	// Simples records are 10 days old, the registrations just fetched.
	b.get(t, office+"&maxAge=5").want(t, 200, "")
	if a.calls.get("/simples") != 3 || a.calls.get("/rfb") != 2 || a.calls.get("/office") != 2 {
		t.Errorf("maxAge=5: calls %v", a.calls.paths)
	}
	if b.charged.Load() != 3+1+1+2 {
		t.Errorf("charged %d, want one credit per portal online", b.charged.Load())
	}
}

// TestPruneOverlay: an import keeps online records newer than itself and
// drops older ones; a newer snapshot wins over an older online record.
func TestPruneOverlay(t *testing.T) {
	a := newCentral(t)
	b := newEdge(t, a.srv.URL, edgeOptions{snapshot: true})
	ctx := context.Background()
	ref := dbtest.Reference()
	put := func(taxID string, updated time.Time, alias string) {
		body := fmt.Sprintf(`{"TaxID":%q,"Alias":%q,"Company":{"Root":%q,"Name":"FROM OVERLAY"}}`, taxID, alias, taxID[:8])
		if err := db.SaveOverlay(ctx, b.db, db.OverlayRecord{TaxID: taxID, Portal: db.PortalRegistry, Updated: updated, Body: []byte(body)}); err != nil {
			t.Fatal(err)
		}
	}
	alias := func(taxID string) (string, string) {
		r := b.get(t, "/office/"+taxID+"?strategy=CACHE")
		r.want(t, 200, "")
		al, _ := r.object(t)["alias"].(string)
		return al, r.updated(t)
	}
	put(dbtest.SerproBranch, ref.Add(days(5)), "ONLINE OLDER")
	put(dbtest.BigHead, ref.Add(days(25)), "ONLINE NEWER")
	// An older online record never replaces a newer one.
	put(dbtest.BigHead, ref.Add(days(1)), "ONLINE STALE WRITE")
	if al, up := alias(dbtest.SerproBranch); al != "ONLINE OLDER" || up != stamp(ref.Add(days(5))) {
		t.Errorf("before the import: %s %s, want the overlay, newer than the snapshot", al, up)
	}

	// The import of a newer dump (reference 20 days later) goes live.
	imported := ref.Add(days(20))
	dbtest.MustExec(t, b.db, `UPDATE snapshots SET state = 'retired' WHERE state = 'live'`)
	dbtest.MustExec(t, b.db, `INSERT INTO snapshots (state, dump_month, reference_date, finished_at) VALUES ('live', '2025-12', $1, now())`, imported)
	if _, err := b.store.Catalog.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if al, up := alias(dbtest.SerproBranch); al != "REGIONAL BRASILIA-DF" || up != stamp(imported) {
		t.Errorf("after the import, before pruning: %s %s, want the newer snapshot", al, up)
	}
	n, err := db.PruneOverlay(ctx, b.db, imported)
	if err != nil || n != 1 {
		t.Fatalf("pruned %d, %v; want 1", n, err)
	}
	if al, up := alias(dbtest.SerproBranch); al != "REGIONAL BRASILIA-DF" || up != stamp(imported) {
		t.Errorf("after pruning: %s %s, want the snapshot", al, up)
	}
	if al, up := alias(dbtest.BigHead); al != "ONLINE NEWER" || up != stamp(ref.Add(days(25))) {
		t.Errorf("the newer online record: %s %s", al, up)
	}
}

// TestBreaker: after N failures B fails fast without asking the source
// until the cool-down ends; then one probe decides.
func TestBreaker(t *testing.T) {
	a := newCentral(t)
	var mu sync.Mutex
	healthy := false
	calls := &counter{}
	src := httptest.NewServer(calls.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ok := healthy
		mu.Unlock()
		if !ok {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(500)
			_, _ = w.Write([]byte(`{"code":500,"message":"unexpected error"}`))
			return
		}
		a.srv.Config.Handler.ServeHTTP(w, r)
	})))
	t.Cleanup(src.Close)
	const cooldown = 300 * time.Millisecond
	b := newEdge(t, src.URL, edgeOptions{config: func(c *upstream.Config) {
		c.BreakerFailures = 3
		c.BreakerCooldown = cooldown
	}})
	office := "/office/" + dbtest.SerproBranch
	for range 3 {
		b.get(t, office).want(t, 503, fault.MsgOffline)
	}
	if calls.total() != 3 {
		t.Fatalf("%d calls for 3 failures (a 500 is not retried)", calls.total())
	}
	start := time.Now()
	for range 5 {
		b.get(t, office).want(t, 503, fault.MsgOffline)
	}
	if calls.total() != 3 {
		t.Errorf("an open breaker let %d calls through", calls.total()-3)
	}
	if time.Since(start) > cooldown {
		t.Errorf("failing fast took %v", time.Since(start))
	}
	// Other portals have their own breaker.
	b.get(t, "/simples?taxId="+dbtest.SerproBranch).want(t, 503, fault.MsgOffline)
	if calls.get("/simples") != 1 {
		t.Errorf("the Simples portal was blocked by the registry's breaker")
	}

	time.Sleep(cooldown + 50*time.Millisecond)
	b.get(t, office).want(t, 503, fault.MsgOffline) // the probe fails: open again
	b.get(t, office).want(t, 503, fault.MsgOffline)
	if calls.get("/rfb") != 4 {
		t.Errorf("half-open: %d registry calls, want one probe", calls.get("/rfb")-3)
	}

	mu.Lock()
	healthy = true
	mu.Unlock()
	time.Sleep(cooldown + 50*time.Millisecond)
	b.get(t, office).want(t, 200, "") // the probe succeeds: closed
	b.get(t, office+"?strategy=ONLINE").want(t, 200, "")
	if calls.get("/rfb") != 6 {
		t.Errorf("closed again: %d registry calls, want 6", calls.get("/rfb"))
	}
}
