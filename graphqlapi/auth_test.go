package graphqlapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/graphqlapi"
	"github.com/cnpjgraph/cnpjgraph/resolvers"
	"github.com/cnpjgraph/cnpjgraph/rest"
)

// TestQueriesArePricedAndLimited checks that a GraphQL query counts and
// pays as the REST requests it stands for: batching lookups into one query
// must not bypass the per-minute rate, the credits or the permissions.
func TestQueriesArePricedAndLimited(t *testing.T) {
	ctx := context.Background()
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	a, err := auth.New(ctx, auth.Config{DB: d, Costs: auth.DefaultCosts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	svc := resolvers.New(db.NewStore(d, db.StoreOptions{}), resolvers.Options{Now: func() time.Time { return now }})
	// online=true: as with an upstream configured, lookups may cost credits.
	h := rest.NewRouter(rest.Deps{Service: svc,
		Authenticate: a.Middleware(auth.PermissionFor, rest.RenderError),
		Mount:        graphqlapi.Mount(graphqlapi.Options{Service: svc, Meter: graphqlapi.AuthMeter(true, 1)})})

	if err := auth.SetPlan(ctx, d, auth.Plan{Name: "tiny", CreditsPerDay: 3, RequestsPerMinute: 9}); err != nil {
		t.Fatal(err)
	}
	acct, err := auth.CreateAccount(ctx, d, "graphql", "tiny", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := auth.AddKey(ctx, d, acct.ID, "all", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, noOffice, err := auth.AddKey(ctx, d, acct.ID, "no office", []string{auth.ReadGraphQL, auth.ReadCompany})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		StatusCode int
		Header     http.Header
	}
	post := func(credential, query string) (result, map[string]any) {
		body, _ := json.Marshal(map[string]string{"query": query})
		req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", credential)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var out map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &out)
		return result{rec.Code, rec.Header()}, out
	}
	code := func(out map[string]any) string {
		errs, _ := out["errors"].([]any)
		if len(errs) == 0 {
			return ""
		}
		ext, _ := errs[0].(map[string]any)["extensions"].(map[string]any)
		c, _ := ext["code"].(string)
		return c
	}
	ids := func(n int) string {
		q := make([]string, n)
		for i := range q {
			q[i] = `"` + dbtest.SerproBranch + `"`
		}
		return "[" + strings.Join(q, ",") + "]"
	}

	// A restricted key may not reach offices through GraphQL either.
	res, out := post(noOffice, `{ office(taxId: "`+dbtest.SerproBranch+`") { taxId } }`)
	if res.StatusCode != 403 || code(out) != fault403() {
		t.Fatalf("restricted key: %d %v", res.StatusCode, out)
	}
	// Three office lookups may cost three credits: held up front, and the
	// account holds three, so the query runs; cached answers refund them.
	res, out = post(key, `{ offices(taxIds: `+ids(3)+`, strategy: CACHE_IF_ERROR) { taxId } }`)
	if res.StatusCode != 200 || out["errors"] != nil {
		t.Fatalf("3 lookups: %d %v", res.StatusCode, out)
	}
	// Four may cost four credits: refused before it runs.
	res, out = post(key, `{ offices(taxIds: `+ids(4)+`) { taxId } }`)
	if res.StatusCode != 429 || !strings.Contains(jsonString(out), "not enough credits") {
		t.Fatalf("4 lookups with 3 credits: %d %v", res.StatusCode, out)
	}
	// The rate: 9 a minute; 8 counted so far (1 refused by permission, 3
	// and 4 lookups), so the request fits but its other 2 lookups do not.
	res, out = post(key, `{ offices(taxIds: `+ids(3)+`, strategy: CACHE) { taxId } }`)
	if res.StatusCode != 429 || res.Header.Get("Retry-After") == "" || !strings.Contains(jsonString(out), "rate limit exceeded") {
		t.Fatalf("over the rate: %d %v %v", res.StatusCode, res.Header, out)
	}
}

func fault403() string { return "FORBIDDEN" }

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }
