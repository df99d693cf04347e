package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/imagery"
	"github.com/cnpjgraph/cnpjgraph/model"
	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/cnpjgraph/cnpjgraph/wire"
)

// legacyRoutes serves the deprecated /companies format and the routes that
// only ever answer 404.
type legacyRoutes struct {
	svc   *service.Service
	seats *imagery.Municipalities // accented city names; nil: the registry's
}

// gone answers the deprecated /file/{token} and /me/requests: always the
// JSON 404 of an unknown route, so old clients stop instead of retrying.
// They are routes of their own so that metrics and logs name them.
func gone(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusNotFound, wire.Error{
		Code:    http.StatusNotFound,
		Message: "Cannot " + r.Method + " " + r.URL.EscapedPath(),
	})
}

type legacyCodeJSON struct {
	Code        string  `json:"code"`
	Description *string `json:"description"`
}

type legacyRegistrationJSON struct {
	Status            *string    `json:"status"`
	StatusDate        *wire.Date `json:"status_date"`
	StatusReason      *string    `json:"status_reason"`
	SpecialStatus     *string    `json:"special_status"`
	SpecialStatusDate *wire.Date `json:"special_status_date"`
}

type legacyAddressJSON struct {
	Street       *string `json:"street"`
	Number       *string `json:"number"`
	Details      *string `json:"details"`
	Zip          *string `json:"zip"`
	Neighborhood *string `json:"neighborhood"`
	City         *string `json:"city"`
	State        *string `json:"state"`
	CityIBGE     *string `json:"city_ibge"`
	StateIBGE    *string `json:"state_ibge"`
}

type legacyMemberJSON struct {
	Name     string            `json:"name"`
	TaxID    *string           `json:"tax_id"`
	Role     legacyCodeJSON    `json:"role"`
	LegalRep *legacyMemberJSON `json:"legal_rep,omitempty"`
}

type legacySimplesJSON struct {
	LastUpdate      string     `json:"last_update"`
	SimplesOptant   bool       `json:"simples_optant"`
	SimplesIncluded *wire.Date `json:"simples_included"`
	SimplesExcluded *wire.Date `json:"simples_excluded"`
	SimeiOptant     bool       `json:"simei_optant"`
}

type legacySintegraJSON struct {
	LastUpdate            string              `json:"last_update"`
	HomeStateRegistration *string             `json:"home_state_registration"`
	Registrations         []wire.Registration `json:"registrations"`
}

// The links are null when the caller may not open them.
type legacyFilesJSON struct {
	Registration *string `json:"registration"`
	Membership   *string `json:"membership"`
}

type legacyMapsJSON struct {
	Roads     *string `json:"roads"`
	Satellite *string `json:"satellite"`
	Street    *string `json:"street"`
}

// legacyCompanyJSON is the /companies shape, fields in the spec's order.
type legacyCompanyJSON struct {
	LastUpdate          string                 `json:"last_update"`
	Name                string                 `json:"name"`
	Alias               *string                `json:"alias"`
	TaxID               string                 `json:"tax_id"`
	Type                string                 `json:"type"`
	Founded             *wire.Date             `json:"founded"`
	Size                *string                `json:"size"`
	Capital             json.Number            `json:"capital"`
	Email               *string                `json:"email"`
	Phone               *string                `json:"phone"`
	PhoneAlt            *string                `json:"phone_alt"`
	FederalEntity       *string                `json:"federal_entity"`
	Registration        legacyRegistrationJSON `json:"registration"`
	Address             legacyAddressJSON      `json:"address"`
	LegalNature         legacyCodeJSON         `json:"legal_nature"`
	PrimaryActivity     legacyCodeJSON         `json:"primary_activity"`
	SecondaryActivities []legacyCodeJSON       `json:"secondary_activities"`
	Membership          []legacyMemberJSON     `json:"membership"`
	Partnership         []struct{}             `json:"partnership"`
	SimplesNacional     legacySimplesJSON      `json:"simples_nacional"`
	Sintegra            legacySintegraJSON     `json:"sintegra"`
	Files               legacyFilesJSON        `json:"files"`
	Maps                legacyMapsJSON         `json:"maps"`
}

// companies serves GET /companies/{taxId}: the office lookup with Simples
// and every state's registrations, converted to the legacy shape. The
// cache parameters are accepted as in the office lookup.
func (h legacyRoutes) companies(w http.ResponseWriter, r *http.Request) {
	var cs service.Constraints
	taxID := pathTaxID(r, &cs)
	p := newParams(r, &cs)
	q := service.OfficeQuery{TaxID: taxID, Simples: true, SimplesHistory: true, Registrations: []string{"BR"}, Cache: p.cache()}
	if err := cs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	o, err := h.svc.Office(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, h.present(r, o))
}

// simplesExcluded is the exclusion date of the last closed Simples period,
// which only its history tells.
func simplesExcluded(s *model.Simples) *time.Time {
	if s == nil {
		return nil
	}
	var last *time.Time
	for _, p := range s.History {
		if p.Until != nil && (last == nil || p.Until.After(*last)) {
			last = p.Until
		}
	}
	return last
}

// present converts the office lookup's answer field by field.
func (h legacyRoutes) present(r *http.Request, o model.Office) legacyCompanyJSON {
	c := o.Company
	updated := o.Updated.UTC().Format(wire.StampLayout)
	out := legacyCompanyJSON{
		LastUpdate:    updated,
		Name:          c.Name,
		Alias:         o.Alias,
		TaxID:         o.TaxID,
		Type:          "FILIAL",
		Founded:       wire.DateOf(o.Founded),
		Capital:       json.Number(c.Equity),
		FederalEntity: c.Jurisdiction,
		Registration: legacyRegistrationJSON{
			Status:            textOrNull(strings.ToUpper(o.Status.Text)),
			StatusDate:        wire.DateOf(o.StatusDate),
			SpecialStatusDate: wire.DateOf(o.SpecialDate),
		},
		Address:             h.address(o.Address),
		LegalNature:         legacyCodeJSON{Code: strconv.Itoa(c.Nature.ID), Description: textOrNull(c.Nature.Text)},
		PrimaryActivity:     activityOf(o.MainActivity),
		SecondaryActivities: make([]legacyCodeJSON, len(o.SideActivities)),
		Membership:          make([]legacyMemberJSON, len(c.Members)),
		Partnership:         []struct{}{},
		Sintegra:            legacySintegraJSON{LastUpdate: updated, Registrations: []wire.Registration{}},
	}
	if o.Head {
		out.Type = "MATRIZ"
	}
	if c.Size != nil {
		out.Size = &c.Size.Acronym
	}
	if len(o.Emails) > 0 {
		out.Email = &o.Emails[0].Address
	}
	if len(o.Phones) > 0 {
		out.Phone = phoneOf(o.Phones[0])
	}
	if len(o.Phones) > 1 {
		out.PhoneAlt = phoneOf(o.Phones[1])
	}
	if o.Status.ID != 2 && o.Reason != nil {
		out.Registration.StatusReason = textOrNull(o.Reason.Text)
	}
	if o.Special != nil {
		out.Registration.SpecialStatus = &o.Special.Text
	}
	for i, a := range o.SideActivities {
		out.SecondaryActivities[i] = activityOf(a)
	}
	for i, m := range c.Members {
		out.Membership[i] = legacyMemberJSON{Name: m.Person.Name, TaxID: m.Person.TaxID, Role: roleOf(m.Role)}
		if m.Agent != nil {
			out.Membership[i].LegalRep = &legacyMemberJSON{Name: m.Agent.Person.Name, TaxID: m.Agent.Person.TaxID, Role: roleOf(m.Agent.Role)}
		}
	}
	if s := c.Simples; s != nil {
		out.SimplesNacional = legacySimplesJSON{LastUpdate: updated, SimplesOptant: s.Optant, SimplesIncluded: wire.DateOf(s.Since), SimplesExcluded: wire.DateOf(simplesExcluded(s))}
	}
	if c.Simei != nil {
		out.SimplesNacional.SimeiOptant = c.Simei.Optant
	}
	out.SimplesNacional.LastUpdate = updated
	for _, reg := range o.Registrations {
		out.Sintegra.Registrations = append(out.Sintegra.Registrations, wire.Registration{State: reg.State, Number: reg.Number, Enabled: reg.Enabled})
		// The home state's registration: an enabled one wins.
		if reg.State == o.Address.State && (out.Sintegra.HomeStateRegistration == nil || reg.Enabled) {
			n := reg.Number
			out.Sintegra.HomeStateRegistration = &n
		}
	}

	office := "/office/" + o.TaxID
	out.Files = legacyFilesJSON{
		Registration: h.link(r, service.KindCertificate, "/rfb/certificate", url.Values{"taxId": {o.TaxID}, "pages": {"REGISTRATION"}}),
		Membership:   h.link(r, service.KindCertificate, "/rfb/certificate", url.Values{"taxId": {o.TaxID}, "pages": {"MEMBERS"}}),
	}
	out.Maps = legacyMapsJSON{
		Roads:     h.link(r, service.KindMap, office+"/map", url.Values{"type": {"roadmap"}}),
		Satellite: h.link(r, service.KindMap, office+"/map", url.Values{"type": {"satellite"}}),
		Street:    h.link(r, service.KindStreet, office+"/street", url.Values{}),
	}
	return out
}

// address converts the address; the city is the IBGE name, with its
// accents, when the municipality file knows the code.
func (h legacyRoutes) address(a model.Address) legacyAddressJSON {
	out := legacyAddressJSON{
		Street:       a.StreetOrNil(),
		Number:       a.NumberOrNil(),
		Details:      a.Details,
		Zip:          a.ZipOrNil(),
		Neighborhood: a.DistrictOrNil(),
		City:         a.CityOrNil(),
		State:        a.StateOrNil(),
	}
	if a.Municipality != nil {
		code := strconv.Itoa(*a.Municipality)
		out.CityIBGE = &code
		if len(code) == 7 {
			st := code[:2] // IBGE municipality codes start with their state's code
			out.StateIBGE = &st
		}
		if m, ok := h.seats.Lookup(*a.Municipality); ok && m.Name != "" {
			out.City = &m.Name
		}
	}
	return out
}

// link is a file route's link for the asker (service.Link), nil when the
// asker may not open it.
func (h legacyRoutes) link(r *http.Request, kind service.Kind, path string, q url.Values) *string {
	ref, ok := h.svc.Link(r.Context(), kind, path, q)
	if !ok {
		return nil
	}
	return &ref
}

func activityOf(c model.Code) legacyCodeJSON {
	return legacyCodeJSON{Code: fmt.Sprintf("%07d", c.ID), Description: textOrNull(c.Text)}
}

func roleOf(c model.Code) legacyCodeJSON {
	return legacyCodeJSON{Code: strconv.Itoa(c.ID), Description: textOrNull(c.Text)}
}

// phoneOf is the legacy phone: area code and number as one digit string.
func phoneOf(p model.Phone) *string {
	s := p.Area + p.Number
	return &s
}

// textOrNull is a code's text, null when the registry's table lacks it.
func textOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
