package graphqlapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/graphqlapi"
)

// TestValidationAsREST: bad arguments get REST's 400 sentences, every
// violated rule at once, as BAD_REQUEST with constraints.
func TestValidationAsREST(t *testing.T) {
	s := newServer(t, serverOptions{})
	cases := []struct {
		query string
		want  []string
	}{
		{`{ office(taxId: "33683111000281", strategy: ONLINE, maxAge: 5000, registrations: ["XX"]) { taxId } }`, []string{
			"registrations must contain only: BR, AC, AL, AM, AP, BA, CE, DF, ES, GO, MA, MG, MS, MT, PA, PB, PE, PI, PR, RJ, RN, RO, RR, RS, SC, SP, SE, TO",
			"maxAge must not be greater than 3650", "maxAge must not be sent with strategy ONLINE", "taxId must be a valid CNPJ"}},
		{`{ rfb(taxId: "abc", maxStale: 0) { taxId } }`, []string{"taxId must be a valid CNPJ", "maxStale must not be less than 1"}},
		{`{ company(id: "123456789") { name } }`, []string{"id must be a company id: 1 to 8 digits, or 8 characters of digits and uppercase letters"}},
		{`{ person(id: "nope") { name } }`, []string{"id must be a person id of 36 characters"}},
		{`{ offices(taxIds: ["` + dbtest.SerproBranch + `", "1"]) { taxId } }`, []string{"taxIds[1] must be a valid CNPJ"}},
		{`{ company(id: "` + dbtest.BigRoot + `") { offices(first: 0, after: "x") { totalCount } } }`, []string{
			"first must be an integer from 1 to 100", "after must be a cursor from pageInfo.endCursor"}},
		{`{ person(id: "` + dbtest.SerproMembers[0].Person.ID() + `") { membership(first: 101, after: "x") { totalCount } } }`, []string{
			"first must be an integer from 1 to 100", "after must be a cursor from pageInfo.endCursor"}},
		// A scalar that cannot read its value names it as REST names the
		// parameter (it was a 500).
		{`{ searchOffices(filter: {founded: {gte: "2020-13-01"}}) { totalCount } }`, []string{
			"founded.gte must be a date in the format YYYY-MM-DD"}},
		{`{ searchOffices(filter: {statusDate: {lte: 20200101}}) { totalCount } }`,
			[]string{"statusDate.lte must be a date in the format YYYY-MM-DD"}},
		// A search's page size is named as GraphQL names it, not as REST does.
		{`{ searchOffices(filter: {}, first: 0, after: "x") { totalCount } }`, []string{
			"after must be a cursor of a previous page of this search", "first must be an integer from 1 to 1000"}},
	}
	for _, c := range cases {
		e := s.post(t, c.query, nil).only(t)
		if e.Message != fault.MsgValidation || e.Extensions["code"] != "BAD_REQUEST" || e.Extensions["status"] != json.Number("400") {
			t.Errorf("%s: %+v", c.query, e)
		}
		got, _ := json.Marshal(e.Extensions["constraints"])
		want, _ := json.Marshal(c.want)
		if string(got) != string(want) {
			t.Errorf("%s: constraints\n got %s\nwant %s", c.query, got, want)
		}
	}
}

// TestLimits: each protection rejects before anything runs, naming its
// limit; a query under the limits runs.
func TestLimits(t *testing.T) {
	s := newServer(t, serverOptions{gql: graphqlapi.Options{MaxComplexity: 200, MaxDepth: 5, MaxTokens: 300}})
	reject := func(name, query, code, message string) {
		t.Helper()
		before := s.roundTrips.Load()
		r := s.post(t, query, nil)
		e := r.only(t)
		if r.status != http.StatusUnprocessableEntity || e.Extensions["code"] != code || e.Message != message || r.Data != nil {
			t.Errorf("%s: status %d, %s", name, r.status, r.raw)
		}
		if n := s.roundTrips.Load() - before; n != 0 {
			t.Errorf("%s: %d SQL statements before the rejection", name, n)
		}
	}
	reject("depth", `{ office(taxId: "`+dbtest.SerproBranch+`") { company { members { person { membership { nodes { company { name } } } } } } } }`,
		graphqlapi.ErrDepthLimit, "query depth 8 exceeds the limit of 5")
	reject("depth through fragments", `{ ...a } fragment a on Query { office(taxId: "`+dbtest.SerproBranch+`") { ...b } }
		fragment b on Office { company { members { ...c } } } fragment c on Member { person { membership { nodes { company { name } } } } }`,
		graphqlapi.ErrDepthLimit, "query depth 8 exceeds the limit of 5")
	reject("complexity", `{ company(id: "`+dbtest.BigRoot+`") { offices(first: 100) { nodes { taxId alias } } } }`,
		"COMPLEXITY_LIMIT_EXCEEDED", "operation has complexity 302, which exceeds the limit of 200")
	reject("tokens", `{ offices(taxIds: [`+strings.Repeat(`"`+dbtest.SerproBranch+`",`, 300)+`]) { taxId } }`,
		"GRAPHQL_PARSE_FAILED", "exceeded token limit of 300")

	// More than 100 tax ids: rejected with REST's kind of sentence.
	ids := make([]string, 101)
	for i := range ids {
		ids[i] = dbtest.SerproBranch
	}
	r := s.post(t, `query($ids: [String!]!) { offices(taxIds: $ids) { taxId } }`, map[string]any{"ids": ids})
	if e := r.only(t); r.status != http.StatusUnprocessableEntity || e.Extensions["code"] != "BAD_REQUEST" ||
		e.Extensions["constraints"].([]any)[0] != "taxIds must contain at most 100 tax ids" {
		t.Errorf("101 tax ids: %d %s", r.status, r.raw)
	}

	// Under every limit: answers. Introspection fields do not count
	// towards the depth.
	s.post(t, `{ __schema { types { name fields { name type { name ofType { name ofType { name } } } } } }
		office(taxId: "`+dbtest.SerproBranch+`") { company { members { person { name } } } } }`, nil).ok(t)
}

// TestComplexityRemembered: an operation's pass is remembered only where
// its variables cannot change its complexity. A page size in an Int
// variable is priced on every request: a small one passes, then a large
// one is refused; an operation over the limit is refused each time.
func TestComplexityRemembered(t *testing.T) {
	s := newServer(t, serverOptions{gql: graphqlapi.Options{MaxComplexity: 200}})
	const paged = `query($id: ID!, $n: Int) { company(id: $id) { offices(first: $n) { nodes { taxId alias } } } }`
	s.post(t, paged, map[string]any{"id": dbtest.BigRoot, "n": 1}).ok(t)
	r := s.post(t, paged, map[string]any{"id": dbtest.BigRoot, "n": 100})
	if e := r.only(t); r.status != http.StatusUnprocessableEntity || e.Message != "operation has complexity 302, which exceeds the limit of 200" {
		t.Errorf("first: 100 after first: 1: %d %s", r.status, r.raw)
	}
	const fixed = `query($id: ID!) { company(id: $id) { offices(first: 100) { nodes { taxId alias } } } }`
	for i := range 2 {
		r := s.post(t, fixed, map[string]any{"id": dbtest.BigRoot})
		if e := r.only(t); r.status != http.StatusUnprocessableEntity || e.Extensions["code"] != "COMPLEXITY_LIMIT_EXCEEDED" {
			t.Errorf("request %d over the limit: %d %s", i+1, r.status, r.raw)
		}
	}
	const small = `query($id: ID!) { company(id: $id) { offices(first: 2) { nodes { taxId } } } }`
	for range 2 {
		s.post(t, small, map[string]any{"id": dbtest.BigRoot}).ok(t)
	}
}

// TestTimeout: a request past the router's timeout gets the contract's 504
// as GATEWAY_TIMEOUT, not the driver's text.
func TestTimeout(t *testing.T) {
	s := newServer(t, serverOptions{timeout: time.Nanosecond})
	e := s.post(t, `{ office(taxId: "`+dbtest.SerproBranch+`") { taxId } }`, nil).only(t)
	if e.Message != fault.MsgTimeout || e.Extensions["code"] != "GATEWAY_TIMEOUT" || e.Extensions["status"] != json.Number("504") {
		t.Errorf("%+v", e)
	}
}

// TestTransports: GET with query parameters, persisted queries (hash
// first, then hash and query, then hash alone), and no other method.
func TestTransports(t *testing.T) {
	s := newServer(t, serverOptions{})
	query := `query($id: String!) { office(taxId: $id) { taxId company { name } } }`
	vars := `{"id":"` + dbtest.SerproBranch + `"}`

	r := s.get(t, url.Values{"query": {query}, "variables": {vars}}).ok(t)
	if at(t, r.Data, "office", "company", "name") != "SERVICO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)" {
		t.Errorf("GET: %s", r.raw)
	}
	if r.header.Get("X-Request-Id") == "" || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Errorf("GET headers: %v", r.header)
	}

	sum := sha256.Sum256([]byte(query))
	ext := `{"persistedQuery":{"version":1,"sha256Hash":"` + hex.EncodeToString(sum[:]) + `"}}`
	r = s.get(t, url.Values{"extensions": {ext}, "variables": {vars}})
	if e := r.only(t); e.Message != "PersistedQueryNotFound" {
		t.Errorf("unknown hash: %s", r.raw)
	}
	s.postRaw(t, []byte(`{"query":`+quote(query)+`,"variables":`+vars+`,"extensions":`+ext+`}`)).ok(t)
	r = s.get(t, url.Values{"extensions": {ext}, "variables": {vars}}).ok(t)
	if at(t, r.Data, "office", "taxId") != dbtest.SerproBranch {
		t.Errorf("persisted: %s", r.raw)
	}

	req, _ := http.NewRequest(http.MethodPut, "/graphql", strings.NewReader(`{"query":"{__typename}"}`))
	if r := s.do(t, req); r.status != http.StatusNotFound {
		t.Errorf("PUT: %d %s", r.status, r.raw)
	}
}

// TestSchemaGolden: the SDL of the executable schema, as introspection
// shows it, is diffed against testdata/schema.graphql (-update rewrites).
func TestSchemaGolden(t *testing.T) {
	var b strings.Builder
	formatter.NewFormatter(&b, formatter.WithComments()).FormatSchema(graphqlapi.Schema(nil).Schema())
	path := filepath.Join("testdata", "schema.graphql")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./graphqlapi -run SchemaGolden -update)", err)
	}
	if b.String() != string(want) {
		t.Errorf("the schema differs from %s: review the change, then go test ./graphqlapi -run SchemaGolden -update\n%s", path, lineDiff(string(want), b.String()))
	}
}

// lineDiff lists the lines only one side has.
func lineDiff(want, got string) string {
	count := map[string]int{}
	for _, l := range strings.Split(want, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(got, "\n") {
		count[l]--
	}
	var out []string
	for l, n := range count {
		switch {
		case n > 0:
			out = append(out, "- "+l)
		case n < 0:
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
