package graphqlapi_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestPOSTTransport: the POST transport answers what gqlgen's does, and a
// body it cannot take with a coded error: a reader that passed the router's
// limit is 413 PAYLOAD_TOO_LARGE (for graphqlapi.New mounted behind
// another http.MaxBytesReader than the router's), and the response type
// and the status of a query that cannot run follow Accept.
func TestPOSTTransport(t *testing.T) {
	s := newServer(t, serverOptions{})
	const query, broken = `{"query":"{ __typename }"}`, `{"query":"{ __typename "}`
	for _, c := range []struct {
		name, accept, contentType, body string
		limit                           int64
		status                          int
		contains                        string
	}{
		{"json", "", "application/json", query, 1 << 20, 200, `"data":{"__typename":"Query"}`},
		{"json with charset", "application/json", "application/json; charset=utf-8", query, 1 << 20, 200, `"__typename"`},
		{"graphql response type", "application/graphql-response+json", "application/json", query, 1 << 20, 200, `"__typename"`},
		{"over a reader's limit", "", "application/json", query, 8, 413, `"code":"PAYLOAD_TOO_LARGE","status":413`},
		{"parse error", "", "application/json", broken, 1 << 20, 422, `"code":"GRAPHQL_PARSE_FAILED"`},
		{"parse error, graphql response type", "application/graphql-response+json", "application/json", broken, 1 << 20, 400, `"code":"GRAPHQL_PARSE_FAILED"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(c.body))
			req.Header.Set("Content-Type", c.contentType)
			if c.accept != "" {
				req.Header.Set("Accept", c.accept)
			}
			rec := httptest.NewRecorder()
			req.Body = http.MaxBytesReader(rec, req.Body, c.limit)
			s.h.ServeHTTP(rec, req)
			wantType := "application/json"
			if c.accept == "application/graphql-response+json" {
				wantType = c.accept
			}
			if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.contains) || rec.Header().Get("Content-Type") != wantType {
				t.Errorf("%d %s %s, want %d %s with %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body, c.status, wantType, c.contains)
			}
			// The length, as sent with the status: the router sends a
			// complete answer before its access line.
			if got := rec.Result().Header.Get("Content-Length"); got != strconv.Itoa(rec.Body.Len()) {
				t.Errorf("Content-Length %q for a body of %d bytes", got, rec.Body.Len())
			}
		})
	}
}

// TestOperationName: a query of several operations needs operationName,
// and without it the answer says so and names them (gqlgen's own words
// were "operation  not found"), over POST and GET alike.
func TestOperationName(t *testing.T) {
	s := newServer(t, serverOptions{})
	const query = `query Q { __typename } query R { __typename }`
	for name, r := range map[string]result{
		"POST": s.postRaw(t, []byte(`{"query":"`+query+`"}`)),
		"GET":  s.get(t, url.Values{"query": {query}}),
	} {
		e := r.only(t)
		if r.status != http.StatusUnprocessableEntity || e.Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" ||
			e.Message != "operationName is required: the query holds more than one operation (Q, R)" {
			t.Errorf("%s: %d %s", name, r.status, r.raw)
		}
	}
	if r := s.postRaw(t, []byte(`{"query":"`+query+`","operationName":"R"}`)).ok(t); at(t, r.Data, "__typename") != "Query" {
		t.Errorf("operationName R: %s", r.raw)
	}
	if e := s.postRaw(t, []byte(`{"query":"`+query+`","operationName":"S"}`)).only(t); e.Message != "operation S not found" {
		t.Errorf("operationName S: %+v", e)
	}
}

// TestRequestsNotTaken: a GET whose query string cannot be taken, and a
// persisted query gqlgen refuses, answer 400 BAD_REQUEST with the reason
// as a constraint (gqlgen's own answers had no code: a 400 over GET, a 200
// for the persisted queries). A persisted query not yet stored keeps its
// PERSISTED_QUERY_NOT_FOUND, on which clients send the whole query, and is
// then answered by its hash alone.
func TestRequestsNotTaken(t *testing.T) {
	s := newServer(t, serverOptions{})
	const query = "{ __typename }"
	hash := fmt.Sprintf("%x", sha256.Sum256([]byte(query)))
	apq := func(version any, sha string) string {
		return `{"persistedQuery":{"version":` + fmt.Sprint(version) + `,"sha256Hash":"` + sha + `"}}`
	}
	get := func(rawQuery string) result {
		return s.do(t, httptest.NewRequest(http.MethodGet, "/graphql?"+rawQuery, nil))
	}
	for _, c := range []struct {
		name string
		r    result
		want []string
	}{
		{"GET, query string", get("query=%7B+__typename+%7D&variables=%zz"), []string{"query string must be correctly URL-encoded"}},
		{"GET, variables and extensions", s.get(t, url.Values{"query": {query}, "variables": {"[1]"}, "extensions": {"x"}}),
			[]string{"variables must be a JSON object", "extensions must be a JSON object"}},
		{"GET, hash of another query", s.get(t, url.Values{"query": {query}, "extensions": {apq(1, strings.Repeat("0", 64))}}),
			[]string{"provided APQ hash does not match query"}},
		{"POST, hash of another query", s.postRaw(t, []byte(`{"query":"`+query+`","extensions":`+apq(1, strings.Repeat("0", 64))+`}`)),
			[]string{"provided APQ hash does not match query"}},
		{"POST, APQ version 2", s.postRaw(t, []byte(`{"query":"`+query+`","extensions":`+apq(2, hash)+`}`)),
			[]string{"unsupported APQ version"}},
		{"POST, APQ extension not an object", s.postRaw(t, []byte(`{"query":"`+query+`","extensions":{"persistedQuery":"x"}}`)),
			[]string{"invalid APQ extension data"}},
	} {
		e := c.r.only(t)
		got, _ := json.Marshal(e.Extensions["constraints"])
		want, _ := json.Marshal(c.want)
		if c.r.status != http.StatusBadRequest || e.Extensions["code"] != "BAD_REQUEST" || string(got) != string(want) {
			t.Errorf("%s: %d %s, want 400 BAD_REQUEST with %s", c.name, c.r.status, c.r.raw, want)
		}
	}
	// The persisted-query round trip as Apollo's link makes it.
	byHash := []byte(`{"extensions":` + apq(1, hash) + `}`)
	if e := s.postRaw(t, byHash).only(t); e.Extensions["code"] != "PERSISTED_QUERY_NOT_FOUND" {
		t.Errorf("unknown hash: %+v", e)
	}
	s.postRaw(t, []byte(`{"query":"`+query+`","extensions":`+apq(1, hash)+`}`)).ok(t)
	if r := s.postRaw(t, byHash).ok(t); at(t, r.Data, "__typename") != "Query" {
		t.Errorf("by hash: %s", r.raw)
	}
}
