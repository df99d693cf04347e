package resolvers

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/graph"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// Resolver is the root of the GraphQL resolvers (the *.resolvers.go files,
// laid out by gqlgen after schema/*.graphqls). Root fields parse their
// arguments with the same Constraints as REST and call the same Service
// methods; edge fields load through the request's dataloaders.
type Resolver struct {
	Service *Service
}

// Limits of list arguments.
const (
	// MaxOffices is how many tax ids one `offices` field may ask for.
	MaxOffices = 100
	// DefaultPageSize and MaxPageSize bound Company.offices pages.
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// cacheArgs reads strategy, maxAge and maxStale as REST's params.cache does,
// with the same sentences.
func cacheArgs(cs *Constraints, strategy *graph.Strategy, maxAge, maxStale *int) CacheQuery {
	q := DefaultCache()
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
func officeArgs(cs *Constraints, simples *bool, registrations []string, strategy *graph.Strategy, maxAge, maxStale *int) OfficeQuery {
	return OfficeQuery{
		Simples:       simples != nil && *simples,
		Registrations: cs.ParseRegistrations("registrations", registrations),
		Cache:         cacheArgs(cs, strategy, maxAge, maxStale),
	}
}

// OfficesRule is the sentence for an `offices` list that is too long.
var OfficesRule = "taxIds must contain at most " + strconv.Itoa(MaxOffices) + " tax ids"

// officeList answers `offices`: one office lookup per tax id, all started
// at once so that their loads share one batch per kind. A failed item is
// null with its own error at its index; the others still answer.
func (r *queryResolver) officeList(ctx context.Context, taxIDs []string, base OfficeQuery, cs Constraints) ([]*model.Office, error) {
	if len(taxIDs) > MaxOffices {
		cs.Add(OfficesRule)
	}
	ids := make([]cnpj.CNPJ, len(taxIDs))
	for i, s := range taxIDs {
		ids[i] = cs.ParseTaxID("taxIds["+strconv.Itoa(i)+"]", s)
	}
	if len(cs) > 0 {
		return nil, fault.Invalid(cs...)
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

// company loads a company by root through the request's loader.
func (r *Resolver) company(ctx context.Context, root string) (*model.Company, error) {
	c, err := r.Service.loaders(ctx).Companies.Load(ctx, root)()
	if err != nil {
		return nil, storeErr(err, fault.MsgCompanyNotFound)
	}
	return &c, nil
}

// Cursors are opaque to clients; inside they are the office's tax id, so a
// page starts after it even when offices were added or removed since.
const cursorPrefix = "office:"

// OfficeCursor is the cursor of the office with taxID.
func OfficeCursor(taxID string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + taxID))
}

func parseCursor(s string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
		return "", false
	}
	return strings.TrimPrefix(string(b), cursorPrefix), true
}

// officePage answers Company.offices. The company's office summaries come
// from one loader batch for every company at this level; only when the
// client selects fields beyond the summary (address, phones, ...) are the
// page's offices loaded in full, again in one batch for the level.
func (r *Resolver) officePage(ctx context.Context, root string, first *int, after *string) (*graph.OfficeConnection, error) {
	var cs Constraints
	n := DefaultPageSize
	if first != nil {
		n = *first
		if n < 1 || n > MaxPageSize {
			cs.Add(fmt.Sprintf("first must be between 1 and %d", MaxPageSize))
		}
	}
	var afterTaxID string
	if after != nil {
		var ok bool
		if afterTaxID, ok = parseCursor(*after); !ok {
			cs.Add("after must be a cursor from pageInfo.endCursor")
		}
	}
	if len(cs) > 0 {
		return nil, fault.Invalid(cs...)
	}
	l := r.Service.loaders(ctx)
	// Only the page is read, never the company's thousands of offices.
	p, err := l.OfficePages.Load(ctx, db.PageKey{Root: root, After: afterTaxID, First: n})()
	if err != nil {
		return nil, storeErr(err, "")
	}
	page := p.Offices
	if len(page) > 0 && wantsFullOffices(ctx) {
		keys := make([]string, len(page))
		for i, o := range page {
			keys[i] = o.TaxID
		}
		full, errs := l.Offices.LoadMany(ctx, keys)()
		for _, err := range errs {
			if err != nil {
				return nil, storeErr(err, "")
			}
		}
		page = full
	}
	conn := &graph.OfficeConnection{
		TotalCount: p.Total,
		Nodes:      page,
		Edges:      make([]graph.OfficeEdge, len(page)),
		PageInfo:   &graph.PageInfo{HasNextPage: p.HasNext},
	}
	for i := range page {
		conn.Edges[i] = graph.OfficeEdge{Cursor: OfficeCursor(page[i].TaxID), Node: &page[i]}
	}
	if len(page) > 0 {
		c := OfficeCursor(page[len(page)-1].TaxID)
		conn.PageInfo.EndCursor = &c
	}
	return conn, nil
}

// summaryFields are the Office fields an office summary (the company's
// office list) carries; company resolves by root on its own.
var summaryFields = map[string]bool{
	"__typename": true, "updated": true, "taxId": true, "alias": true, "founded": true, "head": true,
	"statusDate": true, "status": true, "reason": true, "mainActivity": true, "company": true,
}

// wantsFullOffices reports whether the current OfficeConnection field
// selects, under nodes or edges.node, an Office field the summary lacks.
func wantsFullOffices(ctx context.Context) bool {
	op := graphql.GetOperationContext(ctx)
	beyond := func(sel ast.SelectionSet) bool {
		for _, f := range graphql.CollectFields(op, sel, []string{"Office"}) {
			if !summaryFields[f.Name] {
				return true
			}
		}
		return false
	}
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{"OfficeConnection"}) {
		switch f.Name {
		case "nodes":
			if beyond(f.Selections) {
				return true
			}
		case "edges":
			for _, e := range graphql.CollectFields(op, f.Selections, []string{"OfficeEdge"}) {
				if e.Name == "node" && beyond(e.Selections) {
					return true
				}
			}
		}
	}
	return false
}

// orEmpty keeps a non-null list non-null when a 1:N loader found no rows.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
