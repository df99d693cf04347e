// Package loaders holds the per-request dataloaders: every lookup the service
// makes goes through them, so lookups started concurrently within a request
// (a GraphQL query's siblings, a REST handler's children) share one SQL
// statement per kind of key.
package loaders

import (
	"context"
	"sync"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// Wait is how long a loader collects keys before it sends its batch: long
// enough for concurrently started loads to join, short against a lookup.
const Wait = time.Millisecond

// Loaders is one request's set of loaders. Its caches live as long as the
// request, so a value is read at most once per request.
type Loaders struct {
	Offices         *dataloader.Loader[string, model.Office]                    // by tax id; with Company (no members) and Simples
	Companies       *dataloader.Loader[string, model.Company]                   // by root; with Simples
	CompanyOffices  *dataloader.Loader[string, []model.Office]                  // by root; office summaries
	OfficePages     *dataloader.Loader[db.PageKey, db.OfficePage]               // a page of a company's office summaries
	Members         *dataloader.Loader[string, []model.Member]                  // by root
	Persons         *dataloader.Loader[string, model.Person]                    // by person id
	Memberships     *dataloader.Loader[string, []model.Membership]              // by person id
	MembershipPages *dataloader.Loader[db.MembershipPageKey, db.MembershipPage] // a page of a person's memberships
	SimplesHistory  *dataloader.Loader[string, db.SimplesHistory]               // by root

	wait time.Duration
}

// Batches reports whether the loaders wait for concurrent loads to share a
// statement. A request with nothing to batch (a REST lookup) gets loaders
// that do not wait, and reads what it can in one statement of its own.
func (l *Loaders) Batches() bool { return l.wait > 0 }

// Store is what the loaders need from the database.
type Store interface {
	Offices(ctx context.Context, taxIDs []string) (map[string]model.Office, error)
	Companies(ctx context.Context, roots []string) (map[string]model.Company, error)
	CompanyOffices(ctx context.Context, roots []string) (map[string][]model.Office, error)
	CompanyOfficePages(ctx context.Context, keys []db.PageKey) (map[db.PageKey]db.OfficePage, error)
	Members(ctx context.Context, roots []string) (map[string][]model.Member, error)
	Persons(ctx context.Context, ids []string) (map[string]model.Person, error)
	Memberships(ctx context.Context, personIDs []string) (map[string][]model.Membership, error)
	MembershipPages(ctx context.Context, keys []db.MembershipPageKey) (map[db.MembershipPageKey]db.MembershipPage, error)
	SimplesPeriods(ctx context.Context, roots []string) (map[string]db.SimplesHistory, error)
}

// New returns fresh loaders over store that wait Wait for a batch.
func New(store Store) *Loaders { return NewWithWait(store, Wait) }

// NewWithWait returns fresh loaders with another batch window: tests use a
// long one so that batch counts do not depend on scheduling.
func NewWithWait(store Store, wait time.Duration) *Loaders {
	return &Loaders{
		Offices:         one(store.Offices, "office", wait),
		Companies:       one(store.Companies, "company", wait),
		CompanyOffices:  many(store.CompanyOffices, wait),
		OfficePages:     many(store.CompanyOfficePages, wait),
		Members:         many(store.Members, wait),
		Persons:         one(store.Persons, "person", wait),
		Memberships:     many(store.Memberships, wait),
		MembershipPages: many(store.MembershipPages, wait),
		SimplesHistory:  many(store.SimplesPeriods, wait),
		wait:            wait,
	}
}

// one builds a loader for a 1:1 relation: a key without a row gets a typed
// not-found error.
func one[V any](fetch func(context.Context, []string) (map[string]V, error), what string, wait time.Duration) *dataloader.Loader[string, V] {
	batch := func(ctx context.Context, keys []string) []*dataloader.Result[V] {
		found, err := fetch(ctx, keys)
		results := make([]*dataloader.Result[V], len(keys))
		for i, k := range keys {
			switch v, ok := found[k]; {
			case err != nil:
				results[i] = &dataloader.Result[V]{Error: err}
			case !ok:
				results[i] = &dataloader.Result[V]{Error: &db.NotFoundError{What: what, Key: k}}
			default:
				results[i] = &dataloader.Result[V]{Data: v}
			}
		}
		return results
	}
	return dataloader.NewBatchedLoader(batch, options[string, V](wait)...)
}

// many builds a loader for a 1:N relation (or a value that defaults to its
// zero): a key without rows gets the zero value, never an error.
func many[K comparable, V any](fetch func(context.Context, []K) (map[K]V, error), wait time.Duration) *dataloader.Loader[K, V] {
	batch := func(ctx context.Context, keys []K) []*dataloader.Result[V] {
		found, err := fetch(ctx, keys)
		results := make([]*dataloader.Result[V], len(keys))
		for i, k := range keys {
			if err != nil {
				results[i] = &dataloader.Result[V]{Error: err}
				continue
			}
			results[i] = &dataloader.Result[V]{Data: found[k]}
		}
		return results
	}
	return dataloader.NewBatchedLoader(batch, options[K, V](wait)...)
}

func options[K comparable, V any](wait time.Duration) []dataloader.Option[K, V] {
	return []dataloader.Option[K, V]{
		dataloader.WithWait[K, V](wait),
		// A batch for a huge GraphQL list is split so one statement's
		// array parameter stays reasonable.
		dataloader.WithBatchCapacity[K, V](1000),
		// Each batch allocates its input queue whole: the library's 1,000
		// slots are 8 KB per batch, the largest single allocation of a
		// nested GraphQL query. A load that finds the queue full waits for
		// the batch to take the keys in.
		dataloader.WithInputCapacity[K, V](64),
	}
}

type ctxKey struct{}

// pending is a request's loaders, built on first use: most REST requests
// (an office lookup reads everything in one statement) never use theirs,
// and nine loaders are ~50 allocations a request. It also keeps the sole
// memberships the request's office lookups learnt (NoteSole).
type pending struct {
	store Store
	wait  time.Duration
	once  sync.Once
	l     *Loaders

	mu   sync.Mutex
	sole map[string]db.SoleMembership
}

// NoteSole records, for the rest of the request, persons' only
// memberships (by person id), which their first pages are (Sole). A
// context without loaders keeps nothing.
func NoteSole(ctx context.Context, sole map[string]db.SoleMembership) {
	p, _ := ctx.Value(ctxKey{}).(*pending)
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sole == nil {
		p.sole = make(map[string]db.SoleMembership, len(sole))
	}
	for id, m := range sole {
		p.sole[id] = m
	}
}

// Sole is a person's only membership as noted in this request (NoteSole).
func Sole(ctx context.Context, personID string) (db.SoleMembership, bool) {
	p, _ := ctx.Value(ctxKey{}).(*pending)
	if p == nil {
		return db.SoleMembership{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.sole[personID]
	return m, ok
}

func (p *pending) get() *Loaders {
	p.once.Do(func() {
		if p.l == nil {
			p.l = NewWithWait(p.store, p.wait)
		}
	})
	return p.l
}

// With returns a context carrying l.
func With(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, ctxKey{}, &pending{wait: l.wait, l: l})
}

// WithLazy returns a context carrying loaders over store with the batch
// window wait, built when the request first asks for them (From).
func WithLazy(ctx context.Context, store Store, wait time.Duration) context.Context {
	return context.WithValue(ctx, ctxKey{}, &pending{store: store, wait: wait})
}

// From returns the request's loaders, or nil.
func From(ctx context.Context) *Loaders {
	if p, _ := ctx.Value(ctxKey{}).(*pending); p != nil {
		return p.get()
	}
	return nil
}

// Batches reports whether the request's loaders wait for concurrent loads
// (Loaders.Batches) without building them; ok is false when ctx has none.
func Batches(ctx context.Context) (batches, ok bool) {
	p, _ := ctx.Value(ctxKey{}).(*pending)
	if p == nil {
		return false, false
	}
	return p.wait > 0, true
}
