package graphqlapi_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// TestSearchCollectedPastTheWalkBudget: a search whose first page's walk
// runs out of SEARCH_WALK_BUDGET is collected, and its token (REST's next,
// GraphQL's cursors) carries that: every later page is collected at once,
// its walk not tried again. Paged through REST and GraphQL alike, the
// search gives SQL's matches in key order, each once, counted exactly by
// the first page's collect, with one page walked within the budget.
func TestSearchCollectedPastTheWalkBudget(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	dbtest.LoadExclusiveFilters(t, d)
	dbtest.WithoutActivityFacts(t, d) // walked and collected, as a sparse search it does not answer
	settings := service.DefaultSearchSettings
	// Counted up to one match: no page is collected for its count.
	settings.CountLimit, settings.CountBudget, settings.WalkBudget = 1, time.Second, time.Millisecond
	s := serverOver(t, d, serverOptions{search: &settings})

	var want []string
	if err := d.Select(&want, `SELECT tax_id FROM cnpj.offices WHERE main_activity = '9492800' AND status = '02'
		AND root IN (SELECT root FROM cnpj.simples WHERE simples_optant) ORDER BY tax_id`); err != nil {
		t.Fatal(err)
	}
	if len(want) != 4 {
		t.Fatalf("%d offices written, want 4", len(want))
	}
	activity := strconv.Itoa(dbtest.ExclusiveActivity)
	// walked counts the page statements run within the budget of 1 ms.
	walked := func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		n := 0
		for _, q := range s.sql {
			if strings.HasPrefix(q, "SET LOCAL statement_timeout = 1;") {
				n++
			}
		}
		s.sql = nil
		return n
	}
	walked()

	got, count := s.walk(t, "/office", "mainActivity.id.in="+activity+"&status.id.in=2&company.simples.optant.eq=true", "taxId", 1)
	if !slices.Equal(got, want) || count != len(want) {
		t.Errorf("REST: paged %v (count %d), want %v, counted exactly", got, count, want)
	}
	if n := walked(); n != 1 {
		t.Errorf("REST: %d pages walked within the budget, want 1 (the pages after it collected at once)", n)
	}

	query := `query($after: String) { searchOffices(filter: {mainActivity: {id: {in: [` + activity + `]}},
		status: {id: {in: [2]}}, company: {simples: {optant: {eq: true}}}}, first: 1, after: $after) {
		totalCount countExact nodes { taxId } pageInfo { hasNextPage endCursor } } }`
	got = nil
	var after any
	for range len(want) + 1 {
		r := s.post(t, query, map[string]any{"after": after})
		r.ok(t)
		conn := r.Data["searchOffices"].(map[string]any)
		for _, n := range conn["nodes"].([]any) {
			got = append(got, n.(map[string]any)["taxId"].(string))
		}
		if num(conn["totalCount"]) != len(want) || conn["countExact"] != true {
			t.Errorf("GraphQL: totalCount %v (exact %v), want %d exactly", conn["totalCount"], conn["countExact"], len(want))
		}
		info := conn["pageInfo"].(map[string]any)
		if info["hasNextPage"] != true {
			break
		}
		after = info["endCursor"]
	}
	if !slices.Equal(got, want) {
		t.Errorf("GraphQL: paged %v, want %v", got, want)
	}
	if n := walked(); n != 1 {
		t.Errorf("GraphQL: %d pages walked within the budget, want 1 (the pages after it collected at once)", n)
	}
}
