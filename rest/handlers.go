package rest

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/resolvers"
)

// lookups holds the handlers of the documented routes: each parses into a
// typed query (400 with every violated rule), calls one service method and
// presents the answer.
type lookups struct {
	svc       *resolvers.Service
	companies *bodyCache // rendered company answers; nil: none
}

const taxIDRule = "taxId must be a valid CNPJ"

// office serves GET /office/{taxId}.
func (h lookups) office(w http.ResponseWriter, r *http.Request) {
	var cs resolvers.Constraints
	var q resolvers.OfficeQuery
	if v, ok := pathParam(r, "taxId", &cs, taxIDRule); ok {
		q.TaxID = cs.ParseTaxID("taxId", v)
	}
	p := newParams(r, &cs)
	q.Simples = p.boolean("simples")
	// Deprecated but accepted: embeds=SIMPLES is simples=true; cccStates is
	// registrations (embeds=CCC only names the portal they come from).
	for _, e := range p.list("embeds") {
		switch e {
		case "SIMPLES":
			q.Simples = true
		case "CCC":
		default:
			cs.Add("embeds must contain only: SIMPLES, CCC")
		}
	}
	regs := cs.ParseRegistrations("registrations", p.list("registrations"))
	for _, st := range cs.ParseRegistrations("cccStates", p.list("cccStates")) {
		if !contains(regs, st) {
			regs = append(regs, st)
		}
	}
	q.Registrations = regs
	q.Cache = p.cache()
	if len(cs) > 0 {
		writeError(w, r, fault.Invalid(cs...))
		return
	}
	o, err := h.svc.Office(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentOffice(o))
}

// company serves GET /company/{id}.
func (h lookups) company(w http.ResponseWriter, r *http.Request) {
	var cs resolvers.Constraints
	const rule = "id must be a company id: 1 to 8 digits, or 8 characters of digits and uppercase letters"
	var root cnpj.Root
	if v, ok := pathParam(r, "id", &cs, rule); ok {
		root = cs.ParseRoot("id", v)
	}
	if len(cs) > 0 {
		writeError(w, r, fault.Invalid(cs...))
		return
	}
	// The answer depends on the snapshot alone: serve it rendered when the
	// same snapshot already answered it.
	snap, snapErr := h.svc.Store().Catalog.Current(r.Context())
	if snapErr == nil {
		if body, ok := h.companies.get(string(root), snap.Snapshot.ID); ok {
			writeBody(w, http.StatusOK, body)
			return
		}
	}
	render := func() (any, error) {
		c, err := h.svc.Company(r.Context(), root)
		if err != nil {
			return nil, err
		}
		body, err := json.Marshal(presentCompany(c))
		if err == nil && snapErr == nil {
			h.companies.put(string(root), snap.Snapshot.ID, body)
		}
		return body, err
	}
	var v any
	var err error
	if h.companies != nil && snapErr == nil {
		// Concurrent misses of one company render it once.
		v, err, _ = h.companies.fill.Do(fmt.Sprint(snap.Snapshot.ID, "/", root), render)
	} else {
		v, err = render()
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeBody(w, http.StatusOK, v.([]byte))
}

// person serves GET /person/{id}.
func (h lookups) person(w http.ResponseWriter, r *http.Request) {
	var cs resolvers.Constraints
	const rule = "id must be a person id of 36 characters"
	var id string
	if v, ok := pathParam(r, "id", &cs, rule); ok {
		id = cs.ParsePersonID("id", v)
	}
	if len(cs) > 0 {
		writeError(w, r, fault.Invalid(cs...))
		return
	}
	p, err := h.svc.Person(r.Context(), id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentPerson(p))
}

// registry serves GET /rfb?taxId=.
func (h lookups) registry(w http.ResponseWriter, r *http.Request) {
	var cs resolvers.Constraints
	p := newParams(r, &cs)
	var q resolvers.RegistryQuery
	q.TaxID = p.taxID()
	q.Cache = p.cache()
	if len(cs) > 0 {
		writeError(w, r, fault.Invalid(cs...))
		return
	}
	o, err := h.svc.Registry(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentRegistry(o))
}

// simples serves GET /simples?taxId=&history=.
func (h lookups) simples(w http.ResponseWriter, r *http.Request) {
	var cs resolvers.Constraints
	p := newParams(r, &cs)
	var q resolvers.SimplesQuery
	q.TaxID = p.taxID()
	q.History = p.boolean("history")
	q.Cache = p.cache()
	if len(cs) > 0 {
		writeError(w, r, fault.Invalid(cs...))
		return
	}
	rec, err := h.svc.Simples(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, presentSimples(rec))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
