// Package model holds the domain types of the registry: what the service layer
// returns and what REST and GraphQL present. Field names follow the REST
// contract, so gqlgen binds the GraphQL schema to them directly.
package model

import "time"

// Scope is the lookup an object was read in. What that lookup's REST
// answer includes comes with the object at no further cost; reaching past
// it (a company's offices from an office, a person's memberships from a
// member) is a lookup of its own, checked and priced as such.
type Scope uint8

// Scopes.
const (
	ScopeNone    Scope = iota // read as part of something else (a membership's company)
	ScopeOffice               // an office lookup: the office, its company and members
	ScopeCompany              // a company lookup: the company, its members and offices
	ScopePerson               // a person lookup: the person and their memberships
)

// Code is an entry of a code table: a numeric id and its text. Text is empty
// when the registry's own table lacks the code (it happens: motivo 32,
// qualificação 36, recent país codes).
type Code struct {
	ID   int
	Text string
}

// Size is the company size (porte).
type Size struct {
	ID      int
	Acronym string
	Text    string
}

// Country is a country by its UN M49 code. ID is 0 when the registry's
// country code has no M49 equivalent (placeholders, unmapped codes).
type Country struct {
	ID   int
	Name string
}

// Address of an office.
type Address struct {
	Municipality *int // IBGE 7-digit code; nil when unknown (abroad)
	Street       string
	Number       string
	Details      *string
	District     string
	City         string
	State        string
	Zip          string
	Country      Country
	// Coordinates are the geocoder's, only when asked for (geocoding);
	// nil otherwise or when it found nothing.
	Coordinates *Coordinates
}

// Phone number with its area code.
type Phone struct {
	Area   string
	Number string
}

// Email address with its domain.
type Email struct {
	Address string
	Domain  string
}

// Special is the "situação especial" of an office; ID is a stable small
// integer per distinct text.
type Special struct {
	ID   int
	Text string
}

// Person is a member of a company or the legal representative of one.
type Person struct {
	Updated time.Time // when the data was obtained
	ID      string
	Type    string // NATURAL, LEGAL, FOREIGN, UNKNOWN
	Name    string
	TaxID   *string // masked CPF, CNPJ; nil for foreigners without one
	Age     *string // band such as "31-40"; nil when unknown
	Country *Country

	// Membership lists the person's roles in companies; filled by the
	// person lookup only.
	Membership []Membership

	Scope Scope // the lookup the person was read in
}

// Member is a person's role in a company.
type Member struct {
	Root   string // the company the membership belongs to
	Since  *time.Time
	Person Person
	Role   Code
	Agent  *Agent
	Scope  Scope // the lookup the member's company was read in
}

// Agent is the legal representative of a member.
type Agent struct {
	Person Person
	Role   Code
}

// Membership is a person's role in one company, as the person lookup lists it.
type Membership struct {
	Since   *time.Time
	Role    Code
	Company Company
}

// Simples is the state of one regime (Simples Nacional or SIMEI).
type Simples struct {
	Optant  bool
	Since   *time.Time
	History []SimplesPeriod // nil when not asked for, empty when there is none
}

// SimplesPeriod is one closed or open period of enrolment.
type SimplesPeriod struct {
	From  time.Time
	Until *time.Time
	Text  string
}

// SimplesRecord is the Simples lookup's answer for a company.
type SimplesRecord struct {
	Updated time.Time
	TaxID   string // the office asked about
	Root    string
	Simples Simples
	Simei   Simples
}

// Registration is a state registration (inscrição estadual).
type Registration struct {
	State   string
	Number  string
	Enabled bool
	// What the CCC adds, when the source gives it.
	StatusDate *time.Time
	Status     *Code // 1 Sem restrição, 2 Bloqueado como destinatário na UF, ...
	Type       *Code // 1 IE Normal, 2 IE Substituto Tributário, ...
}

// Company is the company-level data shared by every office of a root.
type Company struct {
	Updated      time.Time
	Root         string // 8 characters; JSON emits it as a number when numeric
	Name         string
	Equity       string // exact decimal, as numeric text ("1061004829.23")
	Nature       Code
	Size         *Size
	Jurisdiction *string
	Simples      *Simples // nil when not asked for
	Simei        *Simples
	Members      []Member

	// Offices lists the company's establishments (only the summary fields:
	// tax id, alias, founded, head, status, reason, main activity); filled by
	// the company lookup only.
	Offices []Office

	Scope Scope // the lookup the company was read in
}

// Office is an establishment, identified by its 14-character CNPJ.
type Office struct {
	Updated        time.Time
	TaxID          string
	Root           string
	Alias          *string
	Founded        *time.Time
	Head           bool
	StatusDate     *time.Time
	Status         Code
	Reason         *Code // nil when status is 2 (Ativa)
	Address        Address
	Phones         []Phone
	Emails         []Email
	MainActivity   Code
	SideActivities []Code
	SpecialDate    *time.Time
	Special        *Special
	Registrations  []Registration // only when requested
	Suframa        []Suframa      // only when requested; empty when not registered
	Links          []Link         // only when requested

	// Company owns the office; the office and registry lookups fill it,
	// the company lookup's office list does not.
	Company *Company

	Scope Scope // the lookup the office was read in
}

// orNil is s, nil when empty: an answer says null rather than "" for text
// the registry left empty.
func orNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// StreetOrNil and the other OrNil methods are the address's text fields,
// nil when empty, as GraphQL and REST show them.
func (a Address) StreetOrNil() *string { return orNil(a.Street) }

// NumberOrNil is the number, nil when empty.
func (a Address) NumberOrNil() *string { return orNil(a.Number) }

// DistrictOrNil is the district, nil when empty.
func (a Address) DistrictOrNil() *string { return orNil(a.District) }

// CityOrNil is the city, nil when empty.
func (a Address) CityOrNil() *string { return orNil(a.City) }

// StateOrNil is the state, nil when empty.
func (a Address) StateOrNil() *string { return orNil(a.State) }

// ZipOrNil is the postal code, nil when empty (foreign addresses).
func (a Address) ZipOrNil() *string { return orNil(a.Zip) }

// HasAge reports whether the person's answer carries an age band (null
// when unknown): natural persons do, and foreign ones the registry gives a
// band (only a natural person has one); legal persons, domestic or
// foreign, do not.
func (p Person) HasAge() bool {
	return p.Type == "NATURAL" || p.Type == "UNKNOWN" || (p.Type == "FOREIGN" && p.Age != nil)
}

// TextOrNil is the code's text, nil when the registry's table lacks the
// code: GraphQL says null there, as REST does.
func (c Code) TextOrNil() *string { return orNil(c.Text) }

// IDOrNil is the M49 code, nil when the registry's country has none.
func (c Country) IDOrNil() *int {
	if c.ID == 0 {
		return nil
	}
	return &c.ID
}

// NameOrNil is the country's name, nil when unknown.
func (c Country) NameOrNil() *string { return orNil(c.Name) }
