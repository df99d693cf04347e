package graphqlapi

import (
	"context"
	"strconv"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/graph"
	"github.com/cnpjgraph/cnpjgraph/model"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// Resolver is the root of the GraphQL resolvers (the *.resolvers.go files,
// laid out by gqlgen after schema/*.graphqls). They are thin: root fields
// parse their arguments with the same Constraints as REST and call the same
// service methods; edge fields call the service's edge methods, which
// decide whether reaching the edge is a lookup of its own.
type Resolver struct {
	Service *service.Service
}

// cacheArgs reads strategy, maxAge and maxStale as REST's params.cache does,
// with the same sentences.
func cacheArgs(cs *service.Constraints, strategy *graph.Strategy, maxAge, maxStale *int) service.CacheQuery {
	q := service.DefaultCache()
	if strategy != nil {
		q.Strategy = cs.ParseStrategy("strategy", string(*strategy))
	}
	if maxAge != nil {
		q.AgeSet = true
		if n, ok := cs.ParseDays("maxAge", strconv.Itoa(*maxAge)); ok {
			q.MaxAge = n
		}
	}
	if maxStale != nil {
		if n, ok := cs.ParseDays("maxStale", strconv.Itoa(*maxStale)); ok {
			q.MaxStale = n
		}
	}
	cs.CheckCache(q)
	return q
}

// officeArgs reads the options shared by `office` and `offices`.
func officeArgs(cs *service.Constraints, simples *bool, registrations []string, strategy *graph.Strategy, maxAge, maxStale *int) service.OfficeQuery {
	return service.OfficeQuery{
		Simples:       simples != nil && *simples,
		Registrations: cs.ParseRegistrations("registrations", registrations),
		Cache:         cacheArgs(cs, strategy, maxAge, maxStale),
	}
}

// officeList answers `offices`: one office lookup per tax id, all started
// at once so that their loads share one batch per kind. A failed item is
// null with its own error at its index; the others still answer.
func (r *queryResolver) officeList(ctx context.Context, taxIDs []string, base service.OfficeQuery, cs service.Constraints) ([]*model.Office, error) {
	if len(taxIDs) > service.MaxOffices {
		cs.Add(service.OfficesRule)
	}
	ids := make([]cnpj.CNPJ, len(taxIDs))
	for i, s := range taxIDs {
		ids[i] = cs.ParseTaxID("taxIds["+strconv.Itoa(i)+"]", s)
	}
	if err := cs.Err(); err != nil {
		return nil, err
	}
	out := make([]*model.Office, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			q := base
			q.TaxID = id
			o, err := r.Service.Office(ctx, q)
			if err != nil {
				errs[i] = err
				return
			}
			out[i] = &o
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			graphql.AddError(ctx, AtIndex(ctx, i, err))
		}
	}
	return out, nil
}

// AtIndex places err at item i of the current list field. The error
// presenter still classifies the cause (Err), so the client sees the
// fault's public message, not err's text.
func AtIndex(ctx context.Context, i int, err error) *gqlerror.Error {
	return &gqlerror.Error{
		Err:     err,
		Message: err.Error(),
		Path:    append(graphql.GetPath(ctx), ast.PathIndex(i)),
	}
}

// registryRecord presents the registry lookup's answer in the registry's
// own shape, company-level fields lifted to the top as REST's /rfb does.
func registryRecord(o model.Office) *graph.RegistryRecord {
	c := o.Company
	regs := o.Registrations
	if regs == nil {
		regs = []model.Registration{}
	}
	members := c.Members
	if members == nil {
		members = []model.Member{}
	}
	status, activity, address := o.Status, o.MainActivity, o.Address
	nature := c.Nature
	return &graph.RegistryRecord{
		Updated:        o.Updated,
		TaxID:          o.TaxID,
		Name:           c.Name,
		Alias:          o.Alias,
		Founded:        o.Founded,
		Jurisdiction:   c.Jurisdiction,
		Equity:         c.Equity,
		Head:           o.Head,
		Nature:         &nature,
		Size:           c.Size,
		StatusDate:     o.StatusDate,
		Status:         &status,
		Reason:         o.Reason,
		SpecialDate:    o.SpecialDate,
		Special:        o.Special,
		Address:        &address,
		Phones:         o.Phones,
		Emails:         o.Emails,
		MainActivity:   &activity,
		SideActivities: o.SideActivities,
		Registrations:  regs,
		Members:        members,
	}
}

// orEmpty keeps a non-null list non-null when a 1:N loader found no rows.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
