package db

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
)

// A company's row holds what an office lookup shows of it besides its own
// columns: its Simples and SIMEI enrolment, and its members with their
// persons, as a two-dimensional text array in dump order (a member a row
// of memberFields). The import folds them in once (CompanyFoldSQL), so a
// lookup reads two rows, the office and its company, where it probed the
// Simples, the members and each member's persons; PostgreSQL served 1.6x
// the lookups (docs/benchmarks.md, "One company row").

// memberFields is a member (m) with its person (p) and legal
// representative (a) as one text array, and the member's position in the
// dump and its person's memberships (member rows in any company: the
// expression count); decodeMembers reads it back. A person with one
// membership has it in the company that lists it, and a page of it needs
// no query (SoleMembership). The date is written by pattern: a date's text
// depends on the session's DateStyle.
func memberFields(count string) string {
	return `ARRAY[m.role, to_char(m.since, 'YYYY-MM-DD'),
	p.id, p.type, p.tax_id, p.name, p.age, p.country,
	a.id, a.type, a.tax_id, a.name, a.age, a.country, m.agent_role,
	m.position::text, (` + count + `)::text]`
}

// memberFieldCount is the length of memberFields' array. The array's
// layout is part of a snapshot's format: a snapshot written with another
// layout needs handling as foldLegacySnapshot handles one without it.
const memberFieldCount = 17

// membersJoin joins the members of the relation members (as m) to their
// persons (p) and representatives (a), read from the relation agents (the
// persons, or those of them that represent someone).
func membersJoin(members, agents string) string {
	return members + ` m
	JOIN persons p ON p.id = m.person_id
	LEFT JOIN ` + agents + ` a ON a.id = m.agent_person_id`
}

// CompanyFoldSQL writes the snapshot's companies from the loaded rows
// (company_rows, COPYed without a log: this statement writes the logged
// table), the Simples rows and the members, with hash joins: the import's
// form, in the staging schema's search path, once persons are derived.
// The Simples rows must be unique by root (their primary key is built
// first); company_rows may repeat a root, and the companies' primary key
// then fails as it would on a COPYed table. The persons' membership counts
// come from a window over the members (one sort), where a grouped count
// joined back cost the fold 6 % more CPU (interleaved, 5 rounds), and
// where counting them in the persons' derive (its sort) cost that derive
// what it saved the fold. The representatives are hashed from the persons
// that represent a member (7 % of the members in the bench dump), not
// from every person: 9.2–9.7 s against 10.0–10.1 (the fold alone on the
// 1M-establishment bench dump's tables, alternated). Sorting the members
// once by root and position, so that array_agg needs no ORDER BY (which
// PostgreSQL 15 sorts per group), gained nothing measurable: 2.85 s
// against 2.92 for the members' part, the whole fold within its noise.
var CompanyFoldSQL = `INSERT INTO companies (root, name, nature, responsible_role, equity, size, jurisdiction,
	name_words, name_sig, simples_optant, simples_since, simei_optant, simei_since, members)
SELECT c.root, c.name, c.nature, c.responsible_role, c.equity, c.size, c.jurisdiction, c.name_words, c.name_sig,
	s.simples_optant, s.simples_since, s.simei_optant, s.simei_since, f.members
FROM company_rows c
LEFT JOIN simples s ON s.root = c.root
LEFT JOIN (SELECT m.root, array_agg(` + memberFields("m.memberships") + ` ORDER BY m.position) AS members
	FROM ` + membersJoin("(SELECT *, count(*) OVER (PARTITION BY person_id) AS memberships FROM members)",
	"(SELECT * FROM persons WHERE id IN (SELECT agent_person_id FROM members WHERE agent_person_id IS NOT NULL))") + `
	GROUP BY m.root) f ON f.root = c.root`

// companyMembersSQL is a company's (c) members array read from the members
// themselves: the per-company form of the fold, for a snapshot whose
// companies are not folded (tests that write the tables directly, through
// RefoldCompaniesSQL, and snapshots imported before the fold, through
// foldLegacySnapshot's view, whose members have a (root, position) index).
var companyMembersSQL = `(SELECT array_agg(` + memberFields("SELECT count(*) FROM members x WHERE x.person_id = m.person_id") + ` ORDER BY m.position)
	FROM ` + membersJoin("members", "persons") + `
	WHERE m.root = c.root)`

// RefoldCompaniesSQL recomputes every company's folded columns from the
// Simples rows and members, in the snapshot schema of the search path:
// for tests that write the tables row by row.
var RefoldCompaniesSQL = `UPDATE companies c SET
	simples_optant = s.simples_optant, simples_since = s.simples_since,
	simei_optant = s.simei_optant, simei_since = s.simei_since,
	members = ` + companyMembersSQL + `
FROM companies k LEFT JOIN simples s ON s.root = k.root
WHERE k.root = c.root`

// FoldMismatchesSQL counts the companies whose folded columns differ from
// what the Simples rows and members say, in the snapshot schema of the
// search path: 0 after an import (its tests check it).
var FoldMismatchesSQL = `SELECT count(*) FROM companies c LEFT JOIN simples s ON s.root = c.root
WHERE (c.simples_optant, c.simples_since, c.simei_optant, c.simei_since)
	IS DISTINCT FROM (s.simples_optant, s.simples_since, s.simei_optant, s.simei_since)
	OR c.members IS DISTINCT FROM ` + companyMembersSQL

// foldLegacySnapshot makes a live snapshot imported before the fold
// readable by this version: its companies table becomes companies_unfolded,
// under a view named companies that adds the folded columns, computed per
// company from the Simples rows and the members (companyMembersSQL). Its
// lookups then cost what they did before the fold, until the next import
// replaces it. Migrate runs it, so serve, import and migrate do.
func foldLegacySnapshot(ctx context.Context, d *sqlx.DB) error {
	const legacy = `SELECT to_regclass('` + LiveSchema + `.companies') IS NOT NULL AND NOT EXISTS (
	SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('` + LiveSchema + `.companies') AND attname = 'members'
		AND NOT attisdropped)`
	var old bool
	if err := d.GetContext(ctx, &old, legacy); err != nil || !old {
		return err
	}
	tx, err := d.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	// One process converts; another that raced it finds the view.
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7355608061)`); err != nil {
		return err
	}
	if err := tx.GetContext(ctx, &old, legacy); err != nil || !old {
		return err
	}
	for _, q := range []string{
		`SET LOCAL search_path TO ` + LiveSchema,
		`ALTER TABLE companies RENAME TO companies_unfolded`,
		`CREATE VIEW companies AS
SELECT c.*, s.simples_optant, s.simples_since, s.simei_optant, s.simei_since, ` + companyMembersSQL + ` AS members
FROM companies_unfolded c LEFT JOIN simples s ON s.root = c.root`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("fold the live snapshot's companies: %w", err)
		}
	}
	return tx.Commit()
}

// errMembers is a members array that is not memberFields'.
var errMembers = errors.New("read a company's members: malformed array")

// decodeMembers reads a company's members array (PostgreSQL's text form of
// a two-dimensional text array, as lib/pq hands it over) into member rows
// of root, in dump order. NULL (nil or empty) is no member.
func decodeMembers(root string, b []byte) ([]MemberRow, error) {
	if len(b) == 0 {
		return nil, nil
	}
	p := arrayParser{b: b}
	if !p.take('{') {
		return nil, errMembers
	}
	var rows []MemberRow
	var f [memberFieldCount]*string
	for {
		if !p.take('{') {
			return nil, errMembers
		}
		for i := range f {
			if i > 0 && !p.take(',') {
				return nil, errMembers
			}
			v, ok := p.element()
			if !ok {
				return nil, errMembers
			}
			f[i] = v
		}
		if !p.take('}') {
			return nil, errMembers
		}
		r, err := memberRowOf(root, &f)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
		if p.take('}') {
			break
		}
		if !p.take(',') {
			return nil, errMembers
		}
	}
	if p.i != len(p.b) {
		return nil, errMembers
	}
	return rows, nil
}

// memberRowOf is the member of fields f, in memberFields' order.
func memberRowOf(root string, f *[memberFieldCount]*string) (MemberRow, error) {
	r := MemberRow{Root: root, Role: f[0],
		PersonID: deref(f[2]), PersonType: deref(f[3]), PersonTaxID: f[4], PersonName: deref(f[5]),
		PersonAge: f[6], PersonCntry: f[7],
		AgentID: f[8], AgentType: f[9], AgentTaxID: f[10], AgentName: f[11], AgentAge: f[12], AgentCountry: f[13],
		AgentRole: f[14]}
	if f[1] != nil {
		d, err := time.Parse(time.DateOnly, *f[1])
		if err != nil {
			return MemberRow{}, errMembers
		}
		r.Since = &d
	}
	var err error
	if r.Position, err = strconv.Atoi(deref(f[15])); err != nil {
		return MemberRow{}, errMembers
	}
	if r.PersonMemberships, err = strconv.Atoi(deref(f[16])); err != nil {
		return MemberRow{}, errMembers
	}
	return r, nil
}

// arrayParser reads PostgreSQL's text form of arrays (array_out): elements
// separated by commas, NULL unquoted, an element quoted when it is empty,
// is "NULL", or holds a brace, comma, quote, backslash or white space,
// with quotes and backslashes escaped by a backslash inside the quotes.
type arrayParser struct {
	b []byte
	i int
}

// take consumes c if it comes next.
func (p *arrayParser) take(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// element reads one element: nil for NULL.
func (p *arrayParser) element() (*string, bool) {
	if p.i >= len(p.b) {
		return nil, false
	}
	if p.b[p.i] != '"' {
		start := p.i
		for p.i < len(p.b) && p.b[p.i] != ',' && p.b[p.i] != '}' {
			p.i++
		}
		v := string(p.b[start:p.i])
		if v == "" {
			return nil, false
		}
		if v == "NULL" {
			return nil, true
		}
		return &v, true
	}
	p.i++ // the opening quote
	start, escaped := p.i, false
	for ; p.i < len(p.b); p.i++ {
		switch p.b[p.i] {
		case '\\':
			escaped = true
			p.i++
		case '"':
			v := p.b[start:p.i]
			p.i++
			if !escaped {
				s := string(v)
				return &s, true
			}
			out := make([]byte, 0, len(v))
			for j := 0; j < len(v); j++ {
				if v[j] == '\\' && j+1 < len(v) {
					j++
				}
				out = append(out, v[j])
			}
			s := string(out)
			return &s, true
		}
	}
	return nil, false
}
