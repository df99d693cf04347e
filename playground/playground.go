// Package playground serves GraphiQL from the binary: the page and its
// scripts are embedded, so the playground works with no internet and requests
// nothing from outside the server.
package playground

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
)

// assets holds GraphiQL and React, fetched from the npm registry at build time
// by scripts/playground-assets.sh (pinned in package-lock.json).
//
//go:embed assets
var assets embed.FS

//go:embed index.html
var indexHTML string

var page = template.Must(template.New("playground").Parse(indexHTML))

// Options configure the page.
type Options struct {
	Endpoint string // GraphQL endpoint, e.g. /graphql
	// Base is the path the server is reached under, behind a proxy that
	// strips it ("/cnpj" for https://example.com/cnpj/playground): the page
	// asks for its scripts and the endpoint under it. "" at the root.
	Base     string
	APIKey   string   // put in the Authorization header when set (development only)
	Examples []string // the queries the page opens with, a tab each (the first shown)
}

// Handler serves the page at its root path and the assets under assets/.
// Mount it with a prefix, e.g. r.Mount("/playground", playground.Handler(o)).
func Handler(o Options) http.Handler {
	sub, _ := fs.Sub(assets, "assets")
	files := http.StripPrefix("/assets/", http.FileServer(http.FS(sub)))
	headers := "{}"
	if o.APIKey != "" {
		headers = `{"Authorization": "` + template.JSEscapeString(o.APIKey) + `"}`
	}
	ready := hasAssets(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := "/" + strings.TrimPrefix(r.URL.Path, "/")
		if strings.HasPrefix(path, "/assets/") {
			w.Header().Set("Cache-Control", "public, max-age=86400")
			files.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// The page may load only what this server serves, and no other
		// site may frame it (it may hold a key: a framing page could trick
		// a click into sending queries with it). Nothing keeps a copy of
		// a page that may hold a key.
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Cache-Control", "no-store")
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("<!doctype html><title>cnpjgraph playground</title><p>The playground's assets were not built into this binary: run <code>make build</code> (it runs scripts/playground-assets.sh).</p>"))
			return
		}
		_ = page.Execute(w, struct {
			Endpoint string
			Headers  string
			Examples []string
			Base     string
		}{o.Base + o.Endpoint, headers, o.Examples, o.Base})
	})
}

func hasAssets(sub fs.FS) bool {
	_, err := fs.Stat(sub, "graphiql.min.js")
	return err == nil
}
