package graphqlapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/graphqlapi"
)

// TestOfficePagination walks a company's offices page by page with the
// cursors and finds exactly the REST company lookup's list, in its order.
func TestOfficePagination(t *testing.T) {
	s := newServer(t, serverOptions{})
	const q = `query($id: ID!, $after: String) { company(id: $id) {
		offices(first: 7, after: $after) { totalCount nodes { taxId } edges { cursor }
			pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`
	var got []string
	vars := map[string]any{"id": dbtest.BigRoot}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
		r := s.post(t, q, vars)
		r.ok(t)
		conn := at(t, r.Data, "company", "offices")
		if n := at(t, conn, "totalCount"); n != json.Number("31") {
			t.Fatalf("totalCount = %v, want 31", n)
		}
		nodes := at(t, conn, "nodes").([]any)
		for _, n := range nodes {
			got = append(got, at(t, n, "taxId").(string))
		}
		edges := at(t, conn, "edges").([]any)
		if len(edges) == 0 || at(t, conn, "pageInfo", "startCursor") != at(t, edges[0], "cursor") ||
			at(t, conn, "pageInfo", "endCursor") != at(t, edges[len(edges)-1], "cursor") ||
			at(t, conn, "pageInfo", "hasPreviousPage") != (pages > 0) {
			t.Fatalf("page %d: pageInfo %v, edges %v", pages, at(t, conn, "pageInfo"), edges)
		}
		if at(t, conn, "pageInfo", "hasNextPage") != true {
			if len(nodes) == 0 || len(nodes) > 7 {
				t.Fatalf("last page has %d offices", len(nodes))
			}
			break
		}
		if len(nodes) != 7 {
			t.Fatalf("a full page has %d offices", len(nodes))
		}
		vars["after"] = at(t, conn, "pageInfo", "endCursor")
	}
	// The REST company lookup lists the same offices in the same order.
	req := s.restGet(t, "/company/"+dbtest.BigRoot)
	var company struct {
		Offices []struct{ TaxID string } `json:"offices"`
	}
	if err := json.Unmarshal(req, &company); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(company.Offices) {
		t.Fatalf("paged %d offices, REST lists %d", len(got), len(company.Offices))
	}
	for i := range got {
		if got[i] != company.Offices[i].TaxID {
			t.Fatalf("office %d: paged %s, REST %s", i, got[i], company.Offices[i].TaxID)
		}
	}
}

// TestMembershipPagination walks the memberships of a person who is a
// member of 23 companies, twice of one of them, page by page with the
// cursors, and finds exactly the REST person lookup's list, in its order;
// the pages of many persons are one statement.
func TestMembershipPagination(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	p := dbtest.Person{Type: "NATURAL", TaxID: "***765432**", Name: "SOCIA DE MUITAS"}
	dbtest.MustExec(t, d, `INSERT INTO cnpj.persons VALUES ($1,$2,$3,$4,'5',NULL)`, p.ID(), p.Type, p.TaxID, p.Name)
	for i := 22; i >= 0; i-- { // inserted out of order: the order is the query's
		root := fmt.Sprintf("6%07d", i)
		dbtest.MustExec(t, d, `INSERT INTO cnpj.companies VALUES ($1,$2,'2062','49',1000.00,'01',NULL)`, root, fmt.Sprintf("EMPRESA %02d LTDA", i))
		dbtest.MustExec(t, d, `INSERT INTO cnpj.members VALUES ($1,3,$2,'49','2010-01-01',NULL,NULL)`, root, p.ID())
		if i == 5 { // also her own representative's role, further down the list
			dbtest.MustExec(t, d, `INSERT INTO cnpj.members VALUES ($1,7,$2,'05','2012-01-01',NULL,NULL)`, root, p.ID())
		}
	}
	dbtest.Fold(t, d)
	s := serverOver(t, d, serverOptions{})
	const q = `query($id: ID!, $after: String) { person(id: $id) {
		membership(first: 5, after: $after) { totalCount
			edges { cursor node { role { id } company { id name } } }
			pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } } }`
	type item struct{ root, role string }
	var got []item
	vars := map[string]any{"id": p.ID()}
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
		conn := at(t, s.post(t, q, vars).ok(t).Data, "person", "membership")
		if n := at(t, conn, "totalCount"); n != json.Number("24") {
			t.Fatalf("totalCount = %v, want 24", n)
		}
		edges := at(t, conn, "edges").([]any)
		for _, e := range edges {
			got = append(got, item{at(t, e, "node", "company", "id").(string), at(t, e, "node", "role", "id").(json.Number).String()})
		}
		if len(edges) == 0 || at(t, edges[len(edges)-1], "cursor") != at(t, conn, "pageInfo", "endCursor") ||
			at(t, edges[0], "cursor") != at(t, conn, "pageInfo", "startCursor") ||
			at(t, conn, "pageInfo", "hasPreviousPage") != (pages > 0) {
			t.Fatalf("page %d: pageInfo is not its edges' first and last cursors, or not after one: %v", pages, conn)
		}
		if at(t, conn, "pageInfo", "hasNextPage") != true {
			if len(edges) != 4 {
				t.Fatalf("last page has %d memberships, want 4", len(edges))
			}
			break
		}
		if len(edges) != 5 {
			t.Fatalf("a full page has %d memberships", len(edges))
		}
		vars["after"] = at(t, conn, "pageInfo", "endCursor")
	}
	// The REST person lookup lists the same memberships in the same order.
	var person struct {
		Membership []struct {
			Role    struct{ ID int }
			Company struct{ ID int }
		}
	}
	if err := json.Unmarshal(s.restGet(t, "/person/"+p.ID()), &person); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(person.Membership) {
		t.Fatalf("paged %d memberships, REST lists %d", len(got), len(person.Membership))
	}
	for i, m := range person.Membership {
		if want := (item{fmt.Sprint(m.Company.ID), fmt.Sprint(m.Role.ID)}); got[i] != want {
			t.Fatalf("membership %d: paged %v, REST %v", i, got[i], want)
		}
	}
	if got[5] != (item{"60000005", "49"}) || got[6] != (item{"60000005", "5"}) {
		t.Errorf("the two roles in company 60000005: %v", got[5:7])
	}

	// Another list's cursor, or a forged one, is a bad argument.
	for _, after := range []string{graphqlapi.OfficeCursor(dbtest.SerproBranch), "bWVtYmVyc2hpcDo2MDAwMDAwNQ"} {
		vars["after"] = after
		e := s.post(t, q, vars).only(t)
		if e.Extensions["code"] != "BAD_REQUEST" || fmt.Sprint(e.Extensions["constraints"]) != "[after must be a cursor from pageInfo.endCursor]" {
			t.Errorf("after %q: %+v", after, e)
		}
	}
	// Past the end: an empty page, not an error.
	vars["after"] = graphqlapi.MembershipCursor("99999999", 0)
	conn := at(t, s.post(t, q, vars).ok(t).Data, "person", "membership")
	if len(at(t, conn, "edges").([]any)) != 0 || at(t, conn, "pageInfo", "hasNextPage") != false || at(t, conn, "pageInfo", "endCursor") != nil {
		t.Errorf("past the end: %v", conn)
	}
}

// restGet answers a REST request through the same router.
func (s *server) restGet(t testing.TB, target string) []byte {
	t.Helper()
	r := s.do(t, httptest.NewRequest(http.MethodGet, target, nil))
	if r.status != http.StatusOK {
		t.Fatalf("%s: %d %s", target, r.status, r.raw)
	}
	return r.raw
}

// TestMembershipPageReadsWhatIsShown: a page of memberships counts the
// person's memberships only when the query shows totalCount, and reads the
// companies' Simples with the companies (their rows hold it), never from
// the Simples rows; what it shows (simples or simei, under nodes or edges,
// directly or through a fragment) is the company lookup's Simples, and the
// count the person's memberships.
func TestMembershipPageReadsWhatIsShown(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	p := dbtest.Person{Type: "NATURAL", TaxID: "***765433**", Name: "SOCIA DE DUAS"}
	dbtest.MustExec(t, d, `INSERT INTO cnpj.persons VALUES ($1,$2,$3,$4,'5',NULL)`, p.ID(), p.Type, p.TaxID, p.Name)
	roots := []string{dbtest.AlphaRoot, dbtest.SerproRoot} // both with a Simples row
	for _, root := range roots {
		dbtest.MustExec(t, d, `INSERT INTO cnpj.members VALUES ($1,9,$2,'49','2010-01-01',NULL,NULL)`, root, p.ID())
	}
	dbtest.Fold(t, d)
	s := serverOver(t, d, serverOptions{})
	vars := map[string]any{"id": p.ID()}
	// The oracle: each company's Simples as its own lookup reads them.
	want := map[string]any{}
	for _, root := range roots {
		r := s.post(t, `query($id: ID!) { company(id: $id) { simples { optant since } simei { optant since } } }`,
			map[string]any{"id": root}).ok(t)
		want[root] = at(t, r.Data, "company")
	}
	// The page statements of a query: one, unless a slow run splits the
	// last case's two pages into two batches.
	pageStatements := func() string {
		t.Helper()
		var found []string
		for _, q := range s.takeSQL() {
			if strings.Contains(q, "WITH ORDINALITY AS k(person_id") {
				found = append(found, q)
			}
		}
		if len(found) == 0 {
			t.Fatal("no membership page statement")
		}
		return strings.Join(found, "\n")
	}
	const counts, joinsSimples = "count(*)", ".simples s ON"
	for _, c := range []struct {
		name, query    string
		total, simples bool
		companies      func(conn any) []any // the page's companies
	}{
		{"neither", `query($id: ID!) { person(id: $id) { membership { nodes { company { id name } } } } }`, false, false, nil},
		{"totalCount", `query($id: ID!) { person(id: $id) { membership { totalCount nodes { company { id } } } } }`, true, false, nil},
		{"simples under nodes", `query($id: ID!) { person(id: $id) { membership {
			nodes { company { id simples { optant since } simei { optant since } } } } } }`, false, true,
			func(conn any) []any { return at(t, conn, "nodes").([]any) }},
		{"simei through a fragment under edges", `query($id: ID!) { person(id: $id) { membership {
			totalCount edges { node { ...M } } } } }
			fragment M on Membership { company { id simples { optant since } simei { optant since } } }`, true, true,
			func(conn any) []any {
				var out []any
				for _, e := range at(t, conn, "edges").([]any) {
					out = append(out, at(t, e, "node"))
				}
				return out
			}},
		{"one page of two that shows totalCount", `query($id: ID!) { person(id: $id) {
			membership { totalCount } lean: membership(first: 1) { nodes { company { id } } } } }`, true, false, nil},
	} {
		s.takeSQL()
		conn := at(t, s.post(t, c.query, vars).ok(t).Data, "person", "membership")
		q := pageStatements()
		if got := strings.Contains(q, counts); got != c.total {
			t.Errorf("%s: the statement counts: %v, want %v", c.name, got, c.total)
		}
		if strings.Contains(q, joinsSimples) {
			t.Errorf("%s: the statement joins the Simples rows", c.name)
		}
		if c.total {
			if n := at(t, conn, "totalCount"); n != json.Number("2") {
				t.Errorf("%s: totalCount = %v, want 2", c.name, n)
			}
		}
		if c.companies == nil {
			continue
		}
		nodes := c.companies(conn)
		if len(nodes) != len(roots) {
			t.Fatalf("%s: %d memberships, want %d", c.name, len(nodes), len(roots))
		}
		for _, n := range nodes {
			company := at(t, n, "company").(map[string]any)
			id := company["id"].(string)
			for _, f := range []string{"simples", "simei"} {
				if got, w := fmt.Sprint(company[f]), fmt.Sprint(at(t, want[id], f)); got != w {
					t.Errorf("%s: company %s %s = %s, the company lookup %s", c.name, id, f, got, w)
				}
			}
		}
	}
}
