package graphqlapi_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// TestOfficeOptionsSameAsREST: the office lookup's options beyond the spec
// answer the same over GraphQL as over REST: links (signed for the key,
// only those it may open), SUFRAMA, coordinates, Simples history; and an
// invalid option is refused with REST's sentence.
func TestOfficeOptionsSameAsREST(t *testing.T) {
	e := newAccessEnv(t)
	office := "/office/" + dbtest.BigHead
	for _, perms := range [][]string{
		nil, // every permission
		{auth.ReadGraphQL, auth.ReadOffice, auth.ReadCertificate},
		{auth.ReadGraphQL, auth.ReadOffice, auth.ReadMap},
	} {
		c := e.caller(perms)
		rest := c.get(office + "?links=RFB_CERTIFICATE,SIMPLES_CERTIFICATE,CCC_CERTIFICATE,SUFRAMA_CERTIFICATE,OFFICE_MAP,OFFICE_STREET&suframa=true&geocoding=true&simplesHistory=true")
		gql := c.graphql(`{ office(taxId: "` + dbtest.BigHead + `", links: ["OFFICE_STREET", "OFFICE_MAP", "SUFRAMA_CERTIFICATE", "CCC_CERTIFICATE", "SIMPLES_CERTIFICATE", "RFB_CERTIFICATE"],
			suframa: true, geocoding: true, simplesHistory: true) {
			links { type url } suframa { number since approved approvalDate status { id text } incentives { tribute benefit purpose basis } }
			address { latitude longitude } company { simples { optant since history { from until text } } } } }`)
		if rest.status != 200 || gql.status != 200 || gql.body["errors"] != nil {
			t.Fatalf("%v: REST %d %v, GraphQL %d %v", perms, rest.status, rest.body, gql.status, gql.body)
		}
		o := gql.body["data"].(map[string]any)["office"].(map[string]any)
		for _, f := range []string{"links", "suframa"} {
			if got, want := fmt.Sprint(o[f]), fmt.Sprint(rest.body[f]); got != want {
				t.Errorf("%v %s: GraphQL %s, REST %s", perms, f, got, want)
			}
		}
		a, ra := o["address"].(map[string]any), rest.body["address"].(map[string]any)
		if fmt.Sprint(a["latitude"], a["longitude"]) != fmt.Sprint(ra["latitude"], ra["longitude"]) || a["latitude"] == nil {
			t.Errorf("coordinates: GraphQL %v, REST %v", a, ra)
		}
		gs := o["company"].(map[string]any)["simples"]
		rs := rest.body["company"].(map[string]any)["simples"]
		if fmt.Sprint(gs) != fmt.Sprint(rs) {
			t.Errorf("simples: GraphQL %v, REST %v", gs, rs)
		}
		var types []string
		for _, l := range o["links"].([]any) {
			types = append(types, l.(map[string]any)["type"].(string))
		}
		want := "[RFB_CERTIFICATE SIMPLES_CERTIFICATE CCC_CERTIFICATE SUFRAMA_CERTIFICATE OFFICE_MAP OFFICE_STREET]"
		switch {
		case slices.Contains(perms, auth.ReadCertificate):
			want = "[RFB_CERTIFICATE SIMPLES_CERTIFICATE CCC_CERTIFICATE SUFRAMA_CERTIFICATE]"
		case slices.Contains(perms, auth.ReadMap):
			want = "[OFFICE_MAP]"
		}
		if fmt.Sprint(types) != want {
			t.Errorf("%v: links %v, want %s", perms, types, want)
		}
	}

	c := e.caller(nil)
	gql := c.graphql(`{ office(taxId: "` + dbtest.BigHead + `", links: ["LOGO"]) { taxId } }`)
	rest := c.get(office + "?links=LOGO")
	errs, _ := gql.body["errors"].([]any)
	if len(errs) != 1 || rest.status != 400 {
		t.Fatalf("GraphQL %v, REST %d %v", gql.body, rest.status, rest.body)
	}
	ext := errs[0].(map[string]any)["extensions"].(map[string]any)
	if ext["code"] != "BAD_REQUEST" || fmt.Sprint(ext["constraints"]) != fmt.Sprint(rest.body["constraints"]) {
		t.Errorf("GraphQL %v, REST %v", ext, rest.body)
	}
}
