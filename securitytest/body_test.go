package securitytest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/rest"
)

// endless is a request body of size bytes that counts what was read of it.
type endless struct {
	size, read int64
}

func (b *endless) Read(p []byte) (int, error) {
	if b.read >= b.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), b.size-b.read)
	for i := range p[:n] {
		p[i] = ' '
	}
	b.read += n
	return int(n), nil
}

func (w *world) postGraphQL(body io.Reader, length int64, contentType, credential string) answer {
	w.t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/graphql", body)
	req.ContentLength = length // -1: unknown, as a chunked upload
	req.Header.Set("Content-Type", contentType)
	if credential != "" {
		req.Header.Set("Authorization", credential)
	}
	return w.serve(req)
}

const tooLarge = `413 413 "request body too large"`

// TestBodyLimit ("Done when"): a 20 MiB GraphQL body is refused with 413
// and the contract's JSON error before it is read whole: not a byte of it
// when its length is declared, at most the limit when it is not.
func TestBodyLimit(t *testing.T) {
	w := newWorld(t, worldOptions{})
	_, key := w.key(w.account(), nil)
	const huge = 20 << 20

	declared := &endless{size: huge}
	a := w.postGraphQL(declared, huge, "application/json", key)
	if got := outcomeOf(route{}, a); got != tooLarge || declared.read != 0 {
		t.Errorf("20 MiB declared: %s after reading %d bytes, want %s after none", got, declared.read, tooLarge)
	}
	chunked := &endless{size: huge}
	a = w.postGraphQL(chunked, -1, "application/json", key)
	if got := outcomeOf(route{}, a); got != tooLarge || chunked.read > rest.DefaultMaxBodyBytes+1 {
		t.Errorf("20 MiB chunked: %s after reading %d bytes, want %s after at most %d", got, chunked.read, tooLarge, rest.DefaultMaxBodyBytes+1)
	}

	// Up to the limit, a query answers, however it is sent.
	query := `{"query":"{ __typename }"}`
	padded := query + strings.Repeat(" ", rest.DefaultMaxBodyBytes-len(query))
	for _, length := range []int64{int64(len(padded)), -1} {
		if a := w.postGraphQL(strings.NewReader(padded), length, "application/json", key); a.status != 200 || a.body["errors"] != nil {
			t.Errorf("a body of exactly the limit (length %d): %d %s", length, a.status, a.raw[:min(200, len(a.raw))])
		}
	}

	// MAX_BODY_BYTES lowers it.
	small := newWorld(t, worldOptions{maxBody: 4096})
	_, key = small.key(small.account(), nil)
	if got := outcomeOf(route{}, small.postGraphQL(strings.NewReader(query+strings.Repeat(" ", 4097)), -1, "application/json", key)); got != tooLarge {
		t.Errorf("over a 4096-byte limit: %s", got)
	}
	// A stranger's body is not read at all: the credential comes first.
	stranger := &endless{size: huge}
	if got := outcomeOf(route{}, w.postGraphQL(stranger, -1, "application/json", "")); got != `401 401 "missing authorization"` || stranger.read != 0 {
		t.Errorf("without a credential: %s after reading %d bytes", got, stranger.read)
	}
}

// TestGraphQLBodyErrors: a body GraphQL cannot take is answered like every
// other error, with extensions.code, and is never echoed back.
func TestGraphQLBodyErrors(t *testing.T) {
	w := newWorld(t, worldOptions{})
	_, key := w.key(w.account(), nil)
	const secret = "s3cr3t-in-the-body"
	for _, c := range []struct {
		name, contentType, body, constraint string
	}{
		{"not JSON", "application/json", "query=" + secret, "body must be a JSON object: {query, variables, operationName, extensions}"},
		{"truncated JSON", "application/json", `{"query":"{ __typename }", "variables": {"x": "` + secret, "body must be a JSON object: {query, variables, operationName, extensions}"},
		{"query not a string", "application/json", `{"query": ["` + secret + `"]}`, "body must be a JSON object: {query, variables, operationName, extensions}"},
		{"form", "application/x-www-form-urlencoded", "query=" + secret, "Content-Type must be application/json"},
		{"no content type", "", `{"query":"{ __typename }","x":"` + secret + `"}`, "Content-Type must be application/json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := w.postGraphQL(strings.NewReader(c.body), int64(len(c.body)), c.contentType, key)
			errs, _ := a.body["errors"].([]any)
			if a.status != 400 || len(errs) != 1 {
				t.Fatalf("%d %s, want 400 with one error", a.status, a.raw)
			}
			e := errs[0].(map[string]any)
			ext, _ := e["extensions"].(map[string]any)
			if e["message"] != "request validation failed" || ext["code"] != "BAD_REQUEST" || fmt.Sprint(ext["status"]) != "400" ||
				fmt.Sprint(ext["constraints"]) != "["+c.constraint+"]" {
				t.Errorf("error %v", e)
			}
			if strings.Contains(string(a.raw), secret) {
				t.Errorf("the body is echoed back: %s", a.raw)
			}
		})
	}
}
