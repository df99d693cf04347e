package service_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/model"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// fakeUpstream answers with a fixed office, or fails with err.
type fakeUpstream struct {
	service.Offline // the portals it does not fake: CCC, SUFRAMA, certificates
	err             error
	calls           int
}

func (f *fakeUpstream) Registry(ctx context.Context, taxID cnpj.CNPJ) (model.Office, error) {
	f.calls++
	if f.err != nil {
		return model.Office{}, f.err
	}
	return model.Office{TaxID: string(taxID), Alias: ptr("ONLINE"), Company: &model.Company{Root: string(taxID.Root())}}, nil
}

func (f *fakeUpstream) Simples(ctx context.Context, taxID cnpj.CNPJ) (model.SimplesRecord, error) {
	f.calls++
	return model.SimplesRecord{TaxID: string(taxID)}, f.err
}

func (f *fakeUpstream) Registrations(ctx context.Context, taxID cnpj.CNPJ, states []string) ([]model.Registration, error) {
	f.calls++
	if states[0] == "BR" { // all states: the office's and another
		return []model.Registration{{State: "DF", Number: "123", Enabled: true}, {State: "SP", Number: "456", Enabled: true}}, f.err
	}
	return []model.Registration{{State: states[0], Number: "123", Enabled: true}}, f.err
}

func (f *fakeUpstream) Serves(string) bool { return true }

func ptr[T any](v T) *T { return &v }

func TestStrategy(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	store := db.NewStore(d, db.StoreOptions{})
	age := 10 * 24 * time.Hour // the data's age at the test's clock
	clock := func() time.Time { return dbtest.Reference().Add(age) }
	taxID := cnpj.CNPJ(dbtest.SerproBranch)
	offline := errors.New("connection refused")

	cases := []struct {
		name     string
		upstream *fakeUpstream
		cache    service.CacheQuery
		want     string // "cache", "online", or the fault message
	}{
		{"no upstream, CACHE", nil, q(service.Cache, 1, 1), "cache"},
		{"no upstream, fresh", nil, q(service.CacheIfFresh, 10, 365), "cache"},
		{"no upstream, CACHE_IF_FRESH stale", nil, q(service.CacheIfFresh, 9, 365), fault.MsgOffline},
		{"no upstream, CACHE_IF_ERROR within maxStale", nil, q(service.CacheIfError, 9, 10), "cache"},
		{"no upstream, CACHE_IF_ERROR beyond maxStale", nil, q(service.CacheIfError, 9, 9), fault.MsgOffline},
		{"no upstream, ONLINE", nil, q(service.Online, 30, 365), fault.MsgOffline},
		{"upstream, CACHE never asks it", &fakeUpstream{}, q(service.Cache, 1, 1), "cache"},
		{"upstream, fresh cache", &fakeUpstream{}, q(service.CacheIfFresh, 30, 365), "cache"},
		{"upstream, stale cache goes online", &fakeUpstream{}, q(service.CacheIfFresh, 9, 365), "online"},
		{"upstream, ONLINE", &fakeUpstream{}, q(service.Online, 30, 365), "online"},
		{"upstream down, CACHE_IF_ERROR serves stale", &fakeUpstream{err: offline}, q(service.CacheIfError, 9, 10), "cache"},
		{"upstream down, CACHE_IF_ERROR too stale", &fakeUpstream{err: offline}, q(service.CacheIfError, 9, 9), fault.MsgOffline},
		{"upstream down, CACHE_IF_FRESH", &fakeUpstream{err: offline}, q(service.CacheIfFresh, 9, 365), fault.MsgOffline},
		{"upstream slow, ONLINE", &fakeUpstream{err: context.DeadlineExceeded}, q(service.Online, 30, 365), fault.MsgTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Each case starts from the snapshot alone: an earlier case's
			// online answer would otherwise be the newer cached record.
			dbtest.MustExec(t, d, `DELETE FROM overlay_records`)
			opts := service.Options{Now: clock}
			if c.upstream != nil {
				opts.Source = c.upstream
			}
			svc := service.New(store, opts)
			o, err := svc.Office(context.Background(), service.OfficeQuery{TaxID: taxID, Cache: c.cache})
			switch c.want {
			case "cache":
				if err != nil || o.Alias == nil || *o.Alias != "REGIONAL BRASILIA-DF" || !o.Updated.Equal(dbtest.Reference()) {
					t.Errorf("want the cached office: %+v %v", o, err)
				}
			case "online":
				if err != nil || o.Alias == nil || *o.Alias != "ONLINE" {
					t.Errorf("want the online office: %+v %v", o, err)
				}
			default:
				if f := fault.Classify(err); err == nil || f.Message != c.want {
					t.Errorf("err %v, want %q", err, c.want)
				}
			}
			if c.upstream != nil && c.want == "cache" && c.cache.Strategy != service.CacheIfError && c.upstream.calls != 0 {
				t.Errorf("a cached answer asked the upstream")
			}
		})
	}
}

func q(s service.Strategy, maxAge, maxStale int) service.CacheQuery {
	return service.CacheQuery{Strategy: s, MaxAge: maxAge, MaxStale: maxStale}
}

// TestRegistrationsWithoutUpstream pins the documented decision: without an
// upstream, registrations are [] for CACHE and CACHE_IF_ERROR, offline for
// CACHE_IF_FRESH and ONLINE.
func TestRegistrationsWithoutUpstream(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{Now: dbtest.Reference})
	for s, wantErr := range map[service.Strategy]bool{service.Cache: false, service.CacheIfError: false, service.CacheIfFresh: true} {
		o, err := svc.Office(context.Background(), service.OfficeQuery{
			TaxID: dbtest.SerproBranch, Registrations: []string{"BR"}, Cache: q(s, 30, 365)})
		if wantErr != (err != nil) || !wantErr && (o.Registrations == nil || len(o.Registrations) != 0) {
			t.Errorf("%s: %v %v", s, o.Registrations, err)
		}
	}
	up := &fakeUpstream{}
	svc = service.New(db.NewStore(d, db.StoreOptions{}), service.Options{Now: dbtest.Reference, Source: up})
	o, err := svc.Office(context.Background(), service.OfficeQuery{
		TaxID: dbtest.SerproBranch, Registrations: []string{"ORIGIN"}, Cache: service.DefaultCache()})
	if err != nil || len(o.Registrations) != 1 || o.Registrations[0].State != "DF" {
		t.Errorf("ORIGIN through an upstream: %v %v", o.Registrations, err)
	}
}

func TestNoSnapshot(t *testing.T) {
	d, _ := dbtest.New(t)
	svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{})
	_, err := svc.CompanyAlone(context.Background(), dbtest.SerproRoot)
	if f := fault.Classify(err); f.Status() != 503 || f.Message != fault.MsgNoSnapshot {
		t.Errorf("no snapshot: %v", err)
	}
	if _, err := svc.Ready(context.Background()); fault.Classify(err).Status() != 503 {
		t.Errorf("ready without a snapshot: %v", err)
	}
}

// slowUpstream answers the registry portal after release is closed, telling
// called of each call first.
type slowUpstream struct {
	fakeUpstream
	called  chan struct{}
	release chan struct{}
}

func (s *slowUpstream) Registry(ctx context.Context, taxID cnpj.CNPJ) (model.Office, error) {
	s.called <- struct{}{}
	<-s.release
	return s.fakeUpstream.Registry(ctx, taxID)
}

// gateMeter holds the second reservation until open is closed: the moment
// between a lookup's reading the cache and its going online.
type gateMeter struct {
	service.Free
	reserved atomic.Int32
	waiting  chan struct{}
	open     chan struct{}
}

func (m *gateMeter) Reserve(ctx context.Context, credits int) error {
	if m.reserved.Add(1) == 2 {
		close(m.waiting)
		<-m.open
	}
	return nil
}

// TestLateJoinerSharesFetch: a lookup that read the stale cache while
// another's online fetch of the same office was under way, and goes online
// only after that fetch ended, takes its answer instead of asking the
// source again.
func TestLateJoinerSharesFetch(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	up := &slowUpstream{called: make(chan struct{}, 2), release: make(chan struct{})}
	meter := &gateMeter{waiting: make(chan struct{}), open: make(chan struct{})}
	svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{
		Source: up, Meter: meter, Now: func() time.Time { return dbtest.Reference().Add(40 * 24 * time.Hour) }})
	lookup := func() <-chan error {
		done := make(chan error, 1)
		go func() {
			o, err := svc.Office(context.Background(), service.OfficeQuery{TaxID: dbtest.SerproBranch, Cache: q(service.CacheIfFresh, 30, 365)})
			if err == nil && (o.Alias == nil || *o.Alias != "ONLINE") {
				err = errors.New("not the online answer")
			}
			done <- err
		}()
		return done
	}
	first := lookup()
	<-up.called // the first lookup is online
	second := lookup()
	<-meter.waiting // the second read the stale cache and is about to go online
	close(up.release)
	if err := <-first; err != nil {
		t.Fatalf("first lookup: %v", err)
	}
	close(meter.open)
	if err := <-second; err != nil {
		t.Fatalf("second lookup: %v", err)
	}
	if n := len(up.called); n != 0 {
		t.Errorf("the source was asked %d more times, want 0", n)
	}
}
