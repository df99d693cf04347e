package rest

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// params reads query parameters, recording every violated rule in cs
// instead of stopping at the first. Unknown parameters are ignored: clients
// send newer ones.
type params struct {
	values url.Values
	cs     *service.Constraints
}

func newParams(r *http.Request, cs *service.Constraints) params {
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		cs.Add("query string must be correctly URL-encoded")
	}
	return params{values: values, cs: cs}
}

// single returns a parameter that may appear once.
func (p params) single(name string) (string, bool) {
	vs := p.values[name]
	if len(vs) == 0 {
		return "", false
	}
	if len(vs) > 1 {
		p.cs.Add(name + " must be given only once")
	}
	return vs[0], true
}

// boolean accepts true/false and 1/0; absent is false.
func (p params) boolean(name string) bool {
	v, ok := p.single(name)
	if !ok {
		return false
	}
	switch v {
	case "true", "1":
		return true
	case "false", "0":
		return false
	}
	p.cs.Add(name + " must be a boolean: true, false, 1 or 0")
	return false
}

// list accepts comma-joined values, repeated parameters, or both; empty
// items are skipped.
func (p params) list(name string) []string {
	var out []string
	for _, v := range p.values[name] {
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

// cache reads strategy, maxAge and maxStale.
func (p params) cache() service.CacheQuery {
	q := service.DefaultCache()
	if v, ok := p.single("strategy"); ok {
		q.Strategy = p.cs.ParseStrategy("strategy", v)
	}
	if v, ok := p.single("maxAge"); ok {
		q.AgeSet = true
		if n, ok := p.cs.ParseDays("maxAge", v); ok {
			q.MaxAge = n
		}
	}
	if v, ok := p.single("maxStale"); ok {
		if n, ok := p.cs.ParseDays("maxStale", v); ok {
			q.MaxStale = n
		}
	}
	p.cs.CheckCache(q)
	return q
}

// taxID reads the required CNPJ query parameter taxId.
func (p params) taxID() cnpj.CNPJ {
	v, ok := p.single("taxId")
	if !ok {
		p.cs.Add("taxId is required")
		return ""
	}
	return p.cs.ParseTaxID("taxId", v)
}

// pathParam returns a path segment decoded; a bad escape is reported as an
// invalid value of the parameter.
func pathParam(r *http.Request, name string, cs *service.Constraints, rule string) (string, bool) {
	raw := chi.URLParam(r, name)
	v, err := url.PathUnescape(raw)
	if err != nil {
		cs.Add(rule)
		return "", false
	}
	return v, true
}
