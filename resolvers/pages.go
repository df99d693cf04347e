package resolvers

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/graph"
)

// Cursors are opaque to clients; inside they name the item's place in the
// list's order (an office's tax id; a membership's company root and
// position), so a page starts after it even when items were added or
// removed since.
const (
	officeCursorPrefix     = "office:"
	membershipCursorPrefix = "membership:"
)

// OfficeCursor is the cursor of the office with taxID.
func OfficeCursor(taxID string) string { return encodeCursor(officeCursorPrefix + taxID) }

// MembershipCursor is the cursor of a membership in the company with root,
// at position among that company's members.
func MembershipCursor(root string, position int) string {
	return encodeCursor(membershipCursorPrefix + root + ":" + strconv.Itoa(position))
}

func encodeCursor(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// decodeCursor returns what follows prefix inside cursor s.
func decodeCursor(s, prefix string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || !strings.HasPrefix(string(b), prefix) {
		return "", false
	}
	return strings.TrimPrefix(string(b), prefix), true
}

// parseMembershipCursor returns the company root and position a membership
// cursor holds.
func parseMembershipCursor(s string) (root string, position int, ok bool) {
	rest, ok := decodeCursor(s, membershipCursorPrefix)
	if !ok {
		return "", 0, false
	}
	root, pos, ok := strings.Cut(rest, ":")
	position, err := strconv.Atoi(pos)
	if !ok || root == "" || err != nil || position < 0 {
		return "", 0, false
	}
	return root, position, true
}

// pageSize reads a connection's `first` argument.
func pageSize(cs *Constraints, first *int) int {
	if first == nil {
		return DefaultPageSize
	}
	if *first < 1 || *first > MaxPageSize {
		cs.Add(fmt.Sprintf("first must be between 1 and %d", MaxPageSize))
	}
	return *first
}

// badCursor is the sentence for an `after` that is not one of our cursors.
const badCursor = "after must be a cursor from pageInfo.endCursor"

// officePage answers Company.offices. The company's office summaries come
// from one loader batch for every company at this level; only when the
// client selects fields beyond the summary (address, phones, ...) are the
// page's offices loaded in full, again in one batch for the level.
func (r *Resolver) officePage(ctx context.Context, root string, first *int, after *string) (*graph.OfficeConnection, error) {
	var cs Constraints
	key := db.PageKey{Root: root, First: pageSize(&cs, first)}
	if after != nil {
		var ok bool
		if key.After, ok = decodeCursor(*after, officeCursorPrefix); !ok {
			cs.Add(badCursor)
		}
	}
	if len(cs) > 0 {
		return nil, fault.Invalid(cs...)
	}
	l := r.Service.loaders(ctx)
	// Only the page is read, never the company's thousands of offices.
	p, err := l.OfficePages.Load(ctx, key)()
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
		conn.PageInfo.EndCursor = &conn.Edges[len(page)-1].Cursor
	}
	return conn, nil
}

// membershipPage answers Person.membership: a page for every person of the
// level in one loader batch, each membership with its whole company.
func (r *Resolver) membershipPage(ctx context.Context, personID string, first *int, after *string) (*graph.MembershipConnection, error) {
	var cs Constraints
	key := db.MembershipPageKey{PersonID: personID, First: pageSize(&cs, first)}
	if after != nil {
		var ok bool
		if key.AfterRoot, key.AfterPosition, ok = parseMembershipCursor(*after); !ok {
			cs.Add(badCursor)
		}
	}
	if len(cs) > 0 {
		return nil, fault.Invalid(cs...)
	}
	p, err := r.Service.loaders(ctx).MembershipPages.Load(ctx, key)()
	if err != nil {
		return nil, storeErr(err, "")
	}
	page := orEmpty(p.Memberships)
	conn := &graph.MembershipConnection{
		TotalCount: p.Total,
		Nodes:      page,
		Edges:      make([]graph.MembershipEdge, len(page)),
		PageInfo:   &graph.PageInfo{HasNextPage: p.HasNext},
	}
	for i := range page {
		conn.Edges[i] = graph.MembershipEdge{Cursor: MembershipCursor(page[i].Company.Root, p.Positions[i]), Node: &page[i]}
	}
	if len(page) > 0 {
		conn.PageInfo.EndCursor = &conn.Edges[len(page)-1].Cursor
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
