package rest

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/model"
	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/cnpjgraph/cnpjgraph/wire"
)

// lookups holds the handlers of the documented routes: each parses into a
// typed query (400 with every violated rule), calls one service method and
// presents the answer.
type lookups struct {
	svc *service.Service
}

const taxIDRule = "taxId must be a valid CNPJ"

// office serves GET /office/{taxId}.
func (h lookups) office(w http.ResponseWriter, r *http.Request) {
	var cs service.Constraints
	var q service.OfficeQuery
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
		if !slices.Contains(regs, st) {
			regs = append(regs, st)
		}
	}
	q.Registrations = regs
	q.Cache = p.cache()
	officeOptions(p, &cs, &q)
	if err := cs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	o, err := h.svc.Office(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	buf := bodies.Get().(*[]byte)
	defer bodies.Put(buf)
	body, err := wire.MarshalOffice((*buf)[:0], o)
	if err != nil {
		writeError(w, r, err)
		return
	}
	*buf = body
	writeBody(w, http.StatusOK, body)
}

// bodies are the office answers' buffers, reused: one is written to the
// connection before it goes back.
var bodies = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// company serves GET /company/{id}.
func (h lookups) company(w http.ResponseWriter, r *http.Request) {
	var cs service.Constraints
	const rule = "id must be a company id: 1 to 8 digits, or 8 characters of digits and uppercase letters"
	var root cnpj.Root
	if v, ok := pathParam(r, "id", &cs, rule); ok {
		root = cs.ParseRoot("id", v)
	}
	if err := cs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	answer, err := h.svc.CompanyAnswer(r.Context(), root, func(c model.Company) ([]byte, error) {
		return json.Marshal(wire.CompanyLookupOf(c))
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeKept(w, r, answer)
}

// person serves GET /person/{id}.
func (h lookups) person(w http.ResponseWriter, r *http.Request) {
	var cs service.Constraints
	const rule = "id must be a person id of 36 characters"
	var id string
	if v, ok := pathParam(r, "id", &cs, rule); ok {
		id = cs.ParsePersonID("id", v)
	}
	if err := cs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	p, err := h.svc.Person(r.Context(), id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.PersonLookupOf(p))
}

// registry serves GET /rfb?taxId=.
func (h lookups) registry(w http.ResponseWriter, r *http.Request) {
	var cs service.Constraints
	p := newParams(r, &cs)
	var q service.RegistryQuery
	q.TaxID = p.taxID()
	q.Cache = p.cache()
	if err := cs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	o, err := h.svc.Registry(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.RegistryOf(o))
}

// simples serves GET /simples?taxId=&history=.
func (h lookups) simples(w http.ResponseWriter, r *http.Request) {
	var cs service.Constraints
	p := newParams(r, &cs)
	var q service.SimplesQuery
	q.TaxID = p.taxID()
	q.History = p.boolean("history")
	q.Cache = p.cache()
	if err := cs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	rec, err := h.svc.Simples(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.SimplesLookupOf(rec))
}
