package graphqlapi

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/cnpjgraph/cnpjgraph/graph"
	"github.com/cnpjgraph/cnpjgraph/model"
	"github.com/cnpjgraph/cnpjgraph/service"
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

// badCursor is the sentence for an `after` that is not one of our cursors.
const badCursor = "after must be a cursor from pageInfo.endCursor"

// officePage answers Company.offices. The company's office summaries come
// from one loader batch for every company at this level; only when the
// client selects fields beyond the summary (address, phones, ...) are the
// page's offices read in full, again in one batch for the level.
func (r *Resolver) officePage(ctx context.Context, c *model.Company, first *int, after *string) (*graph.OfficeConnection, error) {
	var cs service.Constraints
	q := service.OfficePageQuery{First: cs.ParsePageSize("first", first), Full: wantsFullOffices(ctx)}
	if after != nil {
		var ok bool
		if q.After, ok = decodeCursor(*after, officeCursorPrefix); !ok {
			cs.Add(badCursor)
		}
	}
	if err := cs.Err(); err != nil {
		return nil, err
	}
	p, err := r.Service.CompanyOffices(ctx, c, q)
	if err != nil {
		return nil, err
	}
	page := p.Offices
	conn := &graph.OfficeConnection{
		TotalCount: p.Total,
		Nodes:      page,
		Edges:      make([]graph.OfficeEdge, len(page)),
		PageInfo:   &graph.PageInfo{HasNextPage: p.HasNext, HasPreviousPage: after != nil},
	}
	for i := range page {
		conn.Edges[i] = graph.OfficeEdge{Cursor: OfficeCursor(page[i].TaxID), Node: &page[i]}
	}
	if len(page) > 0 {
		conn.PageInfo.StartCursor, conn.PageInfo.EndCursor = &conn.Edges[0].Cursor, &conn.Edges[len(page)-1].Cursor
	}
	return conn, nil
}

// membershipPage answers Person.membership: a page for every person of the
// level in one loader batch, each membership with its whole company.
func (r *Resolver) membershipPage(ctx context.Context, p *model.Person, first *int, after *string) (*graph.MembershipConnection, error) {
	var cs service.Constraints
	q := service.MembershipPageQuery{First: cs.ParsePageSize("first", first)}
	q.NoTotal, q.NoSimples = !selectsMembershipTotal(ctx), !selectsMembershipSimples(ctx)
	if after != nil {
		var ok bool
		if q.AfterRoot, q.AfterPosition, ok = parseMembershipCursor(*after); !ok {
			cs.Add(badCursor)
		}
	}
	if err := cs.Err(); err != nil {
		return nil, err
	}
	mp, err := r.Service.PersonMemberships(ctx, p, q)
	if err != nil {
		return nil, err
	}
	page := orEmpty(mp.Memberships)
	conn := &graph.MembershipConnection{
		TotalCount: mp.Total,
		Nodes:      page,
		Edges:      make([]graph.MembershipEdge, len(page)),
		PageInfo:   &graph.PageInfo{HasNextPage: mp.HasNext, HasPreviousPage: after != nil},
	}
	for i := range page {
		conn.Edges[i] = graph.MembershipEdge{Cursor: MembershipCursor(page[i].Company.Root, mp.Positions[i]), Node: &page[i]}
	}
	if len(page) > 0 {
		conn.PageInfo.StartCursor, conn.PageInfo.EndCursor = &conn.Edges[0].Cursor, &conn.Edges[len(page)-1].Cursor
	}
	return conn, nil
}

// selectsMembershipTotal reports whether the current MembershipConnection
// field selects totalCount, which costs a count of the person's memberships.
func selectsMembershipTotal(ctx context.Context) bool {
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{"MembershipConnection"}) {
		if f.Name == "totalCount" {
			return true
		}
	}
	return false
}

// selectsMembershipSimples reports whether the current MembershipConnection
// field selects, under nodes or edges.node, the company's simples or simei,
// which cost a read of each company's Simples row.
func selectsMembershipSimples(ctx context.Context) bool {
	op := graphql.GetOperationContext(ctx)
	for _, sel := range nodeSelections(ctx, "MembershipConnection", "MembershipEdge") {
		for _, m := range graphql.CollectFields(op, sel, []string{"Membership"}) {
			if m.Name != "company" {
				continue
			}
			for _, c := range graphql.CollectFields(op, m.Selections, []string{"Company"}) {
				if c.Name == "simples" || c.Name == "simei" {
					return true
				}
			}
		}
	}
	return false
}

// nodeSelections returns what the current connection field (of type
// connection, its edges of type edge) selects of its nodes: under nodes,
// and under edges.node.
func nodeSelections(ctx context.Context, connection, edge string) []ast.SelectionSet {
	op := graphql.GetOperationContext(ctx)
	var out []ast.SelectionSet
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{connection}) {
		switch f.Name {
		case "nodes":
			out = append(out, f.Selections)
		case "edges":
			for _, e := range graphql.CollectFields(op, f.Selections, []string{edge}) {
				if e.Name == "node" {
					out = append(out, e.Selections)
				}
			}
		}
	}
	return out
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
	for _, sel := range nodeSelections(ctx, "OfficeConnection", "OfficeEdge") {
		for _, f := range graphql.CollectFields(op, sel, []string{"Office"}) {
			if !summaryFields[f.Name] {
				return true
			}
		}
	}
	return false
}
