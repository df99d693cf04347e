package graphqlapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// TestOfficePagination walks a company's offices page by page with the
// cursors and finds exactly the REST company lookup's list, in its order.
func TestOfficePagination(t *testing.T) {
	s := newServer(t, serverOptions{})
	const q = `query($id: ID!, $after: String) { company(id: $id) {
		offices(first: 7, after: $after) { totalCount nodes { taxId } pageInfo { hasNextPage endCursor } } } }`
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

// restGet answers a REST request through the same router.
func (s *server) restGet(t testing.TB, target string) []byte {
	t.Helper()
	r := s.do(t, httptest.NewRequest(http.MethodGet, target, nil))
	if r.status != http.StatusOK {
		t.Fatalf("%s: %d %s", target, r.status, r.raw)
	}
	return r.raw
}
