package graphqlapi_test

import (
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
