// Package resolvers is the service layer: the lookups REST serves now and
// GraphQL serves through the same methods. It decides where an answer comes
// from (the cache strategy), loads through the request's dataloaders and
// turns store failures into faults; it knows nothing of HTTP or JSON.
package resolvers

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/loaders"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// Upstream is an online source of records (a CNPJá-compatible API), one
// method per portal. A nil Upstream means none is configured: the imported
// snapshot is then authoritative and whatever must go online is offline.
type Upstream interface {
	// Registry fetches the federal registry record of an office, with its
	// company and members.
	Registry(ctx context.Context, taxID cnpj.CNPJ) (model.Office, error)
	// Simples fetches the Simples Nacional and SIMEI state, with history.
	Simples(ctx context.Context, taxID cnpj.CNPJ) (model.SimplesRecord, error)
	// Registrations fetches state registrations for the given UFs (BR: all).
	Registrations(ctx context.Context, taxID cnpj.CNPJ, states []string) ([]model.Registration, error)
}

// Service answers the lookups.
type Service struct {
	store    *db.Store
	upstream Upstream
	now      func() time.Time
	charge   func(ctx context.Context, cost int) error
	log      *slog.Logger
	flights  singleflight.Group // online fetches in progress, by portal and tax id

	noSnapshotUntil atomic.Int64 // unix nanoseconds until which "nothing imported" holds
}

// Options configures a Service.
type Options struct {
	Upstream Upstream         // nil: none
	Now      func() time.Time // the clock; time.Now when nil
	// Charge debits credits for online answers: it is called with cost 1
	// once per portal answered online, after the lookup succeeded and
	// before it answers; its error becomes the lookup's. Cached answers
	// and failed lookups are never charged. nil: everything is free.
	Charge func(ctx context.Context, cost int) error
	Logger *slog.Logger // nil: discard
}

// New returns a Service over store.
func New(store *db.Store, opts Options) *Service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{store: store, upstream: opts.Upstream, now: opts.Now, charge: opts.Charge, log: opts.Logger}
}

// Store returns the store the service reads, for the loaders middleware.
func (s *Service) Store() *db.Store { return s.store }

// loaders returns the request's loaders; outside a request (CLI, tests) a
// call gets its own.
func (s *Service) loaders(ctx context.Context) *loaders.Loaders {
	if l := loaders.From(ctx); l != nil {
		return l
	}
	return loaders.New(s.store)
}

// snapshot returns the codes of the live snapshot.
func (s *Service) snapshot(ctx context.Context) (*db.Codes, error) {
	codes, err := s.store.Catalog.Current(ctx)
	if err != nil {
		return nil, storeErr(err, "")
	}
	return codes, nil
}

// storeErr turns a store failure into a fault; notFound is the message for
// a missing key.
func storeErr(err error, notFound string) error {
	var nf *db.NotFoundError
	switch {
	case errors.Is(err, db.ErrNoSnapshot):
		return fault.E(fault.Unavailable, fault.MsgNoSnapshot, err)
	case errors.As(err, &nf) && notFound != "":
		return fault.E(fault.NotFound, notFound, err)
	}
	return err
}

// Office is the office lookup: the office with its company and members,
// plus Simples and state registrations when asked for. With an upstream,
// each portal is decided on its own: only those whose cached data fails
// the strategy go online.
func (s *Service) Office(ctx context.Context, q OfficeQuery) (model.Office, error) {
	if s.upstream != nil {
		return s.officeWithUpstream(ctx, q)
	}
	o, err := s.registryRecord(ctx, q.TaxID, q.Cache)
	if err != nil {
		return model.Office{}, err
	}
	if !q.Simples {
		o.Company.Simples, o.Company.Simei = nil, nil
	}
	if len(q.Registrations) > 0 {
		regs, err := s.registrations(ctx, q, o)
		if err != nil {
			return model.Office{}, err
		}
		o.Registrations = regs
	}
	return o, nil
}

func (s *Service) officeWithUpstream(ctx context.Context, q OfficeQuery) (model.Office, error) {
	lk, err := s.begin(ctx, q.TaxID, q.Cache, true, false)
	if err != nil {
		return model.Office{}, err
	}
	o, err := lk.registry(ctx)
	if err != nil {
		return model.Office{}, err
	}
	o.Company.Simples, o.Company.Simei = nil, nil
	if q.Simples {
		rec, err := lk.simples(ctx, false)
		if err != nil {
			return model.Office{}, err
		}
		o.Company.Simples, o.Company.Simei = &rec.Simples, &rec.Simei
	}
	if len(q.Registrations) > 0 {
		regs, err := lk.registrations(ctx, q, o)
		if err != nil {
			return model.Office{}, err
		}
		o.Registrations = regs
	}
	if err := lk.charge(ctx); err != nil {
		return model.Office{}, err
	}
	return o, nil
}

// Registry is the federal registry record lookup (/rfb): the same data as
// the office lookup, which REST presents in the registry's own shape.
func (s *Service) Registry(ctx context.Context, q RegistryQuery) (model.Office, error) {
	if s.upstream != nil {
		lk, err := s.begin(ctx, q.TaxID, q.Cache, true, false)
		if err != nil {
			return model.Office{}, err
		}
		o, err := lk.registry(ctx)
		if err != nil {
			return model.Office{}, err
		}
		o.Company.Simples, o.Company.Simei = nil, nil
		return o, lk.charge(ctx)
	}
	o, err := s.registryRecord(ctx, q.TaxID, q.Cache)
	if err != nil {
		return model.Office{}, err
	}
	o.Company.Simples, o.Company.Simei = nil, nil
	return o, nil
}

// registryRecord answers the registry portal: office, company, members.
func (s *Service) registryRecord(ctx context.Context, taxID cnpj.CNPJ, cq CacheQuery) (model.Office, error) {
	codes, err := s.snapshot(ctx)
	if err != nil {
		return model.Office{}, err
	}
	var online model.Office
	cached, err := s.decide(ctx, db.PortalRegistry, cq, s.now(), codes.Updated(), func(ctx context.Context) error {
		var err error
		online, err = s.upstream.Registry(ctx, taxID)
		return err
	})
	if err != nil {
		return model.Office{}, err
	}
	if !cached {
		if online.Company == nil {
			online.Company = &model.Company{Root: string(taxID.Root())}
		}
		return online, nil
	}
	// Both loads start before either is awaited: they go out concurrently,
	// and in a GraphQL query they batch with their siblings.
	l := s.loaders(ctx)
	office := l.Offices.Load(ctx, string(taxID))
	members := l.Members.Load(ctx, string(taxID.Root()))
	o, err := office()
	if err != nil {
		return model.Office{}, storeErr(err, fault.MsgTaxIDNotFound)
	}
	m, err := members()
	if err != nil {
		return model.Office{}, storeErr(err, "")
	}
	company := *o.Company
	company.Members = m
	o.Company = &company
	return o, nil
}

// registrations answers the state-registration portal. The dump carries no
// registrations: they are only ever known through an upstream. Without one,
// CACHE and CACHE_IF_ERROR answer with the snapshot's (empty) knowledge,
// and CACHE_IF_FRESH and ONLINE, which insist on fresh data, are offline.
func (s *Service) registrations(ctx context.Context, q OfficeQuery, o model.Office) ([]model.Registration, error) {
	var regs []model.Registration
	fetch := func(ctx context.Context) error {
		states := make([]string, 0, len(q.Registrations))
		for _, st := range q.Registrations {
			if st == "ORIGIN" {
				st = o.Address.State
			}
			states = append(states, st)
		}
		var err error
		regs, err = s.upstream.Registrations(ctx, q.TaxID, states)
		return err
	}
	switch q.Cache.Strategy {
	case Cache:
		return []model.Registration{}, nil
	}
	if err := s.online(ctx, db.PortalRegistrations, fetch); err != nil {
		// Nothing is cached, so CACHE_IF_ERROR has no stale copy; the
		// snapshot, authoritative without an upstream, knows none.
		if q.Cache.Strategy == CacheIfError {
			return []model.Registration{}, nil
		}
		return nil, err
	}
	if regs == nil {
		regs = []model.Registration{}
	}
	return regs, nil
}

// Simples is the Simples Nacional / SIMEI lookup for an office's company.
func (s *Service) Simples(ctx context.Context, q SimplesQuery) (model.SimplesRecord, error) {
	if s.upstream != nil {
		lk, err := s.begin(ctx, q.TaxID, q.Cache, false, q.History)
		if err != nil {
			return model.SimplesRecord{}, err
		}
		rec, err := lk.simples(ctx, q.History)
		if err != nil {
			return model.SimplesRecord{}, err
		}
		return rec, lk.charge(ctx)
	}
	codes, err := s.snapshot(ctx)
	if err != nil {
		return model.SimplesRecord{}, err
	}
	var online model.SimplesRecord
	cached, err := s.decide(ctx, db.PortalSimples, q.Cache, s.now(), codes.Updated(), func(ctx context.Context) error {
		var err error
		online, err = s.upstream.Simples(ctx, q.TaxID)
		return err
	})
	if err != nil {
		return model.SimplesRecord{}, err
	}
	if !cached {
		if !q.History {
			online.Simples.History, online.Simei.History = nil, nil
		}
		return online, nil
	}
	l := s.loaders(ctx)
	// The office load also proves the tax id is registered: the regime is
	// per company, but the lookup is by office.
	office := l.Offices.Load(ctx, string(q.TaxID))
	var history func() (db.SimplesHistory, error)
	if q.History {
		history = l.SimplesHistory.Load(ctx, string(q.TaxID.Root()))
	}
	o, err := office()
	if err != nil {
		return model.SimplesRecord{}, storeErr(err, fault.MsgTaxIDNotFound)
	}
	rec := model.SimplesRecord{
		Updated: o.Updated,
		TaxID:   o.TaxID,
		Root:    o.Root,
		Simples: *o.Company.Simples,
		Simei:   *o.Company.Simei,
	}
	if history != nil {
		h, err := history()
		if err != nil {
			return model.SimplesRecord{}, storeErr(err, "")
		}
		rec.Simples.History = append([]model.SimplesPeriod{}, h.Simples...)
		rec.Simei.History = append([]model.SimplesPeriod{}, h.Simei...)
	}
	return rec, nil
}

// Company is the company lookup: company, Simples, members and offices.
func (s *Service) Company(ctx context.Context, root cnpj.Root) (model.Company, error) {
	if _, err := s.snapshot(ctx); err != nil {
		return model.Company{}, err
	}
	l := s.loaders(ctx)
	company := l.Companies.Load(ctx, string(root))
	members := l.Members.Load(ctx, string(root))
	offices := l.CompanyOffices.Load(ctx, string(root))
	c, err := company()
	if err != nil {
		return model.Company{}, storeErr(err, fault.MsgCompanyNotFound)
	}
	if c.Members, err = members(); err != nil {
		return model.Company{}, storeErr(err, "")
	}
	if c.Offices, err = offices(); err != nil {
		return model.Company{}, storeErr(err, "")
	}
	return c, nil
}

// CompanyAlone is the company without its members and offices: GraphQL
// loads those through its own edges (and pages the offices), only when the
// query selects them.
func (s *Service) CompanyAlone(ctx context.Context, root cnpj.Root) (model.Company, error) {
	if _, err := s.snapshot(ctx); err != nil {
		return model.Company{}, err
	}
	c, err := s.loaders(ctx).Companies.Load(ctx, string(root))()
	if err != nil {
		return model.Company{}, storeErr(err, fault.MsgCompanyNotFound)
	}
	return c, nil
}

// Person is the person lookup: the person and their roles in companies.
func (s *Service) Person(ctx context.Context, id string) (model.Person, error) {
	if _, err := s.snapshot(ctx); err != nil {
		return model.Person{}, err
	}
	l := s.loaders(ctx)
	person := l.Persons.Load(ctx, id)
	memberships := l.Memberships.Load(ctx, id)
	p, err := person()
	if err != nil {
		return model.Person{}, storeErr(err, fault.MsgPersonNotFound)
	}
	if p.Membership, err = memberships(); err != nil {
		return model.Person{}, storeErr(err, "")
	}
	return p, nil
}

// Ready reports the live snapshot, asking the database now: it fails when
// the database is unreachable or nothing has been imported.
func (s *Service) Ready(ctx context.Context) (db.Snapshot, error) {
	snap, err := db.LiveSnapshot(ctx, s.store.DB)
	if err != nil {
		return db.Snapshot{}, storeErr(err, "")
	}
	return snap, nil
}
