package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/model"
)

// The office reads: the office lookup of one tax id in one statement (one
// round trip) that reads one row, a search page's records and the offices'
// loader (GraphQL's batches of lookups). Each reads an office's row of
// office_lookups, which holds its company's columns and members beside its
// own (the company's row holds its Simples and its members with their
// persons, db/fold.go), and the lookup, when asked, the overlay's records
// of the tax id. A snapshot imported before office_lookups existed is read
// as two rows, the office joined to its company.
//
// One row, not two: the company's probe (its key's index and its row) is
// a second pair of pages to find, most of them outside PostgreSQL's
// buffers on a registry this size. pgbench at 32 clients on the 1M bench
// dump: the join 15,900-17,800 statements/s, the one row 21,800-22,900,
// a plain read of an office by key 19,800-25,300; through the service,
// interleaved, office lookups +7 to +22 % at 1 connection and +9.5 % at
// 32 (docs/benchmarks.md, "One row an office lookup"). Ten random offices
// at 8 clients: the join 2,100-2,800 statements/s, the rows 3,700-4,400
// ("Search pages from one row an office").

// officeReads are the statements that read offices with their companies
// from one snapshot's tables.
type officeReads struct {
	lookup       [2]string // one tax id with its members, without and with the overlay's records
	records      string    // tax ids with their members: a search page
	recordsSaved string    // records storing the page's token (withToken)
	offices      string    // tax ids without members: the offices' loader
}

// officeReadSQL are the office reads from office_lookups (oneRow) and by
// the join (joined), for a snapshot imported before office_lookups.
var officeReadSQL = func() (v struct{ oneRow, joined officeReads }) {
	for _, from := range []struct {
		reads                           *officeReads
		columns, members, office, joins string
	}{
		{&v.oneRow, officeLookupsColumns(), "o.members", LiveSchema + ".office_lookups o", ""},
		{&v.joined, officeAndCompanyColumns, "c.members", LiveSchema + ".offices o", `
LEFT JOIN ` + LiveSchema + `.companies c ON c.root = o.root`},
	} {
		r, withMembers := from.reads, from.columns+", "+from.members
		r.lookup[0] = `SELECT ` + withMembers + `
FROM ` + from.office + from.joins + `
WHERE o.tax_id = $1`
		// Driven by the tax id, so that a record fetched online for an
		// office the snapshot lacks is read too.
		r.lookup[1] = `SELECT ` + withMembers + `,
	(SELECT json_agg(json_build_object('portal', r.portal, 'updated', r.updated, 'body', r.body))
	 FROM overlay_records r WHERE r.tax_id = $1)
FROM (SELECT $1::text COLLATE "C" AS tax_id) k
LEFT JOIN ` + from.office + ` ON o.tax_id = k.tax_id` + from.joins
		r.records = `SELECT ` + withMembers + `
FROM ` + from.office + from.joins + `
WHERE o.tax_id = ANY($1)`
		r.recordsSaved = withToken(r.records)
		r.offices = `SELECT ` + from.columns + `
FROM ` + from.office + from.joins + `
WHERE o.tax_id = ANY($1)`
	}
	return v
}()

// officeReads are the office reads of the snapshot's tables.
func (c *Codes) officeReads() *officeReads {
	if c.officeLookups {
		return &officeReadSQL.oneRow
	}
	return &officeReadSQL.joined
}

// officeLookupsSelect is each office with its company's columns and
// members, as the office reads read them (officeReadSQL), and its alias's
// words (for OfficeLookupsAliasFactsSQL; the reads leave them out).
const officeLookupsSelect = `SELECT ` + officeAndCompanyColumns + `, c.members, o.alias_words
FROM offices o LEFT JOIN companies c ON c.root = o.root`

// OfficeLookupsSQL derives office_lookups in the import, after the fold
// (the companies' rows) and the offices' key (which drops a duplicated
// establishment).
const OfficeLookupsSQL = `CREATE TABLE office_lookups AS
` + officeLookupsSelect

// OfficeLookupsViewSQL is office_lookups as a view, for an import without
// the table (--office-lookups=false): the reads then join each office to
// its company, through the view, as planned for a snapshot without it. A
// name that every snapshot since has, table or view: a server whose
// catalog has not yet seen the swap to such a snapshot reads the view,
// where a dropped table answered 503 until its next check.
const OfficeLookupsViewSQL = `CREATE VIEW office_lookups AS
` + officeLookupsSelect

// OfficeLookupsIndexSQL is office_lookups' key.
const OfficeLookupsIndexSQL = `CREATE UNIQUE INDEX office_lookups_pkey ON office_lookups (tax_id) WITH (fillfactor = 100)`

// OfficeLookupsActivitySQL indexes each office's main activity with its
// company's facts (size, Simples and SIMEI options, legal nature) beside
// it: a search of an activity and a company's fact reads the offices that
// have both from this index alone (probeRanges), where its collect read
// every office of the activity and hashed the companies or the Simples
// rows (a nature none of them has: a page 1.1-3.8 s at ten times the
// bench dump). office_lookups already holds both sides of the join. The
// facts are included, not keys: a probe tests them in the activity's
// range (the few offices of a rare fact are all of it to read), and with
// them as keys the build sorted ties through five columns (7.3-8.6 s on a
// slow machine against 2.7-3.4; with the size a key 4.2-4.5).
const OfficeLookupsActivitySQL = `CREATE INDEX office_lookups_activity ON office_lookups (main_activity) INCLUDE (size, simples_optant, simei_optant, nature, tax_id) WITH (fillfactor = 100)`

// OfficeLookupsAliasFactsSQL indexes each office's alias words with its
// company's facts (companyFacts, as the companies' names are indexed with
// them), the offices without an alias left out: a name with a company's
// fact reads the offices whose alias holds the name and whose company
// has the fact from this index alone, where it read every office of the
// alias and its company ("luzia" with the SIMEI optants: 20,000 companies
// for none, 100 ms). 4.3 MB on the bench dump, 0.6 s to build.
var OfficeLookupsAliasFactsSQL = `CREATE INDEX office_lookups_alias_facts ON office_lookups USING gin (alias_words, (` +
	companyFacts("office_lookups") + `)) WHERE alias_words IS NOT NULL`

// officeLookupsColumns are officeAndCompanyColumns as office_lookups
// names them (each one's alias, or its name).
func officeLookupsColumns() string {
	var names []string
	for _, c := range strings.Split(officeAndCompanyColumns, ",") {
		f := strings.Fields(c)
		name := f[len(f)-1]
		names = append(names, "o."+name[strings.LastIndex(name, ".")+1:])
	}
	return strings.Join(names, ", ")
}

// SearchRecords reads the offices of taxIDs with their companies (without
// Simples: a search record shows none) and their members, in one
// statement; members keyed by root. An office the snapshot lacks is absent.
// It stores the page's tokens too (recordsQuery).
func (s *Store) SearchRecords(ctx context.Context, taxIDs []string, tokens []SearchToken) (map[string]model.Office, map[string][]model.Member, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return nil, nil, err
	}
	reads := codes.officeReads()
	q, args, err := s.recordsQuery(ctx, reads.records, reads.recordsSaved, taxIDs, tokens)
	if err != nil {
		return nil, nil, err
	}
	rs, err := s.Q.QueryxContext(ctx, q, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("query search records: %w", err)
	}
	defer func() { _ = rs.Close() }()
	var (
		offices   = make(map[string]model.Office, len(taxIDs))
		members   = make(map[string][]model.Member, len(taxIDs))
		office    OfficeRow
		memberArr []byte
	)
	dest := append(office.appendDest(make([]any, 0, officeColumnCount+1)), &memberArr)
	for rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return nil, nil, fmt.Errorf("query search records: %w", err)
		}
		o, err := s.office(ctx, codes, &office)
		if err != nil {
			return nil, nil, err
		}
		o.Company.Simples, o.Company.Simei = nil, nil
		offices[o.TaxID] = o
		// Two offices of one company each bring its members.
		if _, read := members[o.Root]; !read {
			if members[o.Root], err = codes.members(o.Root, memberArr); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := rs.Err(); err != nil {
		return nil, nil, fmt.Errorf("query search records: %w", err)
	}
	return offices, members, nil
}

// OfficeLookup is what the office lookup reads for one tax id.
type OfficeLookup struct {
	Office *model.Office // nil when the snapshot lacks the tax id
	// Company is the office's company as a read by root makes it (its
	// Simples whatever OfficeLookupOptions.Simples says), for the
	// request's later reads of it.
	Company *model.Company
	Members []model.Member
	Overlay map[string]OverlayRecord // by portal; nil unless asked for
	// Sole are the members' persons who are members of no other company
	// (nor twice of this one), by person id: their one membership, when
	// asked for (OfficeLookupOptions.Sole).
	Sole map[string]SoleMembership
}

// OfficeLookupOptions are what an office lookup reads besides the office,
// its company and members.
type OfficeLookupOptions struct {
	Overlay bool // the overlay's records of the tax id
	Simples bool // the company's Simples (without, its Simples and Simei are nil)
	Sole    bool // the members' sole memberships (OfficeLookup.Sole)
}

// OfficeLookup reads taxID's office, company and members, and what opts
// asks for, in one statement.
func (s *Store) OfficeLookup(ctx context.Context, taxID string, opts OfficeLookupOptions) (OfficeLookup, error) {
	overlay, simples := opts.Overlay, opts.Simples
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return OfficeLookup{}, err
	}
	query := codes.officeReads().lookup[0]
	if overlay {
		query = codes.officeReads().lookup[1]
	}
	rs, err := s.Q.QueryxContext(ctx, query, taxID)
	if err != nil {
		return OfficeLookup{}, fmt.Errorf("query office lookup: %w", err)
	}
	defer func() { _ = rs.Close() }()
	var (
		out       OfficeLookup
		office    OfficeRow
		taxIDs    *string // null: the snapshot lacks the office (overlay query)
		root      *string
		head      *bool
		memberArr []byte
		records   []byte
	)
	dest := append(office.appendDest(make([]any, 0, officeColumnCount+2)), &memberArr)
	// The office's key columns are null when the snapshot lacks it.
	dest[0], dest[1], dest[2] = &taxIDs, &root, &head
	if overlay {
		dest = append(dest, &records)
	}
	if rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return OfficeLookup{}, fmt.Errorf("query office lookup: %w", err)
		}
		if taxIDs != nil {
			office.TaxID, office.Root, office.Head = *taxIDs, deref(root), head != nil && *head
			o, err := s.office(ctx, codes, &office)
			if err != nil {
				return OfficeLookup{}, err
			}
			company := *o.Company // as a membership page and a read by root make it
			out.Company = &company
			if !simples {
				o.Company.Simples, o.Company.Simei = nil, nil
			}
			out.Office = &o
			rows, err := decodeMembers(o.Root, memberArr)
			if err != nil {
				return OfficeLookup{}, err
			}
			// Read, and none: not empty, not nil, which says "not read" (a
			// company's members would then be read again, one more round trip).
			out.Members = make([]model.Member, len(rows))
			for i := range rows {
				out.Members[i] = codes.member(&rows[i])
				if r := &rows[i]; opts.Sole && r.PersonMemberships == 1 {
					if out.Sole == nil {
						out.Sole = map[string]SoleMembership{}
					}
					out.Sole[r.PersonID] = SoleMembership{Position: r.Position,
						Membership: model.Membership{Since: r.Since, Role: codes.role(r.Role), Company: company}}
				}
			}
		}
		if overlay {
			if out.Overlay, err = overlayRecords(taxID, records); err != nil {
				return OfficeLookup{}, err
			}
		}
	}
	if err := rs.Err(); err != nil {
		return OfficeLookup{}, fmt.Errorf("query office lookup: %w", err)
	}
	if out.Overlay == nil && overlay {
		out.Overlay = map[string]OverlayRecord{}
	}
	return out, nil
}

// SoleMembership is a person's only membership, known from the company
// that lists the person: a first page of the person's memberships without
// a query.
type SoleMembership struct {
	Membership model.Membership
	Position   int // the member's position in its company
}

// Page is the page MembershipPages reads for k, when k asks for a first
// page (ok is false for a page after a cursor).
func (m SoleMembership) Page(k MembershipPageKey) (page MembershipPage, ok bool) {
	if k.AfterRoot != "" || k.First < 1 {
		return MembershipPage{}, false
	}
	ms := m.Membership
	if k.NoSimples {
		ms.Company.Simples, ms.Company.Simei = nil, nil
	}
	if !k.NoTotal {
		page.Total = 1
	}
	page.Memberships, page.Positions = []model.Membership{ms}, []int{m.Position}
	return page, true
}

// members are a company's members from its members array: empty, not nil,
// when it has none.
func (c *Codes) members(root string, array []byte) ([]model.Member, error) {
	rows, err := decodeMembers(root, array)
	if err != nil {
		return nil, err
	}
	out := make([]model.Member, len(rows))
	for i := range rows {
		out[i] = c.member(&rows[i])
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
WHERE p.id = ANY($1)
ORDER BY p.id, m.root, m.position`

// personRecordsSavedSQL is personRecordsSQL storing the page's token.
var personRecordsSavedSQL = withToken(personRecordsSQL)

// PersonRecords returns the persons of ids with their memberships, as
// Persons and Memberships would together; a missing id is absent. It
// stores the page's tokens too (recordsQuery).
func (s *Store) PersonRecords(ctx context.Context, ids []string, tokens []SearchToken) (map[string]model.Person, error) {
	codes, err := s.Catalog.Current(ctx)
	if err != nil {
		return nil, err
	}
	q, args, err := s.recordsQuery(ctx, personRecordsSQL, personRecordsSavedSQL, ids, tokens)
	if err != nil {
		return nil, err
	}
	type row struct {
		person     PersonRow
		membership MembershipRow
	}
	rows, err := selectRows(ctx, s.Q, "person records", q, func(r *row) []any {
		p := &r.person
		d := append(make([]any, 0, 9+companyColumnCount), &p.ID, &p.Type, &p.TaxID, &p.Name, &p.Age, &p.Country,
			&r.membership.Root, &r.membership.Role, &r.membership.Since)
		return r.membership.appendDest(d)
	}, args...)
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
