package db

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// The lookups of the service, one statement per batch: every query takes a
// whole batch of keys through = ANY($1), so a dataloader batch costs one
// round trip whatever its size. Codes stay raw here; Store converts them.

// OfficeRow is an office joined with its company and Simples rows (either
// may be missing: the dump is not always consistent).
type OfficeRow struct {
	TaxID          string         `db:"tax_id"`
	Root           string         `db:"root"`
	Head           bool           `db:"head"`
	Alias          *string        `db:"alias"`
	Status         *string        `db:"status"`
	StatusDate     *time.Time     `db:"status_date"`
	Reason         *string        `db:"reason"`
	CityAbroad     *string        `db:"city_abroad"`
	Country        *string        `db:"country"`
	Founded        *time.Time     `db:"founded"`
	MainActivity   *string        `db:"main_activity"`
	SideActivities pq.StringArray `db:"side_activities"`
	Street         *string        `db:"street"`
	Number         *string        `db:"number"`
	Details        *string        `db:"details"`
	District       *string        `db:"district"`
	Zip            *string        `db:"zip"`
	State          *string        `db:"state"`
	Municipality   *string        `db:"municipality"`
	Phones         pq.StringArray `db:"phones"`
	Email          *string        `db:"email"`
	Special        *string        `db:"special"`
	SpecialDate    *time.Time     `db:"special_date"`
	CompanyRow
}

// CompanyRow is a company with its Simples and SIMEI enrolment, which the
// import folds into the company's row (CompanyFoldSQL).
type CompanyRow struct {
	CompanyRoot  *string `db:"company_root"` // nil when the company row is missing
	Name         *string `db:"name"`
	Nature       *string `db:"nature"`
	Equity       *string `db:"equity"` // numeric as text: exact
	Size         *string `db:"size"`
	Jurisdiction *string `db:"jurisdiction"`
	SimplesRow
}

// SimplesRow is a company's Simples/SIMEI enrolment; the optants are nil
// when the company has no Simples row (never enrolled).
type SimplesRow struct {
	SimplesOptant *bool      `db:"simples_optant"`
	SimplesSince  *time.Time `db:"simples_since"`
	SimeiOptant   *bool      `db:"simei_optant"`
	SimeiSince    *time.Time `db:"simei_since"`
}

// officeAndCompanyColumns are an office's (o) columns, then its company's
// (c): what OfficeRow scans.
const officeAndCompanyColumns = `o.tax_id, o.root, o.head, o.alias, o.status, o.status_date, o.reason, o.city_abroad,
	o.country, o.founded, o.main_activity, o.side_activities, o.street, o.number, o.details, o.district,
	o.zip, o.state, o.municipality, o.phones, o.email, o.special, o.special_date,
	` + companyColumns

// companyColumns are a company's columns (c), its Simples enrolment
// included: one probe of the companies, no join.
const companyColumns = `c.root AS company_root, c.name, c.nature, c.equity::text AS equity, c.size, c.jurisdiction,
	c.simples_optant, c.simples_since, c.simei_optant, c.simei_since`

// selectRows runs query and scans every row into a T through dest, which
// lists the row's fields in the query's column order. Scanning by hand, not
// by reflection, matters here: companies have thousands of offices and
// persons hundreds of memberships.
func selectRows[T any](ctx context.Context, q sqlx.QueryerContext, what, query string, dest func(*T) []any, args ...any) ([]T, error) {
	rs, err := q.QueryxContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", what, err)
	}
	defer func() { _ = rs.Close() }()
	var rows []T
	for rs.Next() {
		var r T
		if err := rs.Scan(dest(&r)...); err != nil {
			return nil, fmt.Errorf("query %s: %w", what, err)
		}
		rows = append(rows, r)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("query %s: %w", what, err)
	}
	return rows, nil
}

// The rows' scan destinations are appended to a slice the caller sizes:
// one allocation for a row's 30 to 50 columns, not one per part.
const companyColumnCount, officeColumnCount = 10, 23 + 10

func (c *CompanyRow) dest() []any { return c.appendDest(make([]any, 0, companyColumnCount)) }

func (c *CompanyRow) appendDest(d []any) []any {
	return append(d, &c.CompanyRoot, &c.Name, &c.Nature, &c.Equity, &c.Size, &c.Jurisdiction,
		&c.SimplesOptant, &c.SimplesSince, &c.SimeiOptant, &c.SimeiSince)
}

func (r *OfficeRow) dest() []any { return r.appendDest(make([]any, 0, officeColumnCount)) }

func (r *OfficeRow) appendDest(d []any) []any {
	d = append(d, &r.TaxID, &r.Root, &r.Head, &r.Alias, &r.Status, &r.StatusDate, &r.Reason, &r.CityAbroad,
		&r.Country, &r.Founded, &r.MainActivity, &r.SideActivities, &r.Street, &r.Number, &r.Details, &r.District,
		&r.Zip, &r.State, &r.Municipality, &r.Phones, &r.Email, &r.Special, &r.SpecialDate)
	return r.CompanyRow.appendDest(d)
}

func (r *OfficeSummaryRow) dest() []any {
	return []any{&r.TaxID, &r.Root, &r.Head, &r.Alias, &r.Founded, &r.Status, &r.StatusDate, &r.Reason, &r.MainActivity}
}

func (r *MembershipRow) dest() []any {
	d := append(make([]any, 0, 4+companyColumnCount), &r.PersonID, &r.Root, &r.Role, &r.Since)
	return r.appendDest(d) // the company's columns
}

// QueryCompanies returns the companies with the given roots, in no order.
func QueryCompanies(ctx context.Context, q sqlx.QueryerContext, roots []string) ([]CompanyRow, error) {
	const query = `SELECT ` + companyColumns + `
FROM ` + LiveSchema + `.companies c
WHERE c.root = ANY($1)`
	return selectRows(ctx, q, "companies", query, (*CompanyRow).dest, pq.Array(roots))
}

// OfficeSummaryRow is an office as the company lookup lists it.
type OfficeSummaryRow struct {
	TaxID        string     `db:"tax_id"`
	Root         string     `db:"root"`
	Head         bool       `db:"head"`
	Alias        *string    `db:"alias"`
	Founded      *time.Time `db:"founded"`
	Status       *string    `db:"status"`
	StatusDate   *time.Time `db:"status_date"`
	Reason       *string    `db:"reason"`
	MainActivity *string    `db:"main_activity"`
}

// QueryCompanyOffices returns the offices of the given roots, ordered by root
// and tax id (the head office, order 0001, usually first).
func QueryCompanyOffices(ctx context.Context, q sqlx.QueryerContext, roots []string) ([]OfficeSummaryRow, error) {
	const query = `SELECT tax_id, root, head, alias, founded, status, status_date, reason, main_activity
FROM ` + LiveSchema + `.offices WHERE root = ANY($1) ORDER BY root, tax_id`
	return selectRows(ctx, q, "company offices", query, (*OfficeSummaryRow).dest, pq.Array(roots))
}

// PersonRow is a row of persons.
type PersonRow struct {
	ID      string  `db:"id"`
	Type    string  `db:"type"`
	TaxID   *string `db:"tax_id"`
	Name    string  `db:"name"`
	Age     *string `db:"age"`
	Country *string `db:"country"`
}

// MemberRow is a member joined with its person and, when there is one, its
// legal representative.
type MemberRow struct {
	Root         string     `db:"root"`
	Position     int        `db:"position"`
	Role         *string    `db:"role"`
	Since        *time.Time `db:"since"`
	PersonID     string     `db:"p_id"`
	PersonType   string     `db:"p_type"`
	PersonTaxID  *string    `db:"p_tax_id"`
	PersonName   string     `db:"p_name"`
	PersonAge    *string    `db:"p_age"`
	PersonCntry  *string    `db:"p_country"`
	AgentID      *string    `db:"a_id"`
	AgentType    *string    `db:"a_type"`
	AgentTaxID   *string    `db:"a_tax_id"`
	AgentName    *string    `db:"a_name"`
	AgentAge     *string    `db:"a_age"`
	AgentCountry *string    `db:"a_country"`
	AgentRole    *string    `db:"agent_role"`
	// PersonMemberships is how many member rows the person has in all
	// companies, this one included (0: not read).
	PersonMemberships int `db:"-"`
}

// QueryMembers returns the members of the given roots with their persons,
// ordered by root and position in the dump, from the companies' members
// arrays (db/fold.go).
func QueryMembers(ctx context.Context, q sqlx.QueryerContext, roots []string) ([]MemberRow, error) {
	const query = `SELECT c.root, c.members FROM ` + LiveSchema + `.companies c
WHERE c.root = ANY($1) AND c.members IS NOT NULL ORDER BY c.root`
	type row struct {
		root    string
		members []byte
	}
	rows, err := selectRows(ctx, q, "members", query, func(r *row) []any { return []any{&r.root, &r.members} }, pq.Array(roots))
	if err != nil {
		return nil, err
	}
	var out []MemberRow
	for _, r := range rows {
		m, err := decodeMembers(r.root, r.members)
		if err != nil {
			return nil, err
		}
		out = append(out, m...)
	}
	return out, nil
}

// QueryPersons returns the persons with the given ids, in no order.
func QueryPersons(ctx context.Context, q sqlx.QueryerContext, ids []string) ([]PersonRow, error) {
	const query = `SELECT id, type, tax_id, name, age, country FROM ` + LiveSchema + `.persons WHERE id = ANY($1)`
	var rows []PersonRow
	if err := sqlx.SelectContext(ctx, q, &rows, query, pq.Array(ids)); err != nil {
		return nil, fmt.Errorf("query persons: %w", err)
	}
	return rows, nil
}

// MembershipRow is a person's role in a company, joined with the whole
// company (and its Simples), so the membership carries the company without
// another lookup.
type MembershipRow struct {
	PersonID string     `db:"person_id"`
	Root     string     `db:"root"`
	Role     *string    `db:"role"`
	Since    *time.Time `db:"since"`
	CompanyRow
}

// QueryMemberships returns the memberships of the given persons, ordered by
// person, company root and position.
func QueryMemberships(ctx context.Context, q sqlx.QueryerContext, personIDs []string) ([]MembershipRow, error) {
	const query = `SELECT m.person_id, m.root, m.role, m.since, ` + companyColumns + `
FROM ` + LiveSchema + `.members m
LEFT JOIN ` + LiveSchema + `.companies c ON c.root = m.root
WHERE m.person_id = ANY($1)
ORDER BY m.person_id, m.root, m.position`
	return selectRows(ctx, q, "memberships", query, (*MembershipRow).dest, pq.Array(personIDs))
}

// MembershipPageKey asks for a page of a person's memberships: First
// memberships after the cursor (AfterRoot, AfterPosition) in (company root,
// position) order; AfterRoot "" for the first page.
type MembershipPageKey struct {
	PersonID      string
	AfterRoot     string
	AfterPosition int
	First         int
	// What the page's reader will not show: the person's membership count
	// (not read; Total is then 0), and the companies' Simples (read with
	// the company, whose row holds it, but left nil). The zero key shows
	// both.
	NoTotal, NoSimples bool
}

// MembershipPageRows is a page of a person's memberships, with one row more
// than asked when another page follows, and the person's membership count.
type MembershipPageRows struct {
	Total     int
	Rows      []MembershipRow
	Positions []int // each row's position within its company's members
}

// QueryMembershipPages returns the asked pages in one statement: each key
// reads only its page through the (person_id, root, position) index, so a
// person who is a member of thousands of companies costs a page, not all.
// The statement counts the memberships only when some key asks for the
// count: a GraphQL page that does not show it (the nested query's usual
// one) skips a count per person.
func QueryMembershipPages(ctx context.Context, q sqlx.QueryerContext, keys []MembershipPageKey) (map[MembershipPageKey]MembershipPageRows, error) {
	total := 0
	for _, k := range keys {
		if !k.NoTotal {
			total = 1
		}
	}
	query := membershipPagesSQL[total]
	n := len(keys)
	persons, afterRoots, afterPositions, limits := make([]string, n), make([]string, n), make([]int64, n), make([]int64, n)
	for i, k := range keys {
		persons[i], afterRoots[i], afterPositions[i], limits[i] = k.PersonID, k.AfterRoot, int64(k.AfterPosition), int64(k.First+1)
	}
	type pageRow struct {
		i, total   int64
		position   *int64 // nil: the page past the end is empty
		personID   *string
		root       *string
		membership MembershipRow
	}
	dest := func(r *pageRow) []any {
		m := &r.membership
		d := append(make([]any, 0, 7+companyColumnCount), &r.i, &r.total, &r.position, &r.personID, &r.root, &m.Role, &m.Since)
		return m.appendDest(d) // the company's columns
	}
	rows, err := selectRows(ctx, q, "membership pages", query, dest,
		pq.Array(persons), pq.Array(afterRoots), pq.Array(afterPositions), pq.Array(limits))
	if err != nil {
		return nil, err
	}
	out := make(map[MembershipPageKey]MembershipPageRows, n)
	for _, r := range rows {
		k := keys[r.i-1]
		p := out[k]
		p.Total = int(r.total)
		if r.position != nil {
			r.membership.PersonID, r.membership.Root = *r.personID, *r.root
			p.Rows = append(p.Rows, r.membership)
			p.Positions = append(p.Positions, int(*r.position))
		}
		out[k] = p
	}
	return out, nil
}

// membershipPagesSQL are QueryMembershipPages' statements: without and
// with the count.
var membershipPagesSQL = func() (v [2]string) {
	for i, total := range []bool{false, true} {
		count := "0"
		if total {
			count = "t.total"
		}
		q := `SELECT k.i, ` + count + `, m.position, m.person_id, m.root, m.role, m.since, ` + companyColumns + `
FROM unnest($1::text[], $2::text[], $3::int[], $4::int[]) WITH ORDINALITY AS k(person_id, after_root, after_pos, lim, i)`
		if total {
			q += `
CROSS JOIN LATERAL (SELECT count(*)::int AS total FROM ` + LiveSchema + `.members c WHERE c.person_id = k.person_id) t`
		}
		q += `
LEFT JOIN LATERAL (SELECT m.person_id, m.root, m.position, m.role, m.since FROM ` + LiveSchema + `.members m
	WHERE m.person_id = k.person_id AND (m.root, m.position) > (k.after_root COLLATE "C", k.after_pos)
	ORDER BY m.root, m.position LIMIT k.lim) m ON true
LEFT JOIN ` + LiveSchema + `.companies c ON c.root = m.root
ORDER BY k.i, m.root, m.position`
		v[i] = q
	}
	return v
}()

// SimplesPeriodRow is a closed enrolment period.
type SimplesPeriodRow struct {
	Root   string    `db:"root"`
	Regime string    `db:"regime"` // SIMPLES or SIMEI
	Since  time.Time `db:"since"`
	Until  time.Time `db:"until"`
}

// QuerySimplesPeriods returns the closed periods of the given roots, newest
// first within each root and regime: the accumulated history plus the closed
// period the company's own Simples row shows (opted in, then excluded), which
// no earlier import may have recorded.
func QuerySimplesPeriods(ctx context.Context, q sqlx.QueryerContext, roots []string) ([]SimplesPeriodRow, error) {
	const query = `SELECT root, regime, since, until FROM ` + LiveSchema + `.simples_periods WHERE root = ANY($1)
UNION
SELECT root, 'SIMPLES', simples_since, simples_until FROM ` + LiveSchema + `.simples
	WHERE root = ANY($1) AND simples_until >= simples_since
UNION
SELECT root, 'SIMEI', simei_since, simei_until FROM ` + LiveSchema + `.simples
	WHERE root = ANY($1) AND simei_until >= simei_since
ORDER BY root, regime, since DESC`
	var rows []SimplesPeriodRow
	if err := sqlx.SelectContext(ctx, q, &rows, query, pq.Array(roots)); err != nil {
		return nil, fmt.Errorf("query simples periods: %w", err)
	}
	return rows, nil
}

// PageKey asks for a page of a company's offices: First offices after the
// tax id After ("" for the first page), in tax id order.
type PageKey struct {
	Root  string
	After string
	First int
}

// OfficePageRows is a page of a company's offices, with one row more than
// asked when another page follows, and the company's office count.
type OfficePageRows struct {
	Total int
	Rows  []OfficeSummaryRow
}

// QueryCompanyOfficePages returns the asked pages in one statement: each key
// reads only its page through the (root, tax_id) index, so a page of a
// company with thousands of offices costs what a page of a small one does.
func QueryCompanyOfficePages(ctx context.Context, q sqlx.QueryerContext, keys []PageKey) (map[PageKey]OfficePageRows, error) {
	const query = `SELECT k.i, t.total, o.tax_id, o.root, o.head, o.alias, o.founded, o.status, o.status_date, o.reason, o.main_activity
FROM unnest($1::text[], $2::text[], $3::int[]) WITH ORDINALITY AS k(root, after, lim, i)
CROSS JOIN LATERAL (SELECT count(*)::int AS total FROM ` + LiveSchema + `.offices c WHERE c.root = k.root) t
LEFT JOIN LATERAL (SELECT * FROM ` + LiveSchema + `.offices o
	WHERE o.root = k.root AND o.tax_id > k.after COLLATE "C" ORDER BY o.tax_id LIMIT k.lim) o ON true
ORDER BY k.i, o.tax_id`
	roots, afters, limits := make([]string, len(keys)), make([]string, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		roots[i], afters[i], limits[i] = k.Root, k.After, int64(k.First+1)
	}
	type pageRow struct {
		i, total int64
		taxID    *string // nil: the page past the end is empty
		root     *string
		head     *bool
		summary  OfficeSummaryRow
	}
	dest := func(r *pageRow) []any {
		o := &r.summary
		return []any{&r.i, &r.total, &r.taxID, &r.root, &r.head, &o.Alias, &o.Founded, &o.Status, &o.StatusDate, &o.Reason, &o.MainActivity}
	}
	rows, err := selectRows(ctx, q, "company office pages", query, dest, pq.Array(roots), pq.Array(afters), pq.Array(limits))
	if err != nil {
		return nil, err
	}
	out := make(map[PageKey]OfficePageRows, len(keys))
	for _, r := range rows {
		k := keys[r.i-1]
		p := out[k]
		p.Total = int(r.total)
		if r.taxID != nil {
			r.summary.TaxID, r.summary.Root, r.summary.Head = *r.taxID, *r.root, *r.head
			p.Rows = append(p.Rows, r.summary)
		}
		out[k] = p
	}
	return out, nil
}
