package loaders_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/loaders"
)

func setup(t *testing.T) (*loaders.Loaders, *atomic.Int64, context.Context) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	var n atomic.Int64
	store := db.NewStore(d, db.StoreOptions{OnQuery: func(string) { n.Add(1) }})
	ctx := context.Background()
	if _, err := store.Catalog.Current(ctx); err != nil {
		t.Fatal(err)
	}
	// A window long enough that the tests' concurrent loads join one batch
	// on a loaded machine under -race (100 ms split a GraphQL test's level).
	return loaders.NewWithWait(store, 300*time.Millisecond), &n, ctx
}

// TestBatching: 100 concurrent office loads, found and missing mixed, cost
// one statement; each caller gets its own office or a typed not-found.
// They are more than a batch's input queue holds (64): loads that find it
// full wait, and still join the batch.
func TestBatching(t *testing.T) {
	l, n, ctx := setup(t)
	var keys []string
	for i := 1; i <= dbtest.BigOffices; i++ {
		keys = append(keys, string(cnpj.Build(dbtest.BigRoot, fmt.Sprintf("%04d", i))))
	}
	keys = append(keys, dbtest.SerproHead, dbtest.SerproBranch, dbtest.AlphaTaxID)
	for i := 0; i < 66; i++ {
		keys = append(keys, string(cnpj.Build("99999999", fmt.Sprintf("%04d", i+1))))
	}
	if len(keys) != 100 {
		t.Fatalf("%d keys", len(keys))
	}
	var wg sync.WaitGroup
	errs := make([]error, len(keys))
	got := make([]string, len(keys))
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, err := l.Offices.Load(ctx, k)()
			got[i], errs[i] = o.TaxID, err
		}()
	}
	wg.Wait()
	if n.Load() != 1 {
		t.Errorf("%d statements for %d concurrent loads, want 1", n.Load(), len(keys))
	}
	for i, k := range keys {
		missing := k == dbtest.SerproHead || k[:8] == "99999999"
		var nf *db.NotFoundError
		switch {
		case missing && !errors.As(errs[i], &nf):
			t.Errorf("%s: err %v, want not found", k, errs[i])
		case !missing && (errs[i] != nil || got[i] != k):
			t.Errorf("%s: got %q, %v", k, got[i], errs[i])
		}
	}
}

// TestLevels: a lookup two levels deep for many keys costs one statement
// per level, and 1:N loads of keys without rows give empty values.
func TestLevels(t *testing.T) {
	l, n, ctx := setup(t)
	roots := []string{dbtest.SerproRoot, dbtest.BigRoot, dbtest.AlphaRoot, dbtest.OKBRRoot, dbtest.AbroadRoot, "99999999"}
	members, _ := l.Members.LoadMany(ctx, roots)()
	offices, _ := l.CompanyOffices.LoadMany(ctx, roots)()
	if n.Load() != 2 {
		t.Fatalf("%d statements for two levels", n.Load())
	}
	want := []int{6, dbtest.BigMembers, 1, 1, 0, 0}
	for i := range roots {
		if len(members[i]) != want[i] {
			t.Errorf("%s: %d members, want %d", roots[i], len(members[i]), want[i])
		}
	}
	if len(offices[1]) != dbtest.BigOffices || len(offices[3]) != 0 {
		t.Errorf("offices: %d, %d", len(offices[1]), len(offices[3]))
	}
	// Members keep the dump's order.
	for i, m := range members[0] {
		if m.Person.Name != dbtest.SerproMembers[i].Person.Name {
			t.Errorf("member %d: %s", i, m.Person.Name)
		}
	}
	// Next level: every member's person, memberships and a page of them,
	// one statement each.
	var ids []string
	var pageKeys []db.MembershipPageKey
	for _, ms := range members {
		for _, m := range ms {
			ids = append(ids, m.Person.ID)
			pageKeys = append(pageKeys, db.MembershipPageKey{PersonID: m.Person.ID, First: 1})
		}
	}
	before := n.Load()
	persons := l.Persons.LoadMany(ctx, ids)
	memberships := l.Memberships.LoadMany(ctx, ids)
	pages := l.MembershipPages.LoadMany(ctx, pageKeys)
	ps, errs := persons()
	ms, _ := memberships()
	pgs, pageErrs := pages()
	if n.Load()-before != 3 {
		t.Errorf("%d statements for persons, memberships and pages of %d members", n.Load()-before, len(ids))
	}
	for i := range ids {
		if errs != nil && errs[i] != nil || ps[i].ID != ids[i] || len(ms[i]) == 0 {
			t.Errorf("person %s: %+v %v", ids[i], ps[i], ms[i])
		}
		// A page of one: the first membership, and whether more follow.
		p := pgs[i]
		if pageErrs != nil && pageErrs[i] != nil || p.Total != len(ms[i]) || len(p.Memberships) != 1 ||
			p.Memberships[0].Company.Root != ms[i][0].Company.Root || p.HasNext != (len(ms[i]) > 1) {
			t.Errorf("person %s: page %+v, memberships %d", ids[i], p, len(ms[i]))
		}
	}
	// A second load of the same keys is served from the request's cache.
	before = n.Load()
	_, _ = l.Persons.Load(ctx, ids[0])()
	if n.Load() != before {
		t.Errorf("cached key cost a statement")
	}
}

func TestCompaniesAndHistory(t *testing.T) {
	l, n, ctx := setup(t)
	company := l.Companies.Load(ctx, dbtest.AlphaRoot)
	missing := l.Companies.Load(ctx, "99999999")
	history := l.SimplesHistory.Load(ctx, dbtest.AlphaRoot)
	none := l.SimplesHistory.Load(ctx, dbtest.SerproRoot)
	c, err := company()
	if err != nil || c.Name != "ALFA NUMERICA TECNOLOGIA LTDA" || c.Simei == nil || !c.Simei.Optant {
		t.Errorf("company: %+v %v", c, err)
	}
	var nf *db.NotFoundError
	if _, err := missing(); !errors.As(err, &nf) || !nf.NotFound() {
		t.Errorf("missing company: %v", err)
	}
	h, err := history()
	if err != nil || len(h.Simples) != 2 || len(h.Simei) != 1 || !h.Simples[0].From.After(h.Simples[1].From) {
		t.Errorf("history: %+v %v", h, err)
	}
	if h, err := none(); err != nil || len(h.Simples)+len(h.Simei) != 0 {
		t.Errorf("no history: %+v %v", h, err)
	}
	if n.Load() != 2 {
		t.Errorf("%d statements, want 2", n.Load())
	}
}

// TestLazy: a request's loaders are built when the request first asks for
// them, once. A request that never does (a REST office lookup, one
// statement) does not pay for nine loaders; one that does shares one set,
// and so one cache.
func TestLazy(t *testing.T) {
	var store *db.Store // never called: nothing here loads
	bare := context.Background()
	if b, ok := loaders.Batches(bare); b || ok {
		t.Errorf("Batches without loaders = %v, %v; want false, false", b, ok)
	}
	if loaders.From(bare) != nil {
		t.Error("From without loaders is not nil")
	}
	for _, wait := range []time.Duration{0, time.Millisecond} {
		ctx := loaders.WithLazy(bare, store, wait)
		if b, ok := loaders.Batches(ctx); b != (wait > 0) || !ok {
			t.Errorf("wait %v: Batches = %v, %v", wait, b, ok)
		}
		l := loaders.From(ctx)
		if l == nil || loaders.From(ctx) != l || l.Batches() != (wait > 0) {
			t.Errorf("wait %v: From gave %p then %p, Batches %v", wait, l, loaders.From(ctx), l != nil && l.Batches())
		}
	}
	// The context and its pending set, nothing more, until From.
	allocs := testing.AllocsPerRun(100, func() {
		ctx := loaders.WithLazy(bare, store, 0)
		_, _ = loaders.Batches(ctx)
	})
	if allocs > 2 {
		t.Errorf("WithLazy and Batches: %v allocations, want at most 2 (the loaders were built)", allocs)
	}
	built := testing.AllocsPerRun(100, func() { loaders.From(loaders.WithLazy(bare, store, 0)) })
	if built < 20 {
		t.Errorf("building the loaders took %v allocations; the check above measures nothing", built)
	}
	// With keeps what it is given.
	l := loaders.NewWithWait(store, time.Millisecond)
	if got := loaders.From(loaders.With(bare, l)); got != l {
		t.Error("From(With(l)) is not l")
	}
}
