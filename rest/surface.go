package rest

import (
	"net/http"
	"strings"

	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/cnpjgraph/cnpjgraph/wire"
)

// The routes of a CNPJá client beyond the spec (api-contract.md): credits,
// postal codes, and the CCC and SUFRAMA portals with their certificates.
// Thin like the others: parse, one service call, present.
type surfaceRoutes struct {
	svc *service.Service
}

// credit serves GET /credit.
func (h surfaceRoutes) credit(w http.ResponseWriter, r *http.Request) {
	c, err := h.svc.Credit(r.Context())
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.CreditOf(c))
}

// zip serves GET /zip/{code}.
func (h surfaceRoutes) zip(w http.ResponseWriter, r *http.Request) {
	var cs service.Constraints
	const rule = "code must be a CEP of 8 digits"
	var code string
	if v, ok := pathParam(r, "code", &cs, rule); ok {
		code = cs.ParseZip("code", v)
	}
	if err := cs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	z, err := h.svc.Zip(r.Context(), code)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.ZipOf(z))
}

// ccc serves GET /ccc?taxId=&states=: states as the office lookup's
// registrations (UFs, BR or ALL, ORIGIN); required, as CNPJá requires it.
func (h surfaceRoutes) ccc(w http.ResponseWriter, r *http.Request) {
	var cs service.Constraints
	p := newParams(r, &cs)
	q := service.CCCQuery{TaxID: p.taxID()}
	states := p.list("states")
	if len(states) == 0 {
		cs.Add("states is required")
	}
	q.States = cs.ParseRegistrations("states", states)
	q.Cache = p.cache()
	if err := cs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	rec, err := h.svc.CCC(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.CCCOf(rec))
}

// cccCertificate serves GET /ccc/certificate?taxId=&state=.
func (h surfaceRoutes) cccCertificate(w http.ResponseWriter, r *http.Request) {
	var cs service.Constraints
	p := newParams(r, &cs)
	q := service.PortalCertificateQuery{Portal: service.PortalRegistrations, TaxID: p.taxID()}
	if _, ok := p.values["state"]; ok {
		q.State = p.oneOf("state", service.States)
	}
	if err := cs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	h.certificate(w, r, q, "ccc-")
}

// suframa serves GET /suframa?taxId=.
func (h surfaceRoutes) suframa(w http.ResponseWriter, r *http.Request) {
	var cs service.Constraints
	p := newParams(r, &cs)
	q := service.SuframaQuery{TaxID: p.taxID(), Cache: p.cache()}
	if err := cs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	rec, err := h.svc.Suframa(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.SuframaOf(rec))
}

// suframaCertificate serves GET /suframa/certificate?taxId=.
func (h surfaceRoutes) suframaCertificate(w http.ResponseWriter, r *http.Request) {
	var cs service.Constraints
	p := newParams(r, &cs)
	q := service.PortalCertificateQuery{Portal: service.PortalSuframa, TaxID: p.taxID()}
	if err := cs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	h.certificate(w, r, q, "suframa-")
}

func (h surfaceRoutes) certificate(w http.ResponseWriter, r *http.Request, q service.PortalCertificateQuery, prefix string) {
	pdf, err := h.svc.PortalCertificate(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	name := prefix + string(q.TaxID)
	if q.State != "" {
		name += "-" + strings.ToLower(q.State)
	}
	writeFile(w, "application/pdf", name+".pdf", pdf)
}

// officeOptions reads the office lookup's options beyond the spec, as
// CNPJá's client sends them: simplesHistory (which implies simples),
// suframa, geocoding, links.
func officeOptions(p params, cs *service.Constraints, q *service.OfficeQuery) {
	if p.boolean("simplesHistory") {
		q.Simples, q.SimplesHistory = true, true
	}
	q.Suframa = p.boolean("suframa")
	q.Geocoding = p.boolean("geocoding")
	if _, asked := p.values["links"]; asked {
		q.Links = cs.ParseLinks("links", p.list("links"))
		if q.Links == nil {
			q.Links = []string{}
		}
	}
}

// withBaseURL tells the service where links in answers start: PUBLIC_URL,
// else the scheme and host the request came to.
func withBaseURL(publicURL string) func(http.Handler) http.Handler {
	publicURL = strings.TrimRight(publicURL, "/")
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			base := publicURL
			if base == "" {
				base = requestBase(r)
			}
			next.ServeHTTP(w, r.WithContext(service.WithBaseURL(r.Context(), base)))
		})
	}
}

// requestBase is the scheme and host a request came to.
func requestBase(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
