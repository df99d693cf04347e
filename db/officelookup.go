package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cnpjgraph/cnpjgraph/model"
	"github.com/lib/pq"
)

// The office lookup of one tax id in one statement (one round trip): the
// office with its company (and its Simples when asked), its members with their
// persons (one row per member, the office's columns repeated: members are
// few, and PostgreSQL streams rows cheaper than it aggregates them), and,
// when asked, the overlay's records of the tax id. A batch of lookups
// (GraphQL's) goes through the loaders instead.

// officeLookupSQL are the statements, indexed by pick(overlay, simples):
// with or without the overlay's records, with or without the company's
// Simples row (its columns then null: an office lookup without `simples`
// does not show it, and skips a probe).
var officeLookupSQL = func() (v [4]string) {
	for _, overlay := range []bool{false, true} {
		for _, simples := range []bool{false, true} {
			columns, joins := officeWithMembers(simples)
			q := `SELECT ` + columns + `
FROM ` + LiveSchema + `.offices o` + joins + `
WHERE o.tax_id = $1`
			if overlay {
				// Driven by the tax id, so that a record fetched online
				// for an office the snapshot lacks is read too.
				q = `SELECT ` + columns + `,
	(SELECT json_agg(json_build_object('portal', r.portal, 'updated', r.updated, 'body', r.body))
	 FROM overlay_records r WHERE r.tax_id = $1)
FROM (SELECT $1::text COLLATE "C" AS tax_id) k
LEFT JOIN ` + LiveSchema + `.offices o ON o.tax_id = k.tax_id` + joins
			}
			v[pick(overlay, simples)] = q
		}
	}
	return v
}()

// officeWithMembers are the columns and joins of an office (o) with its
// company, its company's Simples when simples, and its members with their
// persons, one row per member (m's columns null when the company has
// none).
func officeWithMembers(simples bool) (columns, joins string) {
	company, join := companyColumnsWithoutSimples, ""
	if simples {
		company, join = companyColumns, `
LEFT JOIN `+LiveSchema+`.simples s ON s.root = o.root`
	}
	columns = `o.tax_id, o.root, o.head, o.alias, o.status, o.status_date, o.reason, o.city_abroad,
	o.country, o.founded, o.main_activity, o.side_activities, o.street, o.number, o.details, o.district,
	o.zip, o.state, o.municipality, o.phones, o.email, o.special, o.special_date,
	` + company + `,
	m.root, m.position, m.role, m.since, m.p_id, m.p_type, m.p_tax_id, m.p_name, m.p_age, m.p_country,
	m.a_id, m.a_type, m.a_tax_id, m.a_name, m.a_age, m.a_country, m.agent_role`
	joins = `
LEFT JOIN ` + LiveSchema + `.companies c ON c.root = o.root` + join + `
LEFT JOIN LATERAL (
	SELECT m.root, m.position, m.role, m.since,
		p.id AS p_id, p.type AS p_type, p.tax_id AS p_tax_id, p.name AS p_name, p.age AS p_age, p.country AS p_country,
		a.id AS a_id, a.type AS a_type, a.tax_id AS a_tax_id, a.name AS a_name, a.age AS a_age, a.country AS a_country,
		m.agent_role
	FROM ` + LiveSchema + `.members m
	JOIN ` + LiveSchema + `.persons p ON p.id = m.person_id
	LEFT JOIN ` + LiveSchema + `.persons a ON a.id = m.agent_person_id
	WHERE m.root = o.root
	ORDER BY m.position) m ON true`
	return columns, joins
}

// searchRecordsSQL reads a search page's offices as the lookup does,
// without Simples (a search record shows none), all in one statement: the
// offices and their companies, then their members, took two.
var searchRecordsSQL = func() string {
	columns, joins := officeWithMembers(false)
	return `SELECT ` + columns + `
FROM ` + LiveSchema + `.offices o` + joins + `
WHERE o.tax_id = ANY($1)
ORDER BY o.tax_id, m.position`
}()

// SearchRecords reads the offices of taxIDs with their companies (without
// Simples) and their members, in one statement; members keyed by root.
// An office the snapshot lacks is absent.
func (s *Store) SearchRecords(ctx context.Context, taxIDs []string) (map[string]model.Office, map[string][]model.Member, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return nil, nil, err
	}
	rs, err := s.Q.QueryxContext(ctx, searchRecordsSQL, pq.Array(taxIDs))
	if err != nil {
		return nil, nil, fmt.Errorf("query search records: %w", err)
	}
	defer func() { _ = rs.Close() }()
	var (
		offices = make(map[string]model.Office, len(taxIDs))
		members = make(map[string][]model.Member, len(taxIDs))
		office  OfficeRow
		member  memberColumns
		last    string // the office whose rows these are
		reading bool   // its rows' members are its company's first reading
	)
	dest := member.appendDest(office.appendDest(make([]any, 0, officeColumnCount+memberColumnCount)))
	for rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return nil, nil, fmt.Errorf("query search records: %w", err)
		}
		if office.TaxID != last { // the office's first row
			last = office.TaxID
			o, err := s.office(ctx, codes, &office)
			if err != nil {
				return nil, nil, err
			}
			if o.Company != nil {
				o.Company.Simples, o.Company.Simei = nil, nil
			}
			offices[o.TaxID] = o
			// Two offices of one company each bring its members.
			if _, read := members[o.Root]; !read {
				members[o.Root], reading = []model.Member{}, true
			} else {
				reading = false
			}
		}
		if reading && member.Root != nil {
			members[*member.Root] = append(members[*member.Root], member.member(codes))
		}
	}
	if err := rs.Err(); err != nil {
		return nil, nil, fmt.Errorf("query search records: %w", err)
	}
	return offices, members, nil
}

// OfficeLookup is what the office lookup reads for one tax id.
type OfficeLookup struct {
	Office  *model.Office // nil when the snapshot lacks the tax id
	Members []model.Member
	Overlay map[string]OverlayRecord // by portal; nil unless asked for
}

// memberColumns are a member row as the lookup's LEFT JOIN gives it: null
// when the company has no members.
type memberColumns struct {
	Root, PersonID, PersonType, PersonName *string
	Position                               *int
	MemberRow
}

const memberColumnCount = 17

// member is the row's member; its Root is not null.
func (m *memberColumns) member(codes *Codes) model.Member {
	r := m.MemberRow
	r.Root, r.Position = *m.Root, *m.Position
	r.PersonID, r.PersonType, r.PersonName = deref(m.PersonID), deref(m.PersonType), deref(m.PersonName)
	return codes.member(&r)
}

func (m *memberColumns) appendDest(d []any) []any {
	r := &m.MemberRow
	return append(d, &m.Root, &m.Position, &r.Role, &r.Since,
		&m.PersonID, &m.PersonType, &r.PersonTaxID, &m.PersonName, &r.PersonAge, &r.PersonCntry,
		&r.AgentID, &r.AgentType, &r.AgentTaxID, &r.AgentName, &r.AgentAge, &r.AgentCountry, &r.AgentRole)
}

// OfficeLookup reads taxID's office, company and members, with simples its
// company's Simples (without, the company's Simples and Simei are nil), and
// with overlay the overlay's records of the tax id, in one statement.
func (s *Store) OfficeLookup(ctx context.Context, taxID string, overlay, simples bool) (OfficeLookup, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return OfficeLookup{}, err
	}
	query := officeLookupSQL[pick(overlay, simples)]
	rs, err := s.Q.QueryxContext(ctx, query, taxID)
	if err != nil {
		return OfficeLookup{}, fmt.Errorf("query office lookup: %w", err)
	}
	defer func() { _ = rs.Close() }()
	var (
		out     OfficeLookup
		office  OfficeRow
		taxIDs  *string // null: the snapshot lacks the office (overlay query)
		root    *string
		head    *bool
		member  memberColumns
		records []byte
		first   = true
	)
	dest := member.appendDest(office.appendDest(make([]any, 0, officeColumnCount+memberColumnCount+1)))
	// The office's key columns are null when the snapshot lacks it.
	dest[0], dest[1], dest[2] = &taxIDs, &root, &head
	if overlay {
		dest = append(dest, &records)
	}
	for rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return OfficeLookup{}, fmt.Errorf("query office lookup: %w", err)
		}
		if first {
			first = false
			if taxIDs != nil {
				office.TaxID, office.Root, office.Head = *taxIDs, deref(root), head != nil && *head
				o, err := s.office(ctx, codes, &office)
				if err != nil {
					return OfficeLookup{}, err
				}
				if !simples {
					o.Company.Simples, o.Company.Simei = nil, nil
				}
				out.Office = &o
			}
			if overlay {
				if out.Overlay, err = overlayRecords(taxID, records); err != nil {
					return OfficeLookup{}, err
				}
			}
		}
		if member.Root != nil {
			out.Members = append(out.Members, member.member(codes))
		}
	}
	if err := rs.Err(); err != nil {
		return OfficeLookup{}, fmt.Errorf("query office lookup: %w", err)
	}
	if out.Overlay == nil && overlay {
		out.Overlay = map[string]OverlayRecord{}
	}
	if out.Office != nil && out.Members == nil {
		// Read, and none: not nil, which says "not read" (a company's
		// members would then be read again, one more round trip).
		out.Members = []model.Member{}
	}
	return out, nil
}

// overlayRecords decodes the overlay records the lookup aggregated.
func overlayRecords(taxID string, b []byte) (map[string]OverlayRecord, error) {
	out := make(map[string]OverlayRecord, 3)
	if len(b) == 0 {
		return out, nil
	}
	var recs []struct {
		Portal  string          `json:"portal"`
		Updated time.Time       `json:"updated"`
		Body    json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(b, &recs); err != nil {
		return nil, errors.New("read overlay: " + err.Error())
	}
	for _, r := range recs {
		out[r.Portal] = OverlayRecord{TaxID: taxID, Portal: r.Portal, Updated: r.Updated.UTC(), Body: r.Body}
	}
	return out, nil
}

// personRecordsSQL reads persons with their memberships (each with its
// company and Simples, as Memberships), in one statement: a person search
// page took two, the persons and then their memberships. A person without
// one has a single row whose root is "".
const personRecordsSQL = `SELECT p.id, p.type, p.tax_id, p.name, p.age, p.country,
	coalesce(m.root, ''), m.role, m.since, ` + companyColumns + `
FROM ` + LiveSchema + `.persons p
LEFT JOIN ` + LiveSchema + `.members m ON m.person_id = p.id
LEFT JOIN ` + LiveSchema + `.companies c ON c.root = m.root
LEFT JOIN ` + LiveSchema + `.simples s ON s.root = m.root
WHERE p.id = ANY($1)
ORDER BY p.id, m.root, m.position`

// PersonRecords returns the persons of ids with their memberships, as
// Persons and Memberships would together; a missing id is absent.
func (s *Store) PersonRecords(ctx context.Context, ids []string) (map[string]model.Person, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return nil, err
	}
	type row struct {
		person     PersonRow
		membership MembershipRow
	}
	rows, err := selectRows(ctx, s.Q, "person records", personRecordsSQL, func(r *row) []any {
		p := &r.person
		d := append(make([]any, 0, 9+companyColumnCount), &p.ID, &p.Type, &p.TaxID, &p.Name, &p.Age, &p.Country,
			&r.membership.Root, &r.membership.Role, &r.membership.Since)
		return r.membership.appendDest(d)
	}, pq.Array(ids))
	if err != nil {
		return nil, err
	}
	out := make(map[string]model.Person, len(ids))
	for i := range rows {
		r := &rows[i]
		p, ok := out[r.person.ID]
		if !ok {
			p = codes.person(r.person)
			p.Membership = []model.Membership{}
		}
		if r.membership.Root != "" {
			p.Membership = append(p.Membership, codes.membership(&r.membership))
		}
		out[r.person.ID] = p
	}
	return out, nil
}
