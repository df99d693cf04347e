// Package service is the service layer: every lookup REST and GraphQL
// serve is one method here, with its validation rules, its permission and
// price (kinds.go), and where its answer comes from (the cache strategy over
// the snapshot, the overlay and an online source, strategy.go). It loads
// through the request's dataloaders and turns store failures into faults;
// it knows nothing of HTTP, JSON shapes or GraphQL.
package service

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/internal/lru"
	"github.com/cnpjgraph/cnpjgraph/loaders"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// Service answers the lookups. Safe for concurrent use.
type Service struct {
	store   *db.Store
	source  Source
	overlay bool // the source serves some portal: the overlay is worth reading
	meter   Meter
	prices  Prices
	now     func() time.Time
	log     *slog.Logger
	flights singleflight.Group // online fetches in progress, by portal and tax id
	fetched fetchLog           // online fetches that ended lately

	answers    *lru.Cache[answerKey, *Answer] // rendered company answers; nil: none
	zips       *lru.Cache[zipKey, model.Zip]  // postal codes of the live snapshot
	answerFill singleflight.Group             // company answers being rendered

	imagery  Imagery  // nil: the map and street lookups answer 503
	geocoder Geocoder // nil: the office lookup's geocoding answers 503
	signLink SignLink // nil: the office lookup's links are not signed

	noSnapshotUntil atomic.Int64 // unix nanoseconds until which "nothing imported" holds

	searchSettings SearchSettings
	searchPlaces   chan struct{} // a search holds one while it runs (searchTurn)
	lookupPlaces   chan struct{} // a lookup request holds one while it runs (LookupTurn)
	tokensDropped  atomic.Int64  // unix nanoseconds of the last sweep of expired page tokens

	owners         Owners // nil: no accounts, every list is account 0's
	exportPageSize int
	exportsQueued  chan struct{} // an export was queued here (wakeExports)
}

// Options configures a Service.
type Options struct {
	Source Source           // the online source; nil: Offline
	Meter  Meter            // who pays; nil: Free
	Prices *Prices          // nil: DefaultPrices
	Now    func() time.Time // the clock; time.Now when nil
	Logger *slog.Logger     // nil: discard
	// CompanyCacheBytes bounds the rendered company answers kept per
	// snapshot (0: 64 MiB; negative: none).
	CompanyCacheBytes int

	// Imagery draws maps and street views; nil: those lookups answer 503.
	Imagery Imagery
	// Geocoder places addresses for the office lookup's geocoding option;
	// nil: that option answers 503.
	Geocoder Geocoder
	// SignLink signs the office lookup's links for the caller; nil: links
	// are unsigned and every type is given.
	SignLink SignLink
	// Search tunes the searches; nil: DefaultSearchSettings.
	Search *SearchSettings
	// LookupConcurrency is how many lookup requests run at once
	// (LookupTurn); 0: DefaultLookupConcurrency.
	LookupConcurrency int
	// Owners tells whose lists a request touches; nil: a server without
	// accounts.
	Owners Owners
	// ExportPageSize is the page size an export reads its list's query in
	// (0: MaxSearchLimit); tests make it small to cross pages.
	ExportPageSize int
}

// New returns a Service over store.
func New(store *db.Store, opts Options) *Service {
	s := &Service{
		store: store, source: opts.Source, meter: opts.Meter, prices: DefaultPrices,
		now: opts.Now, log: opts.Logger, imagery: opts.Imagery, geocoder: opts.Geocoder, signLink: opts.SignLink,
		fetched: newFetchLog(), owners: opts.Owners, exportsQueued: make(chan struct{}, 1),
		exportPageSize: opts.ExportPageSize,
	}
	if s.exportPageSize <= 0 || s.exportPageSize > MaxSearchLimit {
		s.exportPageSize = MaxSearchLimit
	}
	if s.source == nil {
		s.source = Offline{}
	}
	for _, p := range []string{PortalRegistry, PortalSimples, PortalRegistrations, PortalSuframa} {
		s.overlay = s.overlay || s.source.Serves(p)
	}
	s.searchSettings = DefaultSearchSettings
	if opts.Search != nil {
		s.searchSettings = *opts.Search
	}
	if s.searchSettings.Concurrency <= 0 {
		s.searchSettings.Concurrency = DefaultSearchConcurrency()
	}
	s.searchPlaces = make(chan struct{}, s.searchSettings.Concurrency)
	lookups := opts.LookupConcurrency
	if lookups <= 0 {
		lookups = DefaultLookupConcurrency()
	}
	s.lookupPlaces = make(chan struct{}, lookups)
	if s.meter == nil {
		s.meter = Free{}
	}
	if opts.Prices != nil {
		s.prices = *opts.Prices
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if n := opts.CompanyCacheBytes; n >= 0 {
		if n == 0 {
			n = 64 << 20
		}
		s.answers = lru.New[answerKey, *Answer](n)
	}
	s.zips = lru.New[zipKey, model.Zip](zipCacheEntries)
	return s
}

// Store returns the store the service reads, for the loaders middleware.
func (s *Service) Store() *db.Store { return s.store }

// Prices returns the price list the service charges.
func (s *Service) Prices() Prices { return s.prices }

// loaders returns the request's loaders; outside a request (CLI, tests) a
// call gets its own.
func (s *Service) loaders(ctx context.Context) *loaders.Loaders {
	if l := loaders.From(ctx); l != nil {
		return l
	}
	return loaders.New(s.store)
}

// batches reports whether the loaders s.loaders returns wait for concurrent
// loads, without building a request's loaders.
func (s *Service) batches(ctx context.Context) bool {
	if b, ok := loaders.Batches(ctx); ok {
		return b
	}
	return true // loaders.New's
}

// snapshot returns the codes of the live snapshot.
func (s *Service) snapshot(ctx context.Context) (*db.Codes, error) {
	codes, err := s.store.Catalog.Current(ctx)
	if err != nil {
		return nil, storeErr(err, "")
	}
	return codes, nil
}

// codes returns the live snapshot's codes, nil when nothing is imported. The
// catalog asks the database on every call while there is no snapshot; an
// edge instance, which may never import, would pay that query, serialized,
// on every lookup. So "none" is remembered for the catalog's interval: an
// import is noticed as soon as the catalog would notice a newer one.
func (s *Service) codes(ctx context.Context) (*db.Codes, error) {
	if time.Now().UnixNano() < s.noSnapshotUntil.Load() {
		return nil, nil
	}
	codes, err := s.store.Catalog.Current(ctx)
	switch {
	case err == nil:
		return codes, nil
	case errors.Is(err, db.ErrNoSnapshot):
		s.noSnapshotUntil.Store(time.Now().Add(s.store.Catalog.Interval).UnixNano())
		return nil, nil
	}
	return nil, storeErr(err, "")
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

// Ready reports the live snapshot, asking the database now: it fails when
// the database is unreachable or nothing has been imported.
func (s *Service) Ready(ctx context.Context) (db.Snapshot, error) {
	snap, err := db.LiveSnapshot(ctx, s.store.DB)
	if err != nil {
		return db.Snapshot{}, storeErr(err, "")
	}
	return snap, nil
}

// CurrentSnapshot is the id of the live snapshot as the catalog knows it,
// for caches of answers that only change with the snapshot; false when
// there is none.
func (s *Service) CurrentSnapshot(ctx context.Context) (int64, bool) {
	codes, err := s.store.Catalog.Current(ctx)
	if err != nil {
		return 0, false
	}
	return codes.Snapshot.ID, true
}
