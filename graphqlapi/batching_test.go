package graphqlapi_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/graphqlapi"
)

// nestedQuery goes four levels below offices: office → company → members
// → person → membership → company → offices.
const nestedQuery = `query($ids: [String!]!) {
  offices(taxIds: $ids) {
    taxId
    company {
      name
      members {
        role { id }
        person {
          name
          membership(first: 5) {
            totalCount
            nodes {
              role { id }
              company {
                name
                offices(first: 3) { totalCount nodes { taxId status { id } } }
              }
            }
          }
        }
      }
    }
  }
}`

// addChain adds n companies with one office each and three members each,
// member k of company i being also member of company i+1, so that every
// level of nestedQuery fans out to distinct keys. It returns the offices'
// tax ids.
func addChain(t testing.TB, d *sqlx.DB, n int) []string {
	t.Helper()
	ids := make([]string, n)
	person := func(k int) dbtest.Person {
		return dbtest.Person{Type: "NATURAL", TaxID: fmt.Sprintf("***%06d**", 500000+k), Name: fmt.Sprintf("PESSOA DA CADEIA %03d", k), Age: "4"}
	}
	for k := 0; k < n*3+3; k++ {
		p := person(k)
		dbtest.MustExec(t, d, `INSERT INTO cnpj.persons VALUES ($1,$2,$3,$4,$5,NULL)`, p.ID(), p.Type, p.TaxID, p.Name, p.Age)
	}
	for i := 0; i < n; i++ {
		root := fmt.Sprintf("7%07d", i)
		ids[i] = string(cnpj.Build(root, "0001"))
		dbtest.MustExec(t, d, `INSERT INTO cnpj.companies VALUES ($1,$2,'2062','49',1000.00,'01',NULL)`, root, fmt.Sprintf("EMPRESA DA CADEIA %03d LTDA", i))
		dbtest.MustExec(t, d, `INSERT INTO cnpj.offices (tax_id, root, head, status, status_date, reason, founded, main_activity,
			side_activities, street, number, district, zip, state, municipality, phones)
			VALUES ($1,$2,true,'02','2010-01-01','00','2010-01-01','6204000','{}','RUA A','1','CENTRO','70000000','DF','9701','{}')`, ids[i], root)
		for j := 0; j < 3; j++ {
			// Members 3i+1..3i+3: the first is also the last of the previous company.
			dbtest.MustExec(t, d, `INSERT INTO cnpj.members VALUES ($1,$2,$3,'49','2010-01-01',NULL,NULL)`, root, j+1, person(3*i+j).ID())
		}
		if i > 0 {
			dbtest.MustExec(t, d, `INSERT INTO cnpj.members VALUES ($1,4,$2,'22','2011-01-01',NULL,NULL)`, root, person(3*i-1).ID())
		}
	}
	dbtest.Fold(t, d)
	return ids
}

// TestRoundTripsPerLevel: the nested query for 50 tax ids of 50 companies
// costs one SQL statement per level, the same as for one tax id: offices and members
// (the office lookup's two, concurrent), memberships (which carry their
// companies), the companies' office pages. Office.company and Company.members come with
// the office lookup's loads. A long batch window makes the count
// independent of scheduling; the benchmark measures the production window.
// 100 ms was not long enough under -race on a slow machine (the level's last
// keys came 255 ms after its first, and made a second batch).
func TestRoundTripsPerLevel(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	ids := addChain(t, d, 50)
	s := serverOver(t, d, serverOptions{gql: graphqlapi.Options{BatchWait: 500 * time.Millisecond}})
	const levels = 4
	var sent []string
	count := func(ids []string) (int64, result) {
		s.takeStatements()
		before := s.roundTrips.Load()
		r := s.post(t, nestedQuery, map[string]any{"ids": ids})
		sent = s.takeStatements()
		return s.roundTrips.Load() - before, r
	}
	// Warm the code tables and prepared statements outside the count.
	count([]string{dbtest.SerproBranch})
	count([]string{dbtest.BigHead})

	one, r := count(ids[:1])
	r.ok(t)
	fifty, r := count(ids)
	r.ok(t)
	items := at(t, r.Data, "offices").([]any)
	if len(items) != 50 {
		t.Fatalf("%d offices", len(items))
	}
	// Company 7 has four members; its last is also a member of company 8.
	members := at(t, items[7], "company", "members").([]any)
	ms := at(t, members[2], "person", "membership", "nodes").([]any)
	if len(members) != 4 || len(ms) != 2 || at(t, ms, 1, "company", "offices", "nodes", 0, "taxId") != ids[8] {
		t.Errorf("company 7: %v", members)
	}
	t.Logf("SQL round trips: %d for 1 tax id, %d for 50", one, fifty)
	if one != levels || fifty != levels {
		t.Errorf("SQL round trips: %d for 1 tax id, %d for 50; want %d for both (one per level); the 50:\n%s",
			one, fifty, levels, strings.Join(sent, "\n"))
	}

	// Full office fields on the page cost one more batch for the level,
	// summaries none.
	before := s.roundTrips.Load()
	s.post(t, `{ company(id: "`+dbtest.BigRoot+`") { offices(first: 5) { nodes { taxId address { city } } } } }`, nil).ok(t)
	if n := s.roundTrips.Load() - before; n != 3 {
		t.Errorf("company with full offices: %d round trips, want 3 (company, the page, its offices)", n)
	}
}

// TestNoMembersOneStatement: an office whose company has no members is
// answered, members included, by the office lookup's one statement; an
// empty member list is not read again.
func TestNoMembersOneStatement(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	root := "80000001"
	taxID := string(cnpj.Build(root, "0001"))
	dbtest.MustExec(t, d, `INSERT INTO cnpj.companies VALUES ($1,'EMPRESA SEM SOCIOS LTDA','2062','49',1000.00,'01',NULL)`, root)
	dbtest.MustExec(t, d, `INSERT INTO cnpj.offices (tax_id, root, head, status, status_date, reason, founded, main_activity,
		side_activities, street, number, district, zip, state, municipality, phones)
		VALUES ($1,$2,true,'02','2010-01-01','00','2010-01-01','6204000','{}','RUA A','1','CENTRO','70000000','DF','9701','{}')`, taxID, root)
	dbtest.Fold(t, d)
	s := serverOver(t, d, serverOptions{})
	q := `query($t: String!) { office(taxId: $t) { taxId company { name members { role { id } } } } }`
	s.post(t, q, map[string]any{"t": dbtest.SerproBranch}).ok(t) // code tables and prepared statements
	before := s.roundTrips.Load()
	r := s.post(t, q, map[string]any{"t": taxID})
	r.ok(t)
	if n := s.roundTrips.Load() - before; n != 1 {
		t.Errorf("%d SQL round trips, want 1 (the office lookup)", n)
	}
	if m := at(t, r.Data, "office", "company", "members").([]any); len(m) != 0 {
		t.Errorf("members %v, want none", m)
	}
}

// TestMemberCompany: a member's company is the company that lists it, as
// the company lookup shows it (its Simples too, though the office was read
// without them), and comes with the office lookup's one statement.
func TestMemberCompany(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	s := serverOver(t, d, serverOptions{})
	const fields = `updated id name equity nature { id text } size { id acronym } simples { optant since } simei { optant since }`
	q := `query($t: String!) { office(taxId: $t) { company { name simples { optant } members { company { ` + fields + ` } } } } }`
	s.post(t, q, map[string]any{"t": dbtest.SerproBranch}).ok(t) // code tables and prepared statements
	before := s.roundTrips.Load()
	r := s.post(t, q, map[string]any{"t": dbtest.SerproBranch})
	r.ok(t)
	if n := s.roundTrips.Load() - before; n != 1 {
		t.Errorf("%d SQL round trips, want 1 (the office lookup)", n)
	}
	if simples := at(t, r.Data, "office", "company", "simples"); simples != nil {
		t.Errorf("the office's company without simples: true: simples %v, want null", simples)
	}
	lookup := s.post(t, `{ company(id: "`+dbtest.SerproRoot+`") { `+fields+` } }`, nil)
	lookup.ok(t)
	want, _ := json.Marshal(at(t, lookup.Data, "company"))
	if !strings.Contains(string(want), `"simples":{`) {
		t.Fatalf("the fixture's company has no Simples record to compare: %s", want)
	}
	members := at(t, r.Data, "office", "company", "members").([]any)
	if len(members) != len(dbtest.SerproMembers) {
		t.Fatalf("%d members", len(members))
	}
	for i := range members {
		if got, _ := json.Marshal(at(t, members[i], "company")); string(got) != string(want) {
			t.Errorf("member %d's company:\n%s\nthe company lookup:\n%s", i, got, want)
		}
	}
}

// TestOfficePageCompany: an office of a company's page has that company,
// read once for the request.
func TestOfficePageCompany(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	s := serverOver(t, d, serverOptions{})
	q := `{ company(id: "` + dbtest.BigRoot + `") { id name offices(first: 3) { nodes { taxId company { id name } } } } }`
	s.post(t, q, nil).ok(t) // code tables and prepared statements
	before := s.roundTrips.Load()
	r := s.post(t, q, nil)
	r.ok(t)
	n := s.roundTrips.Load() - before
	nodes := at(t, r.Data, "company", "offices", "nodes").([]any)
	if len(nodes) != 3 {
		t.Fatalf("%d offices", len(nodes))
	}
	for i := range nodes {
		if at(t, nodes[i], "company", "id") != dbtest.BigRoot || at(t, nodes[i], "company", "name") != at(t, r.Data, "company", "name") {
			t.Errorf("office %d's company: %v", i, at(t, nodes[i], "company"))
		}
	}
	if n != 2 {
		t.Errorf("%d SQL round trips, want 2 (the company, its page)", n)
	}
}

// TestSoleMembershipsFromTheLookup: a member whose person is a member of
// no other company pages its memberships from the office lookup's own row
// (most persons): the nested query for SERPRO's office is one statement,
// where each person's page took another, and every person's page is what
// the person lookup reads through the loaders (count, cursors, the
// company with its Simples). A person with two memberships (SERPRO's
// first member, also BigRoot's) is still paged by query.
func TestSoleMembershipsFromTheLookup(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	s := serverOver(t, d, serverOptions{gql: graphqlapi.Options{BatchWait: 200 * time.Millisecond}})
	const page = `membership { totalCount nodes { since role { id text } company { id name equity simples { optant since } simei { optant } } }
		edges { cursor } pageInfo { hasNextPage endCursor } }`
	nested := `query($t: String!) { office(taxId: $t) { company { members { person { id ` + page + ` } } } } }`
	alone := `query($t: String!) { office(taxId: $t) { company { members { person { id membership { nodes { since } } } } } } }`
	s.post(t, alone, map[string]any{"t": dbtest.AlphaTaxID}).ok(t) // code tables and prepared statements

	// ALFA's one member has one membership: the lookup alone.
	s.takeSQL()
	before := s.roundTrips.Load()
	r := s.post(t, alone, map[string]any{"t": dbtest.AlphaTaxID}).ok(t)
	if n := s.roundTrips.Load() - before; n != 1 {
		t.Errorf("ALFA: %d SQL round trips, want 1 (the office lookup): %v", n, s.takeSQL())
	}
	if got := at(t, r.Data, "office", "company", "members", 0, "person", "membership", "nodes", 0, "since"); got != "2026-07-01" {
		t.Errorf("ALFA's member's membership since %v", got)
	}

	// SERPRO: six members, the first also a member of BigRoot.
	before = s.roundTrips.Load()
	r = s.post(t, nested, map[string]any{"t": dbtest.SerproBranch}).ok(t)
	if n := s.roundTrips.Load() - before; n != 2 {
		t.Errorf("SERPRO: %d SQL round trips, want 2 (the lookup, the first member's page)", n)
	}
	members := at(t, r.Data, "office", "company", "members").([]any)
	if len(members) != len(dbtest.SerproMembers) {
		t.Fatalf("%d members", len(members))
	}
	for i, m := range members {
		id := at(t, m, "person", "id").(string)
		got := at(t, m, "person", "membership")
		want := at(t, s.post(t, `query($id: ID!) { person(id: $id) { `+page+` } }`, map[string]any{"id": id}).ok(t).Data, "person", "membership")
		if g, w := asJSON(t, got), asJSON(t, want); g != w {
			t.Errorf("member %d (%s): from the lookup\n%s\nthe person lookup's\n%s", i, id, g, w)
		}
		if n := at(t, got, "totalCount"); (i == 0) != (n == json.Number("2")) {
			t.Errorf("member %d: totalCount %v", i, n)
		}
	}
}

func asJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
