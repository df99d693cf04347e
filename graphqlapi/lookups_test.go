package graphqlapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// TestOffice: the office lookup with its company, members and the
// fixture's values, through the gqlgen test client on the full router.
func TestOffice(t *testing.T) {
	s := newServer(t, serverOptions{})
	var resp struct {
		Office struct {
			TaxID   string
			Alias   *string
			Head    bool
			Founded string
			Updated string
			Status  struct {
				ID   int
				Text string
			}
			Reason  *struct{ ID int }
			Company struct {
				ID      string
				Name    string
				Simples *struct{ Optant bool }
				Members []struct {
					Since  string
					Role   struct{ ID int }
					Person struct{ Name, Type string }
				}
			}
		}
	}
	s.client.MustPost(`query($id: String!) { office(taxId: $id) {
		taxId alias head founded updated status { id text } reason { id }
		company { id name simples { optant } members { since role { id } person { name type } } }
	} }`, &resp, clientVar("id", dbtest.SerproBranch))
	o := resp.Office
	if o.TaxID != dbtest.SerproBranch || *o.Alias != "REGIONAL BRASILIA-DF" || o.Head || o.Founded != "1967-06-30" {
		t.Errorf("office: %+v", o)
	}
	if o.Updated != "2025-12-07T00:00:00.000Z" || o.Status.ID != 2 || o.Status.Text != "Ativa" || o.Reason != nil {
		t.Errorf("updated/status/reason: %+v", o)
	}
	c := o.Company
	if c.ID != dbtest.SerproRoot || c.Name != "SERVICO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)" || c.Simples != nil {
		t.Errorf("company: %+v", c)
	}
	if len(c.Members) != len(dbtest.SerproMembers) {
		t.Fatalf("%d members", len(c.Members))
	}
	for i, m := range dbtest.SerproMembers {
		got := c.Members[i]
		if got.Person.Name != m.Person.Name || got.Since != m.Since || fmt.Sprintf("%02d", got.Role.ID) != m.Role {
			t.Errorf("member %d: %+v, want %+v", i, got, m)
		}
	}
}

// TestDecimalExact: equity is the exact numeric text as a JSON number.
func TestDecimalExact(t *testing.T) {
	s := newServer(t, serverOptions{})
	r := s.post(t, `{ office(taxId: "`+dbtest.SerproBranch+`") { company { equity } } big: company(id: "`+dbtest.BigRoot+`") { equity } }`, nil).ok(t)
	if got := at(t, r.Data, "office", "company", "equity"); got != json.Number("1061004829.23") {
		t.Errorf("equity %#v", got)
	}
	if got := at(t, r.Data, "big", "equity"); got != json.Number("250000.5") {
		t.Errorf("equity %#v", got)
	}
	if !containsBytes(r.raw, `"equity":1061004829.23`) {
		t.Errorf("equity not written as a bare number: %s", r.raw)
	}
}

// TestLookups: every root field answers on the fixture.
func TestLookups(t *testing.T) {
	s := newServer(t, serverOptions{})
	andre := dbtest.SerproMembers[0].Person.ID()
	r := s.post(t, `query($andre: ID!) {
		company(id: "`+dbtest.AlphaRoot+`") { id name simples { optant since } simei { optant since } nature { id text } size { acronym } }
		padded: company(id: "0") { id }
		person(id: $andre) { id name type taxId age membership { totalCount nodes { role { id text } company { id name } } } }
		rfb(taxId: "`+dbtest.BigHead+`") { taxId name equity special { text } specialDate registrations { state } members { person { name } agent { person { name } role { id } } } }
		simples(taxId: "`+dbtest.AlphaTaxID+`", history: true) { taxId simples { optant history { from until text } } simei { optant since history { from until text } } }
		abroad: office(taxId: "`+dbtest.AbroadTaxID+`") { address { municipality city state country { id name } } company { size { id } } }
	}`, map[string]any{"andre": andre})
	// company "0" (00000000) is not registered: null with its own error.
	e := r.only(t)
	if e.Extensions["code"] != "NOT_FOUND" || e.Message != "company not registered at revenue service" || at(t, e.Path, 0) != "padded" {
		t.Errorf("padded company: %+v", e)
	}
	if at(t, r.Data, "company", "id") != dbtest.AlphaRoot || at(t, r.Data, "company", "simei", "since") != "2021-01-01" {
		t.Errorf("company: %v", r.Data["company"])
	}
	if at(t, r.Data, "person", "age") != "51-60" || len(at(t, r.Data, "person", "membership", "nodes").([]any)) != 2 ||
		at(t, r.Data, "person", "membership", "totalCount") != json.Number("2") {
		t.Errorf("person: %v", r.Data["person"])
	}
	if at(t, r.Data, "rfb", "special", "text") != dbtest.FixtureSpecial || len(at(t, r.Data, "rfb", "registrations").([]any)) != 0 {
		t.Errorf("rfb: %v", r.Data["rfb"])
	}
	if at(t, r.Data, "rfb", "members", 0, "agent", "person", "name") != dbtest.HoldingAgent.Name {
		t.Errorf("rfb agent: %v", at(t, r.Data, "rfb", "members", 0))
	}
	if h := at(t, r.Data, "simples", "simei", "history").([]any); len(h) == 0 {
		t.Errorf("simei history: %v", r.Data["simples"])
	}
	if at(t, r.Data, "abroad", "address", "country", "id") != json.Number("840") || at(t, r.Data, "abroad", "address", "municipality") != nil ||
		at(t, r.Data, "abroad", "company", "size") != nil {
		t.Errorf("abroad: %v", r.Data["abroad"])
	}
}

// TestOfficesPartial: offices answers in the order asked; an unregistered
// tax id is a null item with a NOT_FOUND error at its index.
func TestOfficesPartial(t *testing.T) {
	s := newServer(t, serverOptions{})
	missing := string(cnpj.Build("99999999", "0001"))
	r := s.post(t, `{ offices(taxIds: `+list([]string{dbtest.SerproBranch, missing, dbtest.AlphaTaxID})+`) { taxId } }`, nil)
	e := r.only(t)
	if e.Message != "tax id not registered at revenue service" || e.Extensions["code"] != "NOT_FOUND" ||
		e.Extensions["status"] != json.Number("404") || fmt.Sprint(e.Path) != "[offices 1]" {
		t.Errorf("error: %+v", e)
	}
	items := at(t, r.Data, "offices").([]any)
	if len(items) != 3 || at(t, items, 0, "taxId") != dbtest.SerproBranch || items[1] != nil || at(t, items, 2, "taxId") != dbtest.AlphaTaxID {
		t.Errorf("items: %v", items)
	}
	if r.status != http.StatusOK {
		t.Errorf("status %d", r.status)
	}
}

func containsBytes(b []byte, s string) bool { return strings.Contains(string(b), s) }
