package wire

import (
	"encoding/json"
	"strings"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// Address of an office; latitude and longitude only with the office
// lookup's geocoding option, when the geocoder found the address.
type Address struct {
	Municipality *int     `json:"municipality"`
	Street       *string  `json:"street"`
	Number       *string  `json:"number"`
	Details      *string  `json:"details"`
	District     *string  `json:"district"`
	City         *string  `json:"city"`
	State        *string  `json:"state"`
	Zip          *string  `json:"zip"`
	Latitude     *float64 `json:"latitude,omitempty"`
	Longitude    *float64 `json:"longitude,omitempty"`
	Country      *Country `json:"country"`
}

func addressOf(a model.Address) Address {
	c := countryOf(a.Country)
	var lat, lon *float64
	if a.Coordinates != nil {
		lat, lon = &a.Coordinates.Latitude, &a.Coordinates.Longitude
	}
	return Address{
		Latitude:     lat,
		Longitude:    lon,
		Municipality: a.Municipality,
		Street:       a.StreetOrNil(),
		Number:       a.NumberOrNil(),
		Details:      a.Details,
		District:     a.DistrictOrNil(),
		City:         a.CityOrNil(),
		State:        a.StateOrNil(),
		Zip:          a.ZipOrNil(),
		Country:      &c,
	}
}

func (a Address) model() model.Address {
	var c *model.Coordinates
	if a.Latitude != nil && a.Longitude != nil {
		c = &model.Coordinates{Latitude: *a.Latitude, Longitude: *a.Longitude}
	}
	return model.Address{
		Coordinates:  c,
		Municipality: a.Municipality,
		Street:       deref(a.Street),
		Number:       deref(a.Number),
		Details:      nonEmpty(a.Details),
		District:     deref(a.District),
		City:         deref(a.City),
		State:        deref(a.State),
		Zip:          deref(a.Zip),
		Country:      a.Country.model(),
	}
}

func phonesOf(ps []model.Phone) []Phone {
	out := make([]Phone, len(ps))
	for i, p := range ps {
		out[i] = Phone{Area: p.Area, Number: p.Number}
	}
	return out
}

func emailsOf(es []model.Email) []Email {
	out := make([]Email, len(es))
	for i, e := range es {
		out[i] = Email{Address: e.Address, Domain: e.Domain}
	}
	return out
}

// RegistrationsOf lists registrations; nil (not asked for) is absent.
func RegistrationsOf(rs []model.Registration) Optional[[]Registration] {
	if rs == nil {
		return Optional[[]Registration]{}
	}
	out := registrationsOf(rs)
	return Some(&out)
}

func registrationsOf(rs []model.Registration) []Registration {
	out := make([]Registration, len(rs))
	for i, r := range rs {
		out[i] = Registration{State: r.State, Number: r.Number, Enabled: r.Enabled,
			StatusDate: DateOf(r.StatusDate), Status: codePtr(r.Status), Type: codePtr(r.Type)}
	}
	return out
}

func registrationsModel(rs []Registration) []model.Registration {
	out := make([]model.Registration, len(rs))
	for i, r := range rs {
		out[i] = model.Registration{State: r.State, Number: r.Number, Enabled: r.Enabled, StatusDate: r.StatusDate.Time()}
		if r.Status != nil {
			c := r.Status.Model()
			out[i].Status = &c
		}
		if r.Type != nil {
			c := r.Type.Model()
			out[i].Type = &c
		}
	}
	return out
}

// CompanyID is the company id: a JSON number for a numeric root (the
// contract), a string for an alphanumeric one.
func CompanyID(root string) any {
	if n, ok := cnpj.Root(root).Int(); ok {
		return n
	}
	return root
}

// Person is a person as the office, company and person lookups show it:
// age absent for legal persons, country only for foreign ones.
type Person struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Type       string            `json:"type"`
	TaxID      *string           `json:"taxId"`
	Age        Optional[string]  `json:"age,omitzero"`
	Country    Optional[Country] `json:"country,omitzero"`
	Membership *[]Membership     `json:"membership,omitempty"` // person lookup only
}

// PersonOf is the wire person of p.
func PersonOf(p model.Person) Person {
	out := Person{ID: p.ID, Name: p.Name, Type: p.Type, TaxID: p.TaxID}
	if p.HasAge() {
		out.Age = Some(p.Age)
	}
	if p.Type == "FOREIGN" {
		var c *Country
		if p.Country != nil {
			v := countryOf(*p.Country)
			c = &v
		}
		out.Country = Some(c)
	}
	return out
}

// Agent is the legal representative of a member.
type Agent struct {
	Person Person `json:"person"`
	Role   Code   `json:"role"`
}

// Member is a person's role in a company.
type Member struct {
	Since  *Date  `json:"since"`
	Person Person `json:"person"`
	Role   Code   `json:"role"`
	Agent  *Agent `json:"agent,omitempty"`
}

func membersOf(ms []model.Member) []Member {
	out := make([]Member, len(ms))
	for i, m := range ms {
		out[i] = Member{Since: DateOf(m.Since), Person: PersonOf(m.Person), Role: CodeOf(m.Role)}
		if m.Agent != nil {
			out[i].Agent = &Agent{Person: PersonOf(m.Agent.Person), Role: CodeOf(m.Agent.Role)}
		}
	}
	return out
}

// SimplesPeriod is one period of enrolment.
type SimplesPeriod struct {
	From  Date    `json:"from"`
	Until *Date   `json:"until"`
	Text  *string `json:"text"`
}

// Simples is the state of one regime.
type Simples struct {
	Optant  bool                      `json:"optant"`
	Since   *Date                     `json:"since"`
	History Optional[[]SimplesPeriod] `json:"history,omitzero"`
}

// SimplesOf is a regime; nil (not asked for) is absent.
func SimplesOf(s *model.Simples) Optional[Simples] {
	if s == nil {
		return Optional[Simples]{}
	}
	out := Simples{Optant: s.Optant, Since: DateOf(s.Since)}
	if s.History != nil {
		h := make([]SimplesPeriod, len(s.History))
		for i, p := range s.History {
			h[i] = SimplesPeriod{From: Date{p.From}, Until: DateOf(p.Until), Text: textOf(p.Text)}
		}
		out.History = Some(&h)
	}
	return Some(&out)
}

// simplesModel reads a regime; absent or null is "not enrolled, no
// history known".
func simplesModel(o Optional[Simples]) model.Simples {
	r := o.Value()
	if r == nil {
		return model.Simples{History: []model.SimplesPeriod{}}
	}
	s := model.Simples{Optant: r.Optant, Since: r.Since.Time(), History: []model.SimplesPeriod{}}
	if h := r.History.Value(); h != nil {
		for _, p := range *h {
			if p.From.T.IsZero() {
				continue
			}
			s.History = append(s.History, model.SimplesPeriod{From: p.From.T, Until: p.Until.Time(), Text: deref(p.Text)})
		}
	}
	return s
}

// Company is the company in the office lookup (no updated, no offices) and
// the company lookup (both).
type Company struct {
	Updated Optional[Stamp]   `json:"updated,omitzero"`
	ID      any               `json:"id"`
	Name    string            `json:"name"`
	Equity  json.Number       `json:"equity"`
	Nature  Code              `json:"nature"`
	Size    *Size             `json:"size"`
	Simples Optional[Simples] `json:"simples,omitzero"`
	Simei   Optional[Simples] `json:"simei,omitzero"`
	Members []Member          `json:"members"`
	Offices *[]OfficeBrief    `json:"offices,omitempty"` // company lookup only; a pointer, not Optional: thousands of items
}

func companyOf(c model.Company) Company {
	return Company{
		ID:      CompanyID(c.Root),
		Name:    c.Name,
		Equity:  json.Number(c.Equity),
		Nature:  CodeOf(c.Nature),
		Size:    sizeOf(c.Size),
		Simples: SimplesOf(c.Simples),
		Simei:   SimplesOf(c.Simei),
		Members: membersOf(c.Members),
	}
}

// OfficeBrief is an item of the company lookup's office list.
type OfficeBrief struct {
	TaxID        string          `json:"taxId"`
	Alias        *string         `json:"alias"`
	Founded      *Date           `json:"founded"`
	Head         bool            `json:"head"`
	StatusDate   *Date           `json:"statusDate"`
	Status       Code            `json:"status"`
	Reason       Optional[*Code] `json:"reason,omitzero"`
	MainActivity Code            `json:"mainActivity"`
}

// reasonOf is present only when the status is not Ativa (2).
func reasonOf(status model.Code, r *model.Code) Optional[*Code] {
	if status.ID == 2 {
		return Optional[*Code]{}
	}
	c := codePtr(r)
	return Some(&c)
}

// CompanyLookupOf is the company lookup's answer.
func CompanyLookupOf(c model.Company) Company {
	out := companyOf(c)
	updated := StampOf(c.Updated)
	out.Updated = Some(&updated)
	offices := make([]OfficeBrief, len(c.Offices))
	for i, o := range c.Offices {
		offices[i] = OfficeBrief{
			TaxID:        o.TaxID,
			Alias:        o.Alias,
			Founded:      DateOf(o.Founded),
			Head:         o.Head,
			StatusDate:   DateOf(o.StatusDate),
			Status:       CodeOf(o.Status),
			Reason:       reasonOf(o.Status, o.Reason),
			MainActivity: CodeOf(o.MainActivity),
		}
	}
	out.Offices = &offices
	return out
}

// Office is the office lookup's answer.
type Office struct {
	Updated        Stamp                    `json:"updated"`
	TaxID          string                   `json:"taxId"`
	Alias          *string                  `json:"alias"`
	Founded        *Date                    `json:"founded"`
	Head           bool                     `json:"head"`
	Company        Company                  `json:"company"`
	StatusDate     *Date                    `json:"statusDate"`
	Status         Code                     `json:"status"`
	Reason         Optional[*Code]          `json:"reason,omitzero"`
	SpecialDate    *Date                    `json:"specialDate"`
	Special        Optional[*Special]       `json:"special,omitzero"`
	Address        Address                  `json:"address"`
	Phones         []Phone                  `json:"phones"`
	Emails         []Email                  `json:"emails"`
	MainActivity   Code                     `json:"mainActivity"`
	SideActivities []Code                   `json:"sideActivities"`
	Registrations  Optional[[]Registration] `json:"registrations,omitzero"`
	Suframa        SuframaList              `json:"suframa,omitzero"`
	Links          Optional[[]Link]         `json:"links,omitzero"`
}

// OfficeOf is the office lookup's answer for o.
func OfficeOf(o model.Office) Office {
	return Office{
		Updated:        StampOf(o.Updated),
		TaxID:          o.TaxID,
		Alias:          o.Alias,
		Founded:        DateOf(o.Founded),
		Head:           o.Head,
		Company:        companyOf(*o.Company),
		StatusDate:     DateOf(o.StatusDate),
		Status:         CodeOf(o.Status),
		Reason:         reasonOf(o.Status, o.Reason),
		SpecialDate:    DateOf(o.SpecialDate),
		Special:        specialOf(o),
		Address:        addressOf(o.Address),
		Phones:         phonesOf(o.Phones),
		Emails:         emailsOf(o.Emails),
		MainActivity:   CodeOf(o.MainActivity),
		SideActivities: codesOf(o.SideActivities),
		Registrations:  RegistrationsOf(o.Registrations),
		Suframa:        officeSuframaOf(o.Suframa),
		Links:          linksOf(o.Links),
	}
}

// specialOf is present only when the special situation has a date.
func specialOf(o model.Office) Optional[*Special] {
	if o.SpecialDate == nil {
		return Optional[*Special]{}
	}
	var s *Special
	if o.Special != nil {
		s = &Special{ID: o.Special.ID, Text: o.Special.Text}
	}
	return Some(&s)
}

// RegistrationList is the state registrations an office answer carries, as
// the upstream client reads them.
func (o Office) RegistrationList() []model.Registration {
	regs := o.Registrations.Value()
	if regs == nil {
		return []model.Registration{}
	}
	return registrationsModel(*regs)
}

// RegistryPerson is a member's person in the registry record: the registry
// publishes only name, tax id and age band.
type RegistryPerson struct {
	Name  string           `json:"name"`
	TaxID *string          `json:"taxId"`
	Age   Optional[string] `json:"age,omitzero"`
}

func registryPersonOf(p model.Person) RegistryPerson {
	out := RegistryPerson{Name: p.Name, TaxID: p.TaxID}
	if p.HasAge() {
		out.Age = Some(p.Age)
	}
	return out
}

// RegistryAgent is the legal representative in the registry record.
type RegistryAgent struct {
	Person RegistryPerson `json:"person"`
	Role   Code           `json:"role"`
}

// RegistryMember is a member in the registry record.
type RegistryMember struct {
	Since  *Date          `json:"since"`
	Person RegistryPerson `json:"person"`
	Role   Code           `json:"role"`
	Agent  *RegistryAgent `json:"agent,omitempty"`
}

// Registry is the federal registry record (GET /rfb).
type Registry struct {
	Updated        Stamp              `json:"updated"`
	TaxID          string             `json:"taxId"`
	Name           string             `json:"name"`
	Alias          *string            `json:"alias"`
	Founded        *Date              `json:"founded"`
	Jurisdiction   *string            `json:"jurisdiction"`
	Equity         json.Number        `json:"equity"`
	Head           bool               `json:"head"`
	Nature         Code               `json:"nature"`
	Size           *Size              `json:"size"`
	StatusDate     *Date              `json:"statusDate"`
	Status         Code               `json:"status"`
	Reason         Optional[*Code]    `json:"reason,omitzero"`
	SpecialDate    *Date              `json:"specialDate"`
	Special        Optional[*Special] `json:"special,omitzero"`
	Address        Address            `json:"address"`
	Phones         []Phone            `json:"phones"`
	Emails         []Email            `json:"emails"`
	MainActivity   Code               `json:"mainActivity"`
	SideActivities []Code             `json:"sideActivities"`
	Registrations  []Registration     `json:"registrations"`
	Members        []RegistryMember   `json:"members"`
}

// RegistryOf is the federal registry record of o.
func RegistryOf(o model.Office) Registry {
	c := o.Company
	out := Registry{
		Updated:        StampOf(o.Updated),
		TaxID:          o.TaxID,
		Name:           c.Name,
		Alias:          o.Alias,
		Founded:        DateOf(o.Founded),
		Jurisdiction:   c.Jurisdiction,
		Equity:         json.Number(c.Equity),
		Head:           o.Head,
		Nature:         CodeOf(c.Nature),
		Size:           sizeOf(c.Size),
		StatusDate:     DateOf(o.StatusDate),
		Status:         CodeOf(o.Status),
		Reason:         reasonOf(o.Status, o.Reason),
		SpecialDate:    DateOf(o.SpecialDate),
		Special:        specialOf(o),
		Address:        addressOf(o.Address),
		Phones:         phonesOf(o.Phones),
		Emails:         emailsOf(o.Emails),
		MainActivity:   CodeOf(o.MainActivity),
		SideActivities: codesOf(o.SideActivities),
		Registrations:  []Registration{},
		Members:        make([]RegistryMember, len(c.Members)),
	}
	if regs := RegistrationsOf(o.Registrations).Value(); regs != nil {
		out.Registrations = *regs
	}
	for i, m := range c.Members {
		out.Members[i] = RegistryMember{Since: DateOf(m.Since), Person: registryPersonOf(m.Person), Role: CodeOf(m.Role)}
		if m.Agent != nil {
			out.Members[i].Agent = &RegistryAgent{Person: registryPersonOf(m.Agent.Person), Role: CodeOf(m.Agent.Role)}
		}
	}
	return out
}

// foreignRoles are the qualifications of members domiciled abroad.
var foreignRoles = map[int]bool{37: true, 38: true}

// model rebuilds a person of the registry record. The record carries no id
// and no type: the type follows from the tax id (a CNPJ is a legal person,
// a masked CPF a natural one, none or a foreign qualification a foreigner),
// and the id is then the same deterministic id the importer gives. A
// foreigner's country is not in the record and stays unknown.
func (p RegistryPerson) model(role int, w *Registry) model.Person {
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
		Updated: w.Updated.T,
		ID:      cnpj.PersonID(t, taxID, p.Name),
		Type:    string(t),
		Name:    p.Name,
		Age:     p.Age.Value(),
	}
	if taxID != "" {
		out.TaxID = &taxID
	}
	return out
}

// Model is the office the registry record describes, with its company and
// members.
func (w *Registry) Model() model.Office {
	root := string(cnpj.CNPJ(w.TaxID).Root())
	o := model.Office{
		Updated:        w.Updated.T,
		TaxID:          w.TaxID,
		Root:           root,
		Alias:          nonEmpty(w.Alias),
		Founded:        w.Founded.Time(),
		Head:           w.Head,
		StatusDate:     w.StatusDate.Time(),
		Status:         w.Status.Model(),
		Address:        w.Address.model(),
		Phones:         make([]model.Phone, len(w.Phones)),
		Emails:         make([]model.Email, len(w.Emails)),
		MainActivity:   w.MainActivity.Model(),
		SideActivities: make([]model.Code, len(w.SideActivities)),
		SpecialDate:    w.SpecialDate.Time(),
	}
	if r := w.Reason.Value(); o.Status.ID != 2 && r != nil && *r != nil {
		c := (*r).Model()
		o.Reason = &c
	}
	if s := w.Special.Value(); s != nil && *s != nil && o.SpecialDate != nil {
		o.Special = &model.Special{ID: (*s).ID, Text: (*s).Text}
	}
	for i, p := range w.Phones {
		o.Phones[i] = model.Phone{Area: p.Area, Number: p.Number}
	}
	for i, e := range w.Emails {
		o.Emails[i] = model.Email{Address: e.Address, Domain: e.Domain}
	}
	for i, a := range w.SideActivities {
		o.SideActivities[i] = a.Model()
	}
	c := &model.Company{
		Updated:      w.Updated.T,
		Root:         root,
		Name:         w.Name,
		Equity:       equity(w.Equity),
		Nature:       w.Nature.Model(),
		Size:         w.Size.model(),
		Jurisdiction: nonEmpty(w.Jurisdiction),
		Members:      make([]model.Member, len(w.Members)),
	}
	for i, m := range w.Members {
		c.Members[i] = model.Member{
			Root:   root,
			Since:  m.Since.Time(),
			Person: m.Person.model(m.Role.ID, w),
			Role:   m.Role.Model(),
		}
		if m.Agent != nil {
			c.Members[i].Agent = &model.Agent{
				Person: m.Agent.Person.model(m.Agent.Role.ID, w),
				Role:   m.Agent.Role.Model(),
			}
		}
	}
	o.Company = c
	return o
}

// Membership is a person's role in one company, in the person lookup.
type Membership struct {
	Since   *Date             `json:"since"`
	Role    Code              `json:"role"`
	Company MembershipCompany `json:"company"`
}

// MembershipCompany is the company of a membership.
type MembershipCompany struct {
	ID     any         `json:"id"`
	Name   string      `json:"name"`
	Equity json.Number `json:"equity"`
	Nature Code        `json:"nature"`
	Size   *Size       `json:"size"`
}

// PersonLookup is the person lookup's answer.
type PersonLookup struct {
	Updated Stamp `json:"updated"`
	Person
}

// PersonLookupOf is the person lookup's answer for p.
func PersonLookupOf(p model.Person) PersonLookup {
	out := PersonLookup{Updated: StampOf(p.Updated), Person: PersonOf(p)}
	ms := make([]Membership, len(p.Membership))
	for i, m := range p.Membership {
		ms[i] = Membership{
			Since: DateOf(m.Since),
			Role:  CodeOf(m.Role),
			Company: MembershipCompany{
				ID:     CompanyID(m.Company.Root),
				Name:   m.Company.Name,
				Equity: json.Number(m.Company.Equity),
				Nature: CodeOf(m.Company.Nature),
				Size:   sizeOf(m.Company.Size),
			},
		}
	}
	out.Membership = &ms
	return out
}

// SimplesLookup is the Simples lookup's answer (GET /simples).
type SimplesLookup struct {
	Updated Stamp             `json:"updated"`
	TaxID   string            `json:"taxId"`
	Simples Optional[Simples] `json:"simples"`
	Simei   Optional[Simples] `json:"simei"`
}

// SimplesLookupOf is the Simples lookup's answer for r.
func SimplesLookupOf(r model.SimplesRecord) SimplesLookup {
	return SimplesLookup{
		Updated: StampOf(r.Updated),
		TaxID:   r.TaxID,
		Simples: SimplesOf(&r.Simples),
		Simei:   SimplesOf(&r.Simei),
	}
}

// Model is the Simples record the answer describes, for the office taxID.
func (w *SimplesLookup) Model(taxID cnpj.CNPJ) model.SimplesRecord {
	return model.SimplesRecord{
		Updated: w.Updated.T,
		TaxID:   string(taxID),
		Root:    string(taxID.Root()),
		Simples: simplesModel(w.Simples),
		Simei:   simplesModel(w.Simei),
	}
}

// equity keeps the source's decimal text; a missing one is 0.
func equity(n json.Number) string {
	if n == "" {
		return "0"
	}
	return n.String()
}

func nonEmpty(s *string) *string {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil
	}
	v := *s
	return &v
}
