package rest

import (
	"encoding/json"
	"time"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// The JSON shapes of the contract. Field order follows interface-spec.md;
// presence rules are spelled out with omitzero: a field tagged so is absent
// when its optional wrapper is unset, and null when set to nil.

// optional is a field whose presence is decided apart from its value.
type optional[T any] struct {
	set bool
	v   *T
}

func some[T any](v *T) optional[T] { return optional[T]{set: true, v: v} }

func (o optional[T]) IsZero() bool { return !o.set }

func (o optional[T]) MarshalJSON() ([]byte, error) { return json.Marshal(o.v) }

// date is a calendar date as YYYY-MM-DD; nil marshals as null.
type date struct{ t time.Time }

// MarshalText rather than MarshalJSON: encoding/json re-scans and compacts
// what a MarshalJSON returns, which dominated big answers.
func (d date) MarshalText() ([]byte, error) {
	return d.t.AppendFormat(make([]byte, 0, 10), "2006-01-02"), nil
}

func dateOf(t *time.Time) *date {
	if t == nil {
		return nil
	}
	return &date{*t}
}

// updatedOf formats the time an answer was obtained, in UTC with
// milliseconds, as the contract's clients parse it.
func updatedOf(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// textOf is a code's text, null when the registry's table lacks the code.
func textOf(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

type codeJSON struct {
	ID   int     `json:"id"`
	Text *string `json:"text"`
}

func codeOf(c model.Code) codeJSON { return codeJSON{ID: c.ID, Text: textOf(c.Text)} }

func codePtr(c *model.Code) *codeJSON {
	if c == nil {
		return nil
	}
	v := codeOf(*c)
	return &v
}

func codesOf(cs []model.Code) []codeJSON {
	out := make([]codeJSON, len(cs))
	for i, c := range cs {
		out[i] = codeOf(c)
	}
	return out
}

type sizeJSON struct {
	ID      int    `json:"id"`
	Acronym string `json:"acronym"`
	Text    string `json:"text"`
}

func sizeOf(s *model.Size) *sizeJSON {
	if s == nil {
		return nil
	}
	return &sizeJSON{ID: s.ID, Acronym: s.Acronym, Text: s.Text}
}

type countryJSON struct {
	ID   *int    `json:"id"` // null when the registry's code has no M49 equivalent
	Name *string `json:"name"`
}

func countryOf(c model.Country) countryJSON {
	out := countryJSON{Name: textOf(c.Name)}
	if c.ID != 0 {
		id := c.ID
		out.ID = &id
	}
	return out
}

type addressJSON struct {
	Municipality *int        `json:"municipality"`
	Street       string      `json:"street"`
	Number       string      `json:"number"`
	Details      *string     `json:"details"`
	District     string      `json:"district"`
	City         string      `json:"city"`
	State        string      `json:"state"`
	Zip          string      `json:"zip"`
	Country      countryJSON `json:"country"`
}

func addressOf(a model.Address) addressJSON {
	return addressJSON{
		Municipality: a.Municipality,
		Street:       a.Street,
		Number:       a.Number,
		Details:      a.Details,
		District:     a.District,
		City:         a.City,
		State:        a.State,
		Zip:          a.Zip,
		Country:      countryOf(a.Country),
	}
}

type phoneJSON struct {
	Area   string `json:"area"`
	Number string `json:"number"`
}

type emailJSON struct {
	Address string `json:"address"`
	Domain  string `json:"domain"`
}

func phonesOf(ps []model.Phone) []phoneJSON {
	out := make([]phoneJSON, len(ps))
	for i, p := range ps {
		out[i] = phoneJSON{Area: p.Area, Number: p.Number}
	}
	return out
}

func emailsOf(es []model.Email) []emailJSON {
	out := make([]emailJSON, len(es))
	for i, e := range es {
		out[i] = emailJSON{Address: e.Address, Domain: e.Domain}
	}
	return out
}

type registrationJSON struct {
	State   string `json:"state"`
	Number  string `json:"number"`
	Enabled bool   `json:"enabled"`
}

func registrationsOf(rs []model.Registration) optional[[]registrationJSON] {
	if rs == nil {
		return optional[[]registrationJSON]{}
	}
	out := make([]registrationJSON, len(rs))
	for i, r := range rs {
		out[i] = registrationJSON{State: r.State, Number: r.Number, Enabled: r.Enabled}
	}
	return some(&out)
}

// companyID is the company id: a JSON number for a numeric root (the
// contract), a string for an alphanumeric one.
func companyID(root string) any {
	if n, ok := cnpj.Root(root).Int(); ok {
		return n
	}
	return root
}

// personJSON is a person as the office, company and person lookups show it.
// age is absent for legal persons; country only for foreign ones.
type personJSON struct {
	ID         string                `json:"id"`
	Name       string                `json:"name"`
	Type       string                `json:"type"`
	TaxID      *string               `json:"taxId"`
	Age        optional[string]      `json:"age,omitzero"`
	Country    optional[countryJSON] `json:"country,omitzero"`
	Membership *[]membershipJSON     `json:"membership,omitempty"` // person lookup only
}

func personOf(p model.Person) personJSON {
	out := personJSON{ID: p.ID, Name: p.Name, Type: p.Type, TaxID: p.TaxID}
	if p.Type != "LEGAL" {
		out.Age = some(p.Age)
	}
	if p.Type == "FOREIGN" {
		var c *countryJSON
		if p.Country != nil {
			v := countryOf(*p.Country)
			c = &v
		}
		out.Country = some(c)
	}
	return out
}

type agentJSON struct {
	Person personJSON `json:"person"`
	Role   codeJSON   `json:"role"`
}

type memberJSON struct {
	Since  *date      `json:"since"`
	Person personJSON `json:"person"`
	Role   codeJSON   `json:"role"`
	Agent  *agentJSON `json:"agent,omitempty"`
}

func membersOf(ms []model.Member) []memberJSON {
	out := make([]memberJSON, len(ms))
	for i, m := range ms {
		out[i] = memberJSON{Since: dateOf(m.Since), Person: personOf(m.Person), Role: codeOf(m.Role)}
		if m.Agent != nil {
			out[i].Agent = &agentJSON{Person: personOf(m.Agent.Person), Role: codeOf(m.Agent.Role)}
		}
	}
	return out
}

type simplesPeriodJSON struct {
	From  date    `json:"from"`
	Until *date   `json:"until"`
	Text  *string `json:"text"`
}

type simplesJSON struct {
	Optant  bool                          `json:"optant"`
	Since   *date                         `json:"since"`
	History optional[[]simplesPeriodJSON] `json:"history,omitzero"`
}

func simplesOf(s *model.Simples) optional[simplesJSON] {
	if s == nil {
		return optional[simplesJSON]{}
	}
	out := simplesJSON{Optant: s.Optant, Since: dateOf(s.Since)}
	if s.History != nil {
		h := make([]simplesPeriodJSON, len(s.History))
		for i, p := range s.History {
			h[i] = simplesPeriodJSON{From: date{p.From}, Until: dateOf(p.Until), Text: textOf(p.Text)}
		}
		out.History = some(&h)
	}
	return some(&out)
}

// companyJSON serves the office lookup (no updated, no offices) and the
// company lookup (both).
type companyJSON struct {
	Updated optional[string]      `json:"updated,omitzero"`
	ID      any                   `json:"id"`
	Name    string                `json:"name"`
	Equity  json.Number           `json:"equity"`
	Nature  codeJSON              `json:"nature"`
	Size    *sizeJSON             `json:"size"`
	Simples optional[simplesJSON] `json:"simples,omitzero"`
	Simei   optional[simplesJSON] `json:"simei,omitzero"`
	Members []memberJSON          `json:"members"`
	Offices *[]officeBriefJSON    `json:"offices,omitempty"` // company lookup only; a pointer, not optional: thousands of items
}

func companyOf(c model.Company) companyJSON {
	return companyJSON{
		ID:      companyID(c.Root),
		Name:    c.Name,
		Equity:  json.Number(c.Equity),
		Nature:  codeOf(c.Nature),
		Size:    sizeOf(c.Size),
		Simples: simplesOf(c.Simples),
		Simei:   simplesOf(c.Simei),
		Members: membersOf(c.Members),
	}
}

// officeBriefJSON is an item of the company lookup's office list.
type officeBriefJSON struct {
	TaxID        string              `json:"taxId"`
	Alias        *string             `json:"alias"`
	Founded      *date               `json:"founded"`
	Head         bool                `json:"head"`
	StatusDate   *date               `json:"statusDate"`
	Status       codeJSON            `json:"status"`
	Reason       optional[*codeJSON] `json:"reason,omitzero"`
	MainActivity codeJSON            `json:"mainActivity"`
}

// reasonOf is present only when the status is not Ativa (2).
func reasonOf(status model.Code, r *model.Code) optional[*codeJSON] {
	if status.ID == 2 {
		return optional[*codeJSON]{}
	}
	c := codePtr(r)
	return some(&c)
}

// presentCompany is the company lookup's answer.
func presentCompany(c model.Company) companyJSON {
	out := companyOf(c)
	updated := updatedOf(c.Updated)
	out.Updated = some(&updated)
	offices := make([]officeBriefJSON, len(c.Offices))
	for i, o := range c.Offices {
		offices[i] = officeBriefJSON{
			TaxID:        o.TaxID,
			Alias:        o.Alias,
			Founded:      dateOf(o.Founded),
			Head:         o.Head,
			StatusDate:   dateOf(o.StatusDate),
			Status:       codeOf(o.Status),
			Reason:       reasonOf(o.Status, o.Reason),
			MainActivity: codeOf(o.MainActivity),
		}
	}
	out.Offices = &offices
	return out
}

type officeJSON struct {
	Updated        string                       `json:"updated"`
	TaxID          string                       `json:"taxId"`
	Alias          *string                      `json:"alias"`
	Founded        *date                        `json:"founded"`
	Head           bool                         `json:"head"`
	Company        companyJSON                  `json:"company"`
	StatusDate     *date                        `json:"statusDate"`
	Status         codeJSON                     `json:"status"`
	Reason         optional[*codeJSON]          `json:"reason,omitzero"`
	Address        addressJSON                  `json:"address"`
	Phones         []phoneJSON                  `json:"phones"`
	Emails         []emailJSON                  `json:"emails"`
	MainActivity   codeJSON                     `json:"mainActivity"`
	SideActivities []codeJSON                   `json:"sideActivities"`
	Registrations  optional[[]registrationJSON] `json:"registrations,omitzero"`
}

// presentOffice is the office lookup's answer.
func presentOffice(o model.Office) officeJSON {
	return officeJSON{
		Updated:        updatedOf(o.Updated),
		TaxID:          o.TaxID,
		Alias:          o.Alias,
		Founded:        dateOf(o.Founded),
		Head:           o.Head,
		Company:        companyOf(*o.Company),
		StatusDate:     dateOf(o.StatusDate),
		Status:         codeOf(o.Status),
		Reason:         reasonOf(o.Status, o.Reason),
		Address:        addressOf(o.Address),
		Phones:         phonesOf(o.Phones),
		Emails:         emailsOf(o.Emails),
		MainActivity:   codeOf(o.MainActivity),
		SideActivities: codesOf(o.SideActivities),
		Registrations:  registrationsOf(o.Registrations),
	}
}

// registryPersonJSON is a member's person in the registry record: the
// registry publishes only name, tax id and age band.
type registryPersonJSON struct {
	Name  string           `json:"name"`
	TaxID *string          `json:"taxId"`
	Age   optional[string] `json:"age,omitzero"`
}

func registryPersonOf(p model.Person) registryPersonJSON {
	out := registryPersonJSON{Name: p.Name, TaxID: p.TaxID}
	if p.Type != "LEGAL" {
		out.Age = some(p.Age)
	}
	return out
}

type registryAgentJSON struct {
	Person registryPersonJSON `json:"person"`
	Role   codeJSON           `json:"role"`
}

type registryMemberJSON struct {
	Since  *date              `json:"since"`
	Person registryPersonJSON `json:"person"`
	Role   codeJSON           `json:"role"`
	Agent  *registryAgentJSON `json:"agent,omitempty"`
}

type specialJSON struct {
	ID   int    `json:"id"`
	Text string `json:"text"`
}

type registryJSON struct {
	Updated        string                 `json:"updated"`
	TaxID          string                 `json:"taxId"`
	Name           string                 `json:"name"`
	Alias          *string                `json:"alias"`
	Founded        *date                  `json:"founded"`
	Jurisdiction   *string                `json:"jurisdiction"`
	Equity         json.Number            `json:"equity"`
	Head           bool                   `json:"head"`
	Nature         codeJSON               `json:"nature"`
	Size           *sizeJSON              `json:"size"`
	StatusDate     *date                  `json:"statusDate"`
	Status         codeJSON               `json:"status"`
	Reason         optional[*codeJSON]    `json:"reason,omitzero"`
	SpecialDate    *date                  `json:"specialDate"`
	Special        optional[*specialJSON] `json:"special,omitzero"`
	Address        addressJSON            `json:"address"`
	Phones         []phoneJSON            `json:"phones"`
	Emails         []emailJSON            `json:"emails"`
	MainActivity   codeJSON               `json:"mainActivity"`
	SideActivities []codeJSON             `json:"sideActivities"`
	Registrations  []registrationJSON     `json:"registrations"`
	Members        []registryMemberJSON   `json:"members"`
}

// presentRegistry is the federal registry record (/rfb).
func presentRegistry(o model.Office) registryJSON {
	c := o.Company
	out := registryJSON{
		Updated:        updatedOf(o.Updated),
		TaxID:          o.TaxID,
		Name:           c.Name,
		Alias:          o.Alias,
		Founded:        dateOf(o.Founded),
		Jurisdiction:   c.Jurisdiction,
		Equity:         json.Number(c.Equity),
		Head:           o.Head,
		Nature:         codeOf(c.Nature),
		Size:           sizeOf(c.Size),
		StatusDate:     dateOf(o.StatusDate),
		Status:         codeOf(o.Status),
		Reason:         reasonOf(o.Status, o.Reason),
		SpecialDate:    dateOf(o.SpecialDate),
		Address:        addressOf(o.Address),
		Phones:         phonesOf(o.Phones),
		Emails:         emailsOf(o.Emails),
		MainActivity:   codeOf(o.MainActivity),
		SideActivities: codesOf(o.SideActivities),
		Registrations:  []registrationJSON{},
		Members:        make([]registryMemberJSON, len(c.Members)),
	}
	if o.Registrations != nil {
		out.Registrations = *registrationsOf(o.Registrations).v
	}
	if o.SpecialDate != nil {
		var s *specialJSON
		if o.Special != nil {
			s = &specialJSON{ID: o.Special.ID, Text: o.Special.Text}
		}
		out.Special = some(&s)
	}
	for i, m := range c.Members {
		out.Members[i] = registryMemberJSON{Since: dateOf(m.Since), Person: registryPersonOf(m.Person), Role: codeOf(m.Role)}
		if m.Agent != nil {
			out.Members[i].Agent = &registryAgentJSON{Person: registryPersonOf(m.Agent.Person), Role: codeOf(m.Agent.Role)}
		}
	}
	return out
}

type membershipJSON struct {
	Since   *date             `json:"since"`
	Role    codeJSON          `json:"role"`
	Company membershipCompany `json:"company"`
}

type membershipCompany struct {
	ID     any         `json:"id"`
	Name   string      `json:"name"`
	Equity json.Number `json:"equity"`
	Nature codeJSON    `json:"nature"`
	Size   *sizeJSON   `json:"size"`
}

type personLookupJSON struct {
	Updated string `json:"updated"`
	personJSON
}

// presentPerson is the person lookup's answer.
func presentPerson(p model.Person) personLookupJSON {
	out := personLookupJSON{Updated: updatedOf(p.Updated), personJSON: personOf(p)}
	ms := make([]membershipJSON, len(p.Membership))
	for i, m := range p.Membership {
		ms[i] = membershipJSON{
			Since: dateOf(m.Since),
			Role:  codeOf(m.Role),
			Company: membershipCompany{
				ID:     companyID(m.Company.Root),
				Name:   m.Company.Name,
				Equity: json.Number(m.Company.Equity),
				Nature: codeOf(m.Company.Nature),
				Size:   sizeOf(m.Company.Size),
			},
		}
	}
	out.Membership = &ms
	return out
}

type simplesLookupJSON struct {
	Updated string                `json:"updated"`
	TaxID   string                `json:"taxId"`
	Simples optional[simplesJSON] `json:"simples"`
	Simei   optional[simplesJSON] `json:"simei"`
}

// presentSimples is the Simples lookup's answer.
func presentSimples(r model.SimplesRecord) simplesLookupJSON {
	return simplesLookupJSON{
		Updated: updatedOf(r.Updated),
		TaxID:   r.TaxID,
		Simples: simplesOf(&r.Simples),
		Simei:   simplesOf(&r.Simei),
	}
}
