package db

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/cnpjgraph/cnpjgraph/model"
)

// NotFoundError is the typed answer for a key with no row.
type NotFoundError struct {
	What string // office, company, person
	Key  string
}

func (e *NotFoundError) Error() string { return e.What + " " + e.Key + " not found" }

// NotFound marks the error for fault.Classify.
func (e *NotFoundError) NotFound() bool { return true }

// Store runs the lookups of the service against the live snapshot and turns
// rows into domain values, resolving codes through the in-memory Catalog.
type Store struct {
	DB *sqlx.DB
	Q  sqlx.QueryerContext // the queryer lookups go through (prepared, counted)
	// Searches is the queryer search statements go through: counted, not
	// prepared (each statement holds its values as literals).
	Searches sqlx.QueryerContext
	Catalog  *Catalog
}

// StoreOptions tunes a Store.
type StoreOptions struct {
	// OnQuery is called with each SQL statement a lookup or a search sends.
	OnQuery func(query string)
	// CatalogInterval is how often the live snapshot is re-checked (default 2s).
	CatalogInterval time.Duration
	// OnSnapshot is called when the store starts serving another snapshot
	// than the one it served (an import went live), with both; not for the
	// first one it loads.
	OnSnapshot func(from, to Snapshot)
}

// NewStore returns a Store over d with prepared statements.
func NewStore(d *sqlx.DB, opts StoreOptions) *Store {
	var q, searches sqlx.QueryerContext = NewPrepared(d), d
	if opts.OnQuery != nil {
		q = Counted{Q: q, OnQuery: opts.OnQuery}
		searches = Counted{Q: d, OnQuery: opts.OnQuery}
	}
	if opts.CatalogInterval <= 0 {
		opts.CatalogInterval = 2 * time.Second
	}
	catalog := NewCatalog(d, opts.CatalogInterval)
	catalog.OnSwitch = opts.OnSnapshot
	return &Store{DB: d, Q: q, Searches: searches, Catalog: catalog}
}

// Offices returns the offices with their company and Simples (no members),
// keyed by tax id; missing tax ids are absent from the map.
func (s *Store) Offices(ctx context.Context, taxIDs []string) (map[string]model.Office, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := selectRows(ctx, s.Q, "offices", codes.officeReads().offices, (*OfficeRow).dest, pq.Array(taxIDs))
	if err != nil {
		return nil, err
	}
	out := make(map[string]model.Office, len(rows))
	for i := range rows {
		o, err := s.office(ctx, codes, &rows[i])
		if err != nil {
			return nil, err
		}
		out[o.TaxID] = o
	}
	return out, nil
}

// Companies returns companies with their Simples (no members, no offices),
// keyed by root.
func (s *Store) Companies(ctx context.Context, roots []string) (map[string]model.Company, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := QueryCompanies(ctx, s.Q, roots)
	if err != nil {
		return nil, err
	}
	out := make(map[string]model.Company, len(rows))
	for i := range rows {
		c := codes.company(rows[i].CompanyRoot, &rows[i])
		out[c.Root] = c
	}
	return out, nil
}

// CompanyOffices returns the office summaries of each root.
func (s *Store) CompanyOffices(ctx context.Context, roots []string) (map[string][]model.Office, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := QueryCompanyOffices(ctx, s.Q, roots)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]model.Office, len(roots))
	for i := range rows {
		out[rows[i].Root] = append(out[rows[i].Root], codes.officeSummary(&rows[i]))
	}
	return out, nil
}

// OfficePage is a page of a company's offices (summaries) and the
// company's office count.
type OfficePage struct {
	Total   int
	Offices []model.Office
	HasNext bool
}

// CompanyOfficePages returns the asked pages of company offices.
func (s *Store) CompanyOfficePages(ctx context.Context, keys []PageKey) (map[PageKey]OfficePage, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return nil, err
	}
	pages, err := QueryCompanyOfficePages(ctx, s.Q, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[PageKey]OfficePage, len(pages))
	for k, p := range pages {
		offices, hasNext := cutPage(p.Rows, k.First, codes.officeSummary)
		out[k] = OfficePage{Total: p.Total, Offices: offices, HasNext: hasNext}
	}
	return out, nil
}

// cutPage converts the first rows of a page query's answer, which reads one
// row more than the page holds to tell whether another page follows.
func cutPage[R, V any](rows []R, first int, convert func(*R) V) (page []V, hasNext bool) {
	page = make([]V, min(len(rows), first))
	for i := range page {
		page[i] = convert(&rows[i])
	}
	return page, len(rows) > first
}

// officeSummary is an office as the company's office list carries it.
func (c *Codes) officeSummary(r *OfficeSummaryRow) model.Office {
	status := c.status(r.Status)
	return model.Office{
		Updated:      c.Updated(),
		TaxID:        r.TaxID,
		Root:         r.Root,
		Alias:        nonEmpty(r.Alias),
		Founded:      r.Founded,
		Head:         r.Head,
		StatusDate:   r.StatusDate,
		Status:       status,
		Reason:       c.reason(status, r.Reason),
		MainActivity: c.activity(deref(r.MainActivity)),
	}
}

// Members returns the members of each root, in dump order.
func (s *Store) Members(ctx context.Context, roots []string) (map[string][]model.Member, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := QueryMembers(ctx, s.Q, roots)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]model.Member, len(roots))
	for i := range rows {
		out[rows[i].Root] = append(out[rows[i].Root], codes.member(&rows[i]))
	}
	return out, nil
}

// member is a member row with its person and representative.
func (c *Codes) member(r *MemberRow) model.Member {
	m := model.Member{
		Root:  r.Root,
		Since: r.Since,
		Person: c.person(PersonRow{ID: r.PersonID, Type: r.PersonType, TaxID: r.PersonTaxID,
			Name: r.PersonName, Age: r.PersonAge, Country: r.PersonCntry}),
		Role: c.role(r.Role),
	}
	if r.AgentID != nil {
		m.Agent = &model.Agent{
			Person: c.person(PersonRow{ID: *r.AgentID, Type: deref(r.AgentType), TaxID: r.AgentTaxID,
				Name: deref(r.AgentName), Age: r.AgentAge, Country: r.AgentCountry}),
			Role: c.role(r.AgentRole),
		}
	}
	return m
}

// Persons returns persons keyed by id (no memberships).
func (s *Store) Persons(ctx context.Context, ids []string) (map[string]model.Person, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := QueryPersons(ctx, s.Q, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]model.Person, len(rows))
	for _, r := range rows {
		out[r.ID] = codes.person(r)
	}
	return out, nil
}

// Memberships returns each person's roles in companies.
func (s *Store) Memberships(ctx context.Context, personIDs []string) (map[string][]model.Membership, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := QueryMemberships(ctx, s.Q, personIDs)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]model.Membership, len(personIDs))
	for i := range rows {
		out[rows[i].PersonID] = append(out[rows[i].PersonID], codes.membership(&rows[i]))
	}
	return out, nil
}

// membership is a membership row with its company.
func (c *Codes) membership(r *MembershipRow) model.Membership {
	root := r.Root // the member's root, even if its company row were missing
	return model.Membership{Since: r.Since, Role: c.role(r.Role), Company: c.company(&root, &r.CompanyRow)}
}

// MembershipPage is a page of a person's memberships and the person's
// membership count.
type MembershipPage struct {
	Total       int
	Memberships []model.Membership
	Positions   []int // each membership's position within its company's members (for cursors)
	HasNext     bool
}

// MembershipPages returns the asked pages of persons' memberships.
func (s *Store) MembershipPages(ctx context.Context, keys []MembershipPageKey) (map[MembershipPageKey]MembershipPage, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return nil, err
	}
	pages, err := QueryMembershipPages(ctx, s.Q, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[MembershipPageKey]MembershipPage, len(pages))
	for k, p := range pages {
		memberships, hasNext := cutPage(p.Rows, k.First, codes.membership)
		if k.NoSimples { // not read, or read for another key of the batch
			for i := range memberships {
				memberships[i].Company.Simples, memberships[i].Company.Simei = nil, nil
			}
		}
		out[k] = MembershipPage{Total: p.Total, Memberships: memberships,
			Positions: p.Positions[:len(memberships)], HasNext: hasNext}
	}
	return out, nil
}

// SimplesHistory is the closed enrolment periods of one company.
type SimplesHistory struct {
	Simples []model.SimplesPeriod
	Simei   []model.SimplesPeriod
}

// SimplesPeriods returns the closed periods of each root, newest first.
func (s *Store) SimplesPeriods(ctx context.Context, roots []string) (map[string]SimplesHistory, error) {
	rows, err := QuerySimplesPeriods(ctx, s.Q, roots)
	if err != nil {
		return nil, err
	}
	out := make(map[string]SimplesHistory, len(roots))
	for _, r := range rows {
		h := out[r.Root]
		until := r.Until
		switch r.Regime {
		case "SIMEI":
			h.Simei = append(h.Simei, model.SimplesPeriod{From: r.Since, Until: &until, Text: SimeiPeriodText})
		default:
			h.Simples = append(h.Simples, model.SimplesPeriod{From: r.Since, Until: &until, Text: SimplesPeriodText})
		}
		out[r.Root] = h
	}
	return out, nil
}

// Texts of past enrolment periods, worded as the Simples portal lists them.
const (
	SimplesPeriodText = "Optante pelo Simples Nacional"
	SimeiPeriodText   = "Enquadrado no SIMEI"
)

// Updated is the time cached answers carry: the snapshot's reference date at
// 00:00 UTC.
func (c *Codes) Updated() time.Time {
	d := c.Snapshot.ReferenceDate
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
}

func (s *Store) office(ctx context.Context, codes *Codes, r *OfficeRow) (model.Office, error) {
	status := codes.status(r.Status)
	o := model.Office{
		Updated:        codes.Updated(),
		TaxID:          r.TaxID,
		Root:           r.Root,
		Alias:          nonEmpty(r.Alias),
		Founded:        r.Founded,
		Head:           r.Head,
		StatusDate:     r.StatusDate,
		Status:         status,
		Reason:         codes.reason(status, r.Reason),
		Address:        codes.address(r),
		Phones:         phones(r.Phones),
		Emails:         emails(r.Email),
		MainActivity:   codes.activity(deref(r.MainActivity)),
		SideActivities: make([]model.Code, 0, len(r.SideActivities)),
		SpecialDate:    r.SpecialDate,
	}
	for _, a := range r.SideActivities {
		if a = strings.TrimSpace(a); a != "" {
			o.SideActivities = append(o.SideActivities, codes.activity(a))
		}
	}
	if r.SpecialDate != nil {
		if text := strings.TrimSpace(deref(r.Special)); text != "" {
			id, err := s.Catalog.SpecialID(ctx, text)
			if err != nil {
				return o, err
			}
			o.Special = &model.Special{ID: id, Text: text}
		}
	}
	c := codes.company(&r.Root, &r.CompanyRow)
	o.Company = &c
	return o, nil
}

func (c *Codes) company(root *string, r *CompanyRow) model.Company {
	co := model.Company{
		Updated:      c.Updated(),
		Root:         deref(root),
		Name:         deref(r.Name),
		Equity:       Decimal(r.Equity),
		Nature:       c.nature(r.Nature),
		Size:         size(r.Size),
		Jurisdiction: nonEmpty(r.Jurisdiction),
	}
	simples, simei := simplesOf(&r.SimplesRow)
	co.Simples, co.Simei = &simples, &simei
	return co
}

func simplesOf(r *SimplesRow) (simples, simei model.Simples) {
	if r.SimplesOptant != nil && *r.SimplesOptant {
		simples = model.Simples{Optant: true, Since: r.SimplesSince}
	}
	if r.SimeiOptant != nil && *r.SimeiOptant {
		simei = model.Simples{Optant: true, Since: r.SimeiSince}
	}
	return
}

var statusTexts = map[int]string{1: "Nula", 2: "Ativa", 3: "Suspensa", 4: "Inapta", 8: "Baixada"}

func (c *Codes) status(code *string) model.Code {
	id := atoi(deref(code))
	return model.Code{ID: id, Text: statusTexts[id]}
}

// reason is present for every status but Ativa (2).
func (c *Codes) reason(status model.Code, code *string) *model.Code {
	if status.ID == 2 || code == nil || *code == "" {
		return nil
	}
	return &model.Code{ID: atoi(*code), Text: c.reasons[*code]}
}

func (c *Codes) activity(code string) model.Code {
	return model.Code{ID: atoi(code), Text: c.activities[code]}
}

func (c *Codes) nature(code *string) model.Code {
	return model.Code{ID: atoi(deref(code)), Text: c.natures[deref(code)]}
}

func (c *Codes) role(code *string) model.Code {
	return model.Code{ID: atoi(deref(code)), Text: c.roles[deref(code)]}
}

var sizes = map[string]model.Size{
	"01": {ID: 1, Acronym: "ME", Text: "Microempresa"},
	"03": {ID: 3, Acronym: "EPP", Text: "Empresa de Pequeno Porte"},
	"05": {ID: 5, Acronym: "DEMAIS", Text: "Demais"},
}

// size is nil for porte 00 (não informado) and unknown codes.
func size(code *string) *model.Size {
	s, ok := sizes[deref(code)]
	if !ok {
		return nil
	}
	return &s
}

// Brazil is the country of every address not abroad.
var Brazil = model.Country{ID: 76, Name: "Brasil"}

func (c *Codes) address(r *OfficeRow) model.Address {
	a := model.Address{
		Street:   deref(r.Street),
		Number:   deref(r.Number),
		Details:  nonEmpty(r.Details),
		District: deref(r.District),
		State:    deref(r.State),
		Zip:      deref(r.Zip),
		Country:  Brazil,
	}
	m, ok := c.municipalities[deref(r.Municipality)]
	if ok {
		a.City = m.Text
		if m.IBGE > 0 {
			ibge := m.IBGE
			a.Municipality = &ibge
		}
	}
	if a.State == "EX" {
		if city := strings.TrimSpace(deref(r.CityAbroad)); city != "" {
			a.City = city
		}
		a.Country = c.country(deref(r.Country))
	}
	return a
}

// country is what the tables know of an RFB country code: its M49 code
// when mapped, its name when either table has one; a code neither knows is
// {id: null, name: null} (docs/api.md).
func (c *Codes) country(code string) model.Country {
	if cc, ok := c.countries[countryKey(code)]; ok {
		return model.Country{ID: cc.M49, Name: cc.Text}
	}
	return model.Country{}
}

var ageBands = map[string]string{
	"1": "0-12", "2": "13-20", "3": "21-30", "4": "31-40", "5": "41-50",
	"6": "51-60", "7": "61-70", "8": "71-80", "9": "81+",
}

func (c *Codes) person(r PersonRow) model.Person {
	p := model.Person{Updated: c.Updated(), ID: r.ID, Type: r.Type, Name: r.Name, TaxID: nonEmpty(r.TaxID)}
	if band, ok := ageBands[strings.TrimLeft(deref(r.Age), "0")]; ok {
		p.Age = &band
	}
	if r.Type == "FOREIGN" && deref(r.Country) != "" {
		country := c.country(*r.Country)
		p.Country = &country
	}
	return p
}

// phones pairs the alternating area and number entries, dropping the
// registry's placeholders ("0", "0000").
func phones(raw []string) []model.Phone {
	out := make([]model.Phone, 0, len(raw)/2)
	for i := 0; i+1 < len(raw); i += 2 {
		area, number := strings.TrimSpace(raw[i]), strings.TrimSpace(raw[i+1])
		if strings.Trim(number, "0") == "" {
			continue
		}
		out = append(out, model.Phone{Area: area, Number: number})
	}
	return out
}

func emails(raw *string) []model.Email {
	addr := strings.ToLower(strings.TrimSpace(deref(raw)))
	at := strings.LastIndexByte(addr, '@')
	if at <= 0 || at == len(addr)-1 {
		return []model.Email{}
	}
	return []model.Email{{Address: addr, Domain: addr[at+1:]}}
}

// Decimal normalizes PostgreSQL numeric text for JSON: trailing fractional
// zeros dropped ("0.00" -> "0", "100.50" -> "100.5"), as a JavaScript client
// would print the number; null becomes "0".
func Decimal(s *string) string {
	v := strings.TrimSpace(deref(s))
	if v == "" {
		return "0"
	}
	if strings.IndexByte(v, '.') >= 0 {
		v = strings.TrimRight(v, "0")
		v = strings.TrimSuffix(v, ".")
	}
	if v == "" || v == "-" || v == "-0" {
		return "0"
	}
	return v
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
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
