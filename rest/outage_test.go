package rest_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/model"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// TestDatabaseOutage serves from a private PostgreSQL, stops it, starts it
// again and blocks a table: the service answers 503 or 504 within a bounded
// time while the database is away or slow, and recovers by itself.
func TestDatabaseOutage(t *testing.T) {
	cluster := dbtest.StartCluster(t)
	ctx := context.Background()
	d, err := db.Open(ctx, cluster.URL()+"&statement_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := db.Migrate(ctx, d); err != nil {
		t.Fatal(err)
	}
	dbtest.LoadFixture(t, d)
	const timeout = 1500 * time.Millisecond
	s := serverOver(t, d, timeout)
	target := "/office/" + dbtest.SerproBranch + "?simples=true"

	timed := func() (response, time.Duration) {
		start := time.Now()
		r := s.get(t, target)
		return r, time.Since(start)
	}
	if r, _ := timed(); r.status != 200 {
		t.Fatalf("before the outage: %d %s", r.status, r.body)
	}

	cluster.Stop()
	for i := 0; i < 3; i++ {
		r, took := timed()
		if r.status != 503 && r.status != 504 {
			t.Fatalf("database down: %d %s", r.status, r.body)
		}
		if took > timeout+time.Second {
			t.Errorf("database down: answered after %v", took)
		}
		t.Logf("database down: %d %s in %v", r.status, r.body, took)
		if body := r.object(t); body["code"] != jsonNumber(r.status) {
			t.Errorf("database down: body %s", r.body)
		}
	}
	if r := s.get(t, "/readyz"); r.status != 503 {
		t.Errorf("readyz with the database down: %d %s", r.status, r.body)
	}
	if r := s.get(t, "/healthz"); r.status != 200 {
		t.Errorf("healthz is about the process: %d", r.status)
	}

	cluster.Start()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r, _ := timed()
		if r.status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery after the database came back: %d %s", r.status, r.body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r := s.get(t, "/readyz"); r.status != 200 {
		t.Errorf("readyz after recovery: %d %s", r.status, r.body)
	}

	// Slow: another session holds a lock the lookup needs (on the table
	// an office lookup reads).
	tx, err := d.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`LOCK TABLE cnpj.office_lookups IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	r, took := timed()
	_ = tx.Rollback()
	if r.status != 504 || r.object(t)["message"] != "failed to fulfill request within timeout" {
		t.Errorf("blocked statement: %d %s", r.status, r.body)
	}
	if took > timeout+time.Second {
		t.Errorf("blocked statement: answered after %v", took)
	}
	if r, _ := timed(); r.status != 200 {
		t.Errorf("after the lock: %d %s", r.status, r.body)
	}
}

// TestSearchTimeout: a search blocked by a lock (an import's swap takes
// one briefly; a long report may hold one) ends at the request's deadline
// as a 504 with the lookups' sentence, no SQL or driver text, and the next
// search after the lock is answered.
func TestSearchTimeout(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	const timeout = 300 * time.Millisecond
	s := serverOver(t, d, timeout)
	target := "/office?address.state.in=DF&limit=2"
	if r := s.get(t, target); r.status != 200 {
		t.Fatalf("before the lock: %d %s", r.status, r.body)
	}
	tx, err := d.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`LOCK TABLE cnpj.offices, cnpj.persons IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{target, "/office?names.in=serpro", "/person?name.in=silva"} {
		start := time.Now()
		r := s.get(t, target)
		took := time.Since(start)
		if r.status != 504 || r.object(t)["message"] != "failed to fulfill request within timeout" {
			t.Errorf("%s, blocked: %d %s", target, r.status, r.body)
		}
		for _, leak := range []string{"SELECT", "pq:", "cancel", "offices", "persons"} {
			if strings.Contains(string(r.body), leak) {
				t.Errorf("%s, blocked: the answer shows %q: %s", target, leak, r.body)
			}
		}
		if took > timeout+time.Second {
			t.Errorf("%s, blocked: answered after %v", target, took)
		}
	}
	_ = tx.Rollback()
	if r := s.get(t, target); r.status != 200 {
		t.Errorf("after the lock: %d %s", r.status, r.body)
	}
}

// TestSearchesTakeTurns: with SearchSettings.Concurrency searches running,
// the next waits for a place, in order of arrival, even when the tables it
// reads are free; one whose deadline passes while it waits ends as a 504
// without having sent a statement.
func TestSearchesTakeTurns(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	checkTurns(t, d, "cnpj.offices", "/office?address.state.in=DF&limit=2", "/person?type.in=NATURAL&limit=2",
		func(store *db.Store, places int) *service.Service {
			settings := service.DefaultSearchSettings
			settings.Concurrency = places
			return service.New(store, service.Options{Now: func() time.Time { return now }, Search: &settings})
		})
}

// TestLookupsTakeTurns: the same for the lookups, with
// service.Options.LookupConcurrency places; and a lookup that goes online
// gives its place up while the source answers.
func TestLookupsTakeTurns(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	source := &blockingSource{release: make(chan struct{}), asked: make(chan struct{}, 1)}
	lookups := func(store *db.Store, places int) *service.Service {
		return service.New(store, service.Options{Now: func() time.Time { return now },
			LookupConcurrency: places, Source: source})
	}
	office, person := "/office/"+dbtest.SerproBranch, "/person/"+dbtest.OKBRMember.ID()
	checkTurns(t, d, "cnpj.persons", person, office, lookups)

	// With the one place, a lookup waiting on the online source does not
	// keep the others waiting.
	s := &server{h: rest.NewRouter(rest.Deps{Service: lookups(db.NewStore(d, db.StoreOptions{}), 1), RequestTimeout: 5 * time.Second})}
	online := make(chan response)
	go func() { online <- s.get(t, office+"?strategy=ONLINE") }()
	<-source.asked
	if r := s.get(t, person); r.status != 200 {
		t.Errorf("beside a lookup waiting on the source: %d %s", r.status, r.body)
	}
	close(source.release)
	if r := <-online; r.status != 200 || !strings.Contains(string(r.body), `"alias":"ONLINE"`) {
		t.Errorf("the online lookup: %d %s", r.status, r.body)
	}
}

// checkTurns checks the places of services made by newService over d:
// blocked (a request that reads table) holds its place while table is
// locked, and free (one that does not read it) waits for that place with
// one, not with two; free waiting past its deadline is a 504 that sent no
// statement.
func checkTurns(t *testing.T, d *sqlx.DB, table, blocked, free string, newService func(*db.Store, int) *service.Service) {
	t.Helper()
	var statements atomic.Int64
	// routers returns routers with these request timeouts over one service
	// of places.
	routers := func(places int, timeouts ...time.Duration) []*server {
		svc := newService(db.NewStore(d, db.StoreOptions{OnQuery: func(string) { statements.Add(1) }}), places)
		var out []*server
		for _, timeout := range timeouts {
			out = append(out, &server{h: rest.NewRouter(rest.Deps{Service: svc, RequestTimeout: timeout})})
		}
		return out
	}
	lock := func() func() {
		tx, err := d.Beginx()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`LOCK TABLE ` + table + ` IN ACCESS EXCLUSIVE MODE`); err != nil {
			t.Fatal(err)
		}
		return func() { _ = tx.Rollback() }
	}
	// answeredWhileLocked runs blocked until its statement waits for the
	// lock (so it holds its place), then free, and says whether free
	// answered within wait, while blocked was still held by the lock. The
	// order in which the answers come after the lock is released says
	// nothing: the place is given back before blocked's answer is
	// recorded. Nothing is ordered by sleeps: on a loaded machine a
	// goroutine may start late.
	answeredWhileLocked := func(s *server, wait time.Duration) bool {
		unlock := lock()
		blockedDone, freeDone := make(chan response, 1), make(chan response, 1)
		go func() { blockedDone <- s.get(t, blocked) }()
		dbtest.WaitForLockWaiter(t, d)
		go func() { freeDone <- s.get(t, free) }()
		ok := func(target string, r response) {
			if r.status != 200 {
				t.Errorf("%s: %d %s", target, r.status, r.body)
			}
		}
		answered := false
		select {
		case r := <-freeDone:
			answered = true
			ok(free, r)
		case <-time.After(wait):
		}
		blockedAnswered := false
		select {
		case r := <-blockedDone:
			blockedAnswered = true
			t.Errorf("%s answered while the lock held it: %d %s", blocked, r.status, r.body)
		default:
		}
		unlock()
		if !blockedAnswered {
			ok(blocked, <-blockedDone)
		}
		if !answered {
			ok(free, <-freeDone)
		}
		return answered
	}
	// A free that did not wait for the one place would answer within 300 ms.
	if answeredWhileLocked(routers(1, 5*time.Second)[0], 300*time.Millisecond) {
		t.Errorf("one place: %s answered while %s held the place", free, blocked)
	}
	if !answeredWhileLocked(routers(2, 5*time.Second)[0], 10*time.Second) {
		t.Errorf("two places: %s did not answer while %s waited for the lock", free, blocked)
	}

	// A request holding the one place longer than another may wait.
	rs := routers(1, 5*time.Second, 300*time.Millisecond)
	holder, waiter := rs[0], rs[1]
	unlock := lock()
	held := make(chan response)
	go func() { held <- holder.get(t, blocked) }()
	dbtest.WaitForLockWaiter(t, d)
	before := statements.Load()
	r := waiter.get(t, free)
	if r.status != 504 || r.object(t)["message"] != "failed to fulfill request within timeout" {
		t.Errorf("waiting past its deadline: %d %s", r.status, r.body)
	}
	if n := statements.Load() - before; n != 0 {
		t.Errorf("the request that never got a place sent %d statements", n)
	}
	unlock()
	if r := <-held; r.status != 200 {
		t.Errorf("the request that held the place: %d %s", r.status, r.body)
	}
}

// blockingSource serves the registry: it says when asked, and answers once
// released.
type blockingSource struct {
	service.Offline // the portals it does not serve
	release         chan struct{}
	asked           chan struct{}
}

func (b *blockingSource) Serves(portal string) bool { return portal == service.PortalRegistry }

func (b *blockingSource) Registry(ctx context.Context, taxID cnpj.CNPJ) (model.Office, error) {
	b.asked <- struct{}{}
	select {
	case <-b.release:
	case <-ctx.Done():
		return model.Office{}, ctx.Err()
	}
	alias := "ONLINE"
	return model.Office{TaxID: string(taxID), Alias: &alias, Company: &model.Company{Root: string(taxID.Root())}}, nil
}
