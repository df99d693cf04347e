package graphqlapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

const personFields = `id name type taxId age country { id name }`

const officeFields = `updated taxId alias founded head statusDate
  status { id text } reason { id text } specialDate special { id text }
  address { municipality street number details district city state zip country { id name } }
  phones { area number } emails { address domain }
  mainActivity { id text } sideActivities { id text }
  registrations { state number enabled }`

const membersFields = `members { since role { id text } person { ` + personFields + ` }
  agent { person { ` + personFields + ` } role { id text } } }`

// TestSameAsREST: the same lookups through REST and GraphQL give the same
// values, field by field, for every field REST shows. A field REST leaves
// out (reason of an active office, age of a legal person, ...) must be
// null in GraphQL. The company id is a number in REST and an ID (string)
// in GraphQL: compared as text.
func TestSameAsREST(t *testing.T) {
	s := newServer(t, serverOptions{})
	andre := dbtest.SerproMembers[0].Person.ID()
	officeQ := `query($id: String!) { x: office(taxId: $id, simples: true, registrations: ["BR"]) { ` + officeFields + `
	  company { id name equity nature { id text } size { id acronym text } simples { optant since } simei { optant since } ` + membersFields + ` } } }`
	rfbQ := `query($id: String!) { x: rfb(taxId: $id) { updated taxId name alias founded jurisdiction equity head
	  nature { id text } size { id acronym text } statusDate status { id text } reason { id text } specialDate special { id text }
	  address { municipality street number details district city state zip country { id name } }
	  phones { area number } emails { address domain } mainActivity { id text } sideActivities { id text }
	  registrations { state number enabled }
	  members { since role { id text } person { name taxId age } agent { person { name taxId age } role { id text } } } } }`
	companyQ := `query($id: ID!) { x: company(id: $id) { updated id name equity nature { id text } size { id acronym text }
	  simples { optant since } simei { optant since } ` + membersFields + `
	  offices(first: 100) { nodes { taxId alias founded head statusDate status { id text } reason { id text } mainActivity { id text } } } } }`
	personQ := `query($id: ID!) { x: person(id: $id) { updated ` + personFields + `
	  membership(first: 100) { nodes { since role { id text } company { id name equity nature { id text } size { id acronym text } } } } } }`
	simplesQ := `query($id: String!) { x: simples(taxId: $id, history: true) { updated taxId
	  simples { optant since history { from until text } } simei { optant since history { from until text } } } }`

	cases := []struct {
		rest, query, id string
	}{
		{"/office/" + dbtest.SerproBranch + "?simples=true&registrations=BR", officeQ, dbtest.SerproBranch},
		{"/office/" + dbtest.BigHead + "?simples=true&registrations=BR", officeQ, dbtest.BigHead},
		{"/office/" + dbtest.AbroadTaxID + "?simples=true&registrations=BR", officeQ, dbtest.AbroadTaxID},
		{"/office/" + dbtest.AlphaTaxID + "?simples=true&registrations=BR", officeQ, dbtest.AlphaTaxID},
		{"/rfb?taxId=" + dbtest.BigHead, rfbQ, dbtest.BigHead},
		{"/rfb?taxId=" + dbtest.AbroadTaxID, rfbQ, dbtest.AbroadTaxID},
		{"/company/" + dbtest.BigRoot, companyQ, dbtest.BigRoot},
		{"/company/" + dbtest.AlphaRoot, companyQ, dbtest.AlphaRoot},
		{"/person/" + andre, personQ, andre},
		{"/person/" + dbtest.ForeignPerson.ID(), personQ, dbtest.ForeignPerson.ID()},
		{"/simples?taxId=" + dbtest.AlphaTaxID + "&history=true", simplesQ, dbtest.AlphaTaxID},
	}
	for _, c := range cases {
		t.Run(c.rest, func(t *testing.T) {
			rest := s.rest(t, c.rest)
			g := s.post(t, c.query, map[string]any{"id": c.id}).ok(t)
			gql := g.Data["x"].(map[string]any)
			// The company's office list and the person's memberships are
			// pages in GraphQL.
			for _, list := range []string{"offices", "membership"} {
				if page, ok := gql[list].(map[string]any); ok {
					gql[list] = page["nodes"]
				}
			}
			var diffs []string
			compare("", rest, gql, &diffs)
			for _, d := range diffs {
				t.Error(d)
			}
		})
	}
}

// compare records every difference between a REST value and a GraphQL one.
func compare(path string, rest, gql any, diffs *[]string) {
	switch r := rest.(type) {
	case map[string]any:
		g, ok := gql.(map[string]any)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: REST object, GraphQL %v", path, gql))
			return
		}
		keys := make([]string, 0, len(r))
		for k := range r {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				*diffs = append(*diffs, fmt.Sprintf("%s.%s: not selected in GraphQL", path, k))
				continue
			}
			compare(path+"."+k, r[k], gv, diffs)
		}
		for k, gv := range g {
			if _, ok := r[k]; !ok && gv != nil {
				*diffs = append(*diffs, fmt.Sprintf("%s.%s: absent in REST, %v in GraphQL", path, k, gv))
			}
		}
	case []any:
		g, ok := gql.([]any)
		if !ok || len(g) != len(r) {
			*diffs = append(*diffs, fmt.Sprintf("%s: REST %d items, GraphQL %v", path, len(r), gql))
			return
		}
		for i := range r {
			compare(fmt.Sprintf("%s[%d]", path, i), r[i], g[i], diffs)
		}
	default:
		if fmt.Sprint(rest) != fmt.Sprint(gql) || (rest == nil) != (gql == nil) {
			*diffs = append(*diffs, fmt.Sprintf("%s: REST %#v, GraphQL %#v", path, rest, gql))
		}
	}
}

// rest GETs a REST route through the same router and decodes its object.
func (s *server) rest(t testing.TB, target string) map[string]any {
	t.Helper()
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: %d %s", target, rec.Code, body)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}
