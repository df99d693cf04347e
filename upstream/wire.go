package upstream

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// The JSON the contract's API emits (our rest/ and the commercial API
// alike), decoded leniently: a field the source leaves out keeps its zero
// value rather than failing the fetch.

// day is a calendar date "YYYY-MM-DD"; null or empty decodes as nil.
type day struct{ t *time.Time }

func (d *day) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == nil || *s == "" {
		d.t = nil
		return nil
	}
	// Some sources send a full timestamp where a date is meant.
	v := *s
	if len(v) > 10 {
		v = v[:10]
	}
	t, err := time.Parse("2006-01-02", v)
	if err != nil {
		return err
	}
	d.t = &t
	return nil
}

// stamp is the `updated` timestamp (ISO 8601, with or without milliseconds);
// anything unparseable decodes as zero, and the caller uses its own clock.
type stamp struct{ t time.Time }

func (s *stamp) UnmarshalJSON(b []byte) error {
	var v *string
	if err := json.Unmarshal(b, &v); err != nil || v == nil {
		return nil //nolint:nilerr // an unreadable stamp is no stamp: the caller's clock stands in
	}
	if t, err := time.Parse(time.RFC3339Nano, *v); err == nil {
		s.t = t.UTC()
	}
	return nil
}

type codeWire struct {
	ID   int     `json:"id"`
	Text *string `json:"text"`
}

func (c codeWire) model() model.Code { return model.Code{ID: c.ID, Text: deref(c.Text)} }

func codePtr(c *codeWire) *model.Code {
	if c == nil {
		return nil
	}
	v := c.model()
	return &v
}

type sizeWire struct {
	ID      int    `json:"id"`
	Acronym string `json:"acronym"`
	Text    string `json:"text"`
}

type countryWire struct {
	ID   *int    `json:"id"`
	Name *string `json:"name"`
}

func (c *countryWire) model() model.Country {
	if c == nil {
		return model.Country{}
	}
	out := model.Country{Name: deref(c.Name)}
	if c.ID != nil {
		out.ID = *c.ID
	}
	return out
}

type addressWire struct {
	Municipality *int         `json:"municipality"`
	Street       string       `json:"street"`
	Number       string       `json:"number"`
	Details      *string      `json:"details"`
	District     string       `json:"district"`
	City         string       `json:"city"`
	State        string       `json:"state"`
	Zip          string       `json:"zip"`
	Country      *countryWire `json:"country"`
}

type phoneWire struct {
	Area   string `json:"area"`
	Number string `json:"number"`
}

type emailWire struct {
	Address string `json:"address"`
	Domain  string `json:"domain"`
}

type registrationWire struct {
	State   string `json:"state"`
	Number  string `json:"number"`
	Enabled bool   `json:"enabled"`
}

// personWire is a member's person in the registry record: name, tax id and
// age band only.
type personWire struct {
	Name  string  `json:"name"`
	TaxID *string `json:"taxId"`
	Age   *string `json:"age"`
}

type agentWire struct {
	Person personWire `json:"person"`
	Role   codeWire   `json:"role"`
}

type memberWire struct {
	Since  day        `json:"since"`
	Person personWire `json:"person"`
	Role   codeWire   `json:"role"`
	Agent  *agentWire `json:"agent"`
}

type specialWire struct {
	ID   int    `json:"id"`
	Text string `json:"text"`
}

// registryWire is the federal registry record (GET /rfb).
type registryWire struct {
	Updated        stamp              `json:"updated"`
	TaxID          string             `json:"taxId"`
	Name           string             `json:"name"`
	Alias          *string            `json:"alias"`
	Founded        day                `json:"founded"`
	Jurisdiction   *string            `json:"jurisdiction"`
	Equity         json.Number        `json:"equity"`
	Head           bool               `json:"head"`
	Nature         codeWire           `json:"nature"`
	Size           *sizeWire          `json:"size"`
	StatusDate     day                `json:"statusDate"`
	Status         codeWire           `json:"status"`
	Reason         *codeWire          `json:"reason"`
	SpecialDate    day                `json:"specialDate"`
	Special        *specialWire       `json:"special"`
	Address        addressWire        `json:"address"`
	Phones         []phoneWire        `json:"phones"`
	Emails         []emailWire        `json:"emails"`
	MainActivity   codeWire           `json:"mainActivity"`
	SideActivities []codeWire         `json:"sideActivities"`
	Members        []memberWire       `json:"members"`
	Registrations  []registrationWire `json:"registrations"`
}

// foreignRoles are the qualifications of members domiciled abroad.
var foreignRoles = map[int]bool{37: true, 38: true}

// personOf rebuilds a person of the registry record. The record carries no
// id and no type: the type follows from the tax id (a CNPJ is a legal
// person, a masked CPF a natural one, none or a foreign qualification a
// foreigner), and the id is then the same deterministic id the importer
// gives. A foreigner's country is not in the record and stays unknown.
func personOf(p personWire, role int, updated time.Time) model.Person {
	taxID := strings.TrimSpace(deref(p.TaxID))
	t := cnpj.Unknown
	switch {
	case foreignRoles[role] || taxID == "":
		t = cnpj.Foreign
	case cnpj.MaskedCPF(taxID):
		t = cnpj.Natural
	default:
		if _, err := cnpj.Parse(taxID); err == nil {
			t = cnpj.Legal
		}
	}
	out := model.Person{
		Updated: updated,
		ID:      cnpj.PersonID(t, taxID, p.Name),
		Type:    string(t),
		Name:    p.Name,
		Age:     p.Age,
	}
	if taxID != "" {
		out.TaxID = &taxID
	}
	return out
}

func (w *registryWire) model() model.Office {
	root := string(cnpj.CNPJ(w.TaxID).Root())
	o := model.Office{
		Updated:        w.Updated.t,
		TaxID:          w.TaxID,
		Root:           root,
		Alias:          nonEmpty(w.Alias),
		Founded:        w.Founded.t,
		Head:           w.Head,
		StatusDate:     w.StatusDate.t,
		Status:         w.Status.model(),
		Address:        w.address(),
		Phones:         make([]model.Phone, len(w.Phones)),
		Emails:         make([]model.Email, len(w.Emails)),
		MainActivity:   w.MainActivity.model(),
		SideActivities: make([]model.Code, len(w.SideActivities)),
		SpecialDate:    w.SpecialDate.t,
	}
	if o.Status.ID != 2 {
		o.Reason = codePtr(w.Reason)
	}
	if w.Special != nil && w.SpecialDate.t != nil {
		o.Special = &model.Special{ID: w.Special.ID, Text: w.Special.Text}
	}
	for i, p := range w.Phones {
		o.Phones[i] = model.Phone{Area: p.Area, Number: p.Number}
	}
	for i, e := range w.Emails {
		o.Emails[i] = model.Email{Address: e.Address, Domain: e.Domain}
	}
	for i, a := range w.SideActivities {
		o.SideActivities[i] = a.model()
	}
	c := &model.Company{
		Updated:      w.Updated.t,
		Root:         root,
		Name:         w.Name,
		Equity:       equity(w.Equity),
		Nature:       w.Nature.model(),
		Jurisdiction: nonEmpty(w.Jurisdiction),
		Members:      make([]model.Member, len(w.Members)),
	}
	if w.Size != nil {
		c.Size = &model.Size{ID: w.Size.ID, Acronym: w.Size.Acronym, Text: w.Size.Text}
	}
	for i, m := range w.Members {
		c.Members[i] = model.Member{
			Root:   root,
			Since:  m.Since.t,
			Person: personOf(m.Person, m.Role.ID, w.Updated.t),
			Role:   m.Role.model(),
		}
		if m.Agent != nil {
			c.Members[i].Agent = &model.Agent{
				Person: personOf(m.Agent.Person, m.Agent.Role.ID, w.Updated.t),
				Role:   m.Agent.Role.model(),
			}
		}
	}
	o.Company = c
	return o
}

func (w *registryWire) address() model.Address {
	a := w.Address
	return model.Address{
		Municipality: a.Municipality,
		Street:       a.Street,
		Number:       a.Number,
		Details:      nonEmpty(a.Details),
		District:     a.District,
		City:         a.City,
		State:        a.State,
		Zip:          a.Zip,
		Country:      a.Country.model(),
	}
}

type periodWire struct {
	From  day     `json:"from"`
	Until day     `json:"until"`
	Text  *string `json:"text"`
}

type regimeWire struct {
	Optant  bool         `json:"optant"`
	Since   day          `json:"since"`
	History []periodWire `json:"history"`
}

func (r *regimeWire) model() model.Simples {
	if r == nil {
		return model.Simples{History: []model.SimplesPeriod{}}
	}
	s := model.Simples{Optant: r.Optant, Since: r.Since.t, History: make([]model.SimplesPeriod, 0, len(r.History))}
	for _, p := range r.History {
		if p.From.t == nil {
			continue
		}
		s.History = append(s.History, model.SimplesPeriod{From: *p.From.t, Until: p.Until.t, Text: deref(p.Text)})
	}
	return s
}

// simplesWire is the Simples lookup (GET /simples).
type simplesWire struct {
	Updated stamp       `json:"updated"`
	TaxID   string      `json:"taxId"`
	Simples *regimeWire `json:"simples"`
	Simei   *regimeWire `json:"simei"`
}

// registrationsWire is what the office lookup's answer says of state
// registrations.
type registrationsWire struct {
	Updated       stamp              `json:"updated"`
	Registrations []registrationWire `json:"registrations"`
}

// errorWire is the contract's error body.
type errorWire struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// equity keeps the source's decimal text; a missing one is 0.
func equity(n json.Number) string {
	if n == "" {
		return "0"
	}
	return n.String()
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nonEmpty(s *string) *string {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil
	}
	v := *s
	return &v
}
