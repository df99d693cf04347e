package playground

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPageHeaders: the page, which may hold a key, loads only this
// server's files, may not be framed by another site, and is not stored;
// its assets may be cached.
func TestPageHeaders(t *testing.T) {
	h := Handler(Options{Endpoint: "/graphql", APIKey: "cg_key"})
	page := httptest.NewRecorder()
	h.ServeHTTP(page, httptest.NewRequest("GET", "/", nil))
	csp := page.Header().Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if got := page.Header().Get("X-Frame-Options"); got != "DENY" {
		t.Errorf("X-Frame-Options %q, want DENY", got)
	}
	if got := page.Header().Get("Cache-Control"); got != "no-store" {
		t.Errorf("the page's Cache-Control %q, want no-store", got)
	}
	asset := httptest.NewRecorder()
	h.ServeHTTP(asset, httptest.NewRequest("GET", "/assets/graphiql.min.js", nil))
	if got := asset.Header().Get("Cache-Control"); got != "public, max-age=86400" {
		t.Errorf("an asset's Cache-Control %q", got)
	}
}

// TestBase: behind a proxy that serves the API under a path, the page asks
// for its scripts, styles and endpoint under that path; at the root, at
// the root.
func TestBase(t *testing.T) {
	for base, want := range map[string][]string{
		"":      {`src="/playground/assets/graphiql.min.js"`, `href="/playground/assets/graphiql.min.css"`, `const endpoint = "/graphql"`},
		"/cnpj": {`src="/cnpj/playground/assets/graphiql.min.js"`, `href="/cnpj/playground/assets/graphiql.min.css"`, `const endpoint = "/cnpj/graphql"`},
	} {
		page := httptest.NewRecorder()
		Handler(Options{Endpoint: "/graphql", Base: base}).ServeHTTP(page, httptest.NewRequest("GET", "/", nil))
		for _, w := range want {
			if !strings.Contains(page.Body.String(), w) {
				t.Errorf("base %q: the page lacks %s:\n%s", base, w, page.Body.String())
			}
		}
	}
}
