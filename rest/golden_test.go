package rest_test

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/jmoiron/sqlx"
)

// TestGolden pins every route's JSON on the SERPRO sample and on the
// synthetic cases. The explicit checks below repeat the contract's rules so
// a careless -update cannot hide a wrong value.
func TestGolden(t *testing.T) {
	s := newServer(t)
	andre := dbtest.SerproMembers[0].Person.ID()
	cases := []struct{ name, target string }{
		{"office_serpro", "/office/" + dbtest.SerproBranch},
		{"office_serpro_simples_registrations", "/office/" + dbtest.SerproBranch + "?simples=true&registrations=BR"},
		{"company_serpro", "/company/" + dbtest.SerproRoot},
		{"company_okbr", "/company/" + dbtest.OKBRRoot},
		{"person_andre", "/person/" + andre},
		{"rfb_serpro", "/rfb?taxId=" + dbtest.SerproBranch},
		{"simples_serpro", "/simples?taxId=" + dbtest.SerproBranch},
		{"simples_serpro_history", "/simples?taxId=" + dbtest.SerproBranch + "&history=true"},
		{"office_big_head", "/office/" + dbtest.BigHead + "?simples=1"},
		{"rfb_big_head", "/rfb?taxId=" + dbtest.BigHead},
		{"company_alpha", "/company/" + dbtest.AlphaRoot},
		{"office_alpha", "/office/" + dbtest.AlphaTaxID + "?embeds=SIMPLES"},
		{"simples_alpha_history", "/simples?taxId=" + dbtest.AlphaTaxID + "&history=true"},
		{"office_abroad", "/office/" + dbtest.AbroadTaxID},
		{"rfb_abroad", "/rfb?taxId=" + dbtest.AbroadTaxID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.get(t, c.target)
			if r.status != 200 {
				t.Fatalf("%s: status %d: %s", c.target, r.status, r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			golden(t, c.name, r.body)
		})
	}
}

// TestRealSample serves the real RFB sample (shared/data/rfb-sample),
// imported by the importer, and compares every SERPRO route with the same
// golden files the fixture produces, then checks the fields one by one.
func TestRealSample(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.ImportSample(t, d)
	s := serverOver(t, d, 5*time.Second)
	andre := dbtest.SerproMembers[0].Person.ID()
	for name, target := range map[string]string{
		"office_serpro":                       "/office/" + dbtest.SerproBranch,
		"office_serpro_simples_registrations": "/office/" + dbtest.SerproBranch + "?simples=true&registrations=BR",
		"company_serpro":                      "/company/" + dbtest.SerproRoot,
		"company_okbr":                        "/company/" + dbtest.OKBRRoot,
		"person_andre_sample":                 "/person/" + andre, // the fixture adds a membership the sample lacks
		"rfb_serpro":                          "/rfb?taxId=" + dbtest.SerproBranch,
		"simples_serpro":                      "/simples?taxId=" + dbtest.SerproBranch,
		"simples_serpro_history":              "/simples?taxId=" + dbtest.SerproBranch + "&history=true",
	} {
		t.Run(name, func(t *testing.T) {
			r := s.get(t, target)
			if r.status != 200 {
				t.Fatalf("%s: status %d: %s", target, r.status, r.body)
			}
			golden(t, name, r.body)
		})
	}
	t.Run("fields", func(t *testing.T) { checkSerproFields(t, s) })
}

func TestOfficeSerproFields(t *testing.T) { checkSerproFields(t, newServer(t)) }

func checkSerproFields(t *testing.T, s *server) {
	o := s.get(t, "/office/"+dbtest.SerproBranch).object(t)
	want := map[string]any{
		"updated":    "2025-12-07T00:00:00.000Z",
		"taxId":      "33683111000280",
		"alias":      "REGIONAL BRASILIA-DF",
		"founded":    "1967-06-30",
		"head":       false,
		"statusDate": "2004-05-22",
	}
	for k, v := range want {
		if got := path(t, o, k); got != v {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	for _, k := range []string{"reason", "registrations", "special"} {
		if has(o, k) {
			t.Errorf("%s must be absent", k)
		}
	}
	if !has(o, "specialDate") || path(t, o, "specialDate") != nil {
		t.Errorf("specialDate must be null")
	}
	company := path(t, o, "company")
	if id := path(t, company, "id"); id != json.Number("33683111") {
		t.Errorf("company.id = %#v, want the number 33683111", id)
	}
	if eq := path(t, company, "equity"); eq != json.Number("1061004829.23") {
		t.Errorf("equity = %#v, want the exact number 1061004829.23", eq)
	}
	for _, k := range []string{"simples", "simei", "offices", "updated"} {
		if has(company, k) {
			t.Errorf("company.%s must be absent without simples=true", k)
		}
	}
	checkCode(t, path(t, o, "status"), 2, "Ativa")
	checkCode(t, path(t, company, "nature"), 2011, "Empresa Pública")
	checkCode(t, path(t, o, "mainActivity"), 6204000, "Consultoria em tecnologia da informação")
	if n := len(path(t, o, "sideActivities").([]any)); n != 5 {
		t.Errorf("sideActivities: %d, want 5", n)
	}
	size := path(t, company, "size")
	if path(t, size, "id") != json.Number("5") || path(t, size, "acronym") != "DEMAIS" || path(t, size, "text") != "Demais" {
		t.Errorf("size = %v", size)
	}
	addr := path(t, o, "address")
	for k, v := range map[string]any{"municipality": json.Number("5300108"), "street": "AVENIDA L2 SGAN", "number": "601",
		"details": "MODULO G", "district": "ASA NORTE", "state": "DF", "zip": "70836900"} {
		if got := path(t, addr, k); got != v {
			t.Errorf("address.%s = %#v, want %#v", k, got, v)
		}
	}
	if path(t, addr, "country", "id") != json.Number("76") || path(t, addr, "country", "name") != "Brasil" {
		t.Errorf("address.country = %v", path(t, addr, "country"))
	}
	if len(path(t, o, "phones").([]any)) != 0 || len(path(t, o, "emails").([]any)) != 0 {
		t.Errorf("phones and emails must be empty arrays")
	}
	members := path(t, company, "members").([]any)
	if len(members) != 6 {
		t.Fatalf("members: %d, want 6", len(members))
	}
	for i, m := range dbtest.SerproMembers {
		p := path(t, members[i], "person")
		if path(t, p, "name") != m.Person.Name || path(t, p, "taxId") != m.Person.TaxID ||
			path(t, p, "type") != "NATURAL" || path(t, p, "id") != m.Person.ID() || path(t, members[i], "since") != m.Since {
			t.Errorf("member %d = %v", i, members[i])
		}
	}
	if path(t, members[0], "person", "age") != "51-60" {
		t.Errorf("age band of faixa 6: %v", path(t, members[0], "person", "age"))
	}
	checkCode(t, path(t, members[3], "role"), 16, "Presidente")

	o = s.get(t, "/office/"+dbtest.SerproBranch+"?simples=true").object(t)
	if path(t, o, "company", "simples", "optant") != true || path(t, o, "company", "simples", "since") != "2014-01-01" {
		t.Errorf("simples = %v", path(t, o, "company", "simples"))
	}
	if path(t, o, "company", "simei", "optant") != false || path(t, o, "company", "simei", "since") != nil {
		t.Errorf("simei = %v", path(t, o, "company", "simei"))
	}
	if has(path(t, o, "company", "simples"), "history") {
		t.Errorf("history belongs to the Simples lookup with history=true only")
	}
}

func checkCode(t *testing.T, v any, id int, text string) {
	t.Helper()
	if path(t, v, "id") != json.Number(itoa(id)) || path(t, v, "text") != text {
		t.Errorf("code = %v, want {%d %q}", v, id, text)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestSyntheticCases(t *testing.T) {
	s := newServer(t)

	t.Run("branches", func(t *testing.T) {
		c := s.get(t, "/company/"+dbtest.BigRoot).object(t)
		offices := path(t, c, "offices").([]any)
		if len(offices) != dbtest.BigOffices {
			t.Fatalf("offices: %d, want %d", len(offices), dbtest.BigOffices)
		}
		heads := 0
		for _, o := range offices {
			if path(t, o, "head") == true {
				heads++
			}
			status := path(t, o, "status", "id")
			if status == json.Number("2") && has(o, "reason") {
				t.Errorf("%v: reason with status 2", path(t, o, "taxId"))
			}
			if status != json.Number("2") && !has(o, "reason") {
				t.Errorf("%v: no reason with status %v", path(t, o, "taxId"), status)
			}
			for _, k := range []string{"company", "address", "members", "phones"} {
				if has(o, k) {
					t.Errorf("office list item carries %s", k)
				}
			}
		}
		if heads != 1 {
			t.Errorf("%d head offices", heads)
		}
		// motivo 32 is missing from the code table: the code stays, text null.
		inapta := offices[6]
		if path(t, inapta, "reason", "id") != json.Number("32") || path(t, inapta, "reason", "text") != nil {
			t.Errorf("unknown reason = %v", path(t, inapta, "reason"))
		}
		if path(t, c, "equity") != json.Number("250000.5") {
			t.Errorf("equity = %v", path(t, c, "equity"))
		}
		if path(t, c, "simples", "optant") != false {
			t.Errorf("a company without a Simples row is not optant")
		}
	})

	t.Run("members and agents", func(t *testing.T) {
		c := s.get(t, "/company/"+dbtest.BigRoot).object(t)
		members := path(t, c, "members").([]any)
		if len(members) != dbtest.BigMembers {
			t.Fatalf("members: %d, want %d", len(members), dbtest.BigMembers)
		}
		holding := path(t, members[0], "person")
		if path(t, holding, "type") != "LEGAL" || has(holding, "age") || path(t, holding, "taxId") != "33683111000280" {
			t.Errorf("legal person = %v", holding)
		}
		agent := path(t, members[0], "agent")
		if path(t, agent, "person", "name") != dbtest.HoldingAgent.Name || path(t, agent, "person", "age") != nil {
			t.Errorf("agent = %v", agent)
		}
		checkCode(t, path(t, agent, "role"), 5, "Administrador")
		if has(members[1], "agent") {
			t.Errorf("agent present without a representative")
		}
	})

	t.Run("foreign persons", func(t *testing.T) {
		c := s.get(t, "/company/"+dbtest.BigRoot).object(t)
		members := path(t, c, "members").([]any)
		john := path(t, members[1], "person")
		if path(t, john, "type") != "FOREIGN" || path(t, john, "country", "id") != json.Number("840") ||
			path(t, john, "country", "name") != "ESTADOS UNIDOS" || path(t, john, "taxId") != nil {
			t.Errorf("foreign person = %v", john)
		}
		acme := path(t, members[2], "person")
		if path(t, acme, "country", "id") != nil || path(t, acme, "country", "name") != "PAIS DESCONHECIDO" {
			t.Errorf("unmapped country = %v", path(t, acme, "country"))
		}
		natural := path(t, members[3], "person")
		if has(natural, "country") {
			t.Errorf("a natural person carries no country")
		}
	})

	t.Run("alphanumeric", func(t *testing.T) {
		o := s.get(t, "/office/"+dbtest.AlphaTaxID+"?simples=true").object(t)
		if path(t, o, "taxId") != dbtest.AlphaTaxID || path(t, o, "company", "id") != dbtest.AlphaRoot {
			t.Errorf("alphanumeric ids: %v %v", path(t, o, "taxId"), path(t, o, "company", "id"))
		}
		if path(t, o, "alias") != nil || path(t, o, "address", "details") != nil {
			t.Errorf("empty alias and details must be null")
		}
		if path(t, o, "company", "size", "acronym") != "ME" {
			t.Errorf("size = %v", path(t, o, "company", "size"))
		}
		if path(t, o, "phones", 0, "area") != "61" || path(t, o, "emails", 0, "domain") != "example.com" {
			t.Errorf("phones/emails = %v %v", path(t, o, "phones"), path(t, o, "emails"))
		}
		c := s.get(t, "/company/"+dbtest.AlphaRoot).object(t)
		if path(t, c, "id") != dbtest.AlphaRoot {
			t.Errorf("company id = %#v", path(t, c, "id"))
		}
		if r := s.get(t, "/office/12abc34501de35"); r.status != 400 {
			t.Errorf("lowercase alphanumeric CNPJ: %d", r.status)
		}
	})

	t.Run("simples history", func(t *testing.T) {
		r := s.get(t, "/simples?taxId="+dbtest.AlphaTaxID+"&history=true").object(t)
		simples := path(t, r, "simples")
		if path(t, simples, "optant") != false || path(t, simples, "since") != nil {
			t.Errorf("simples = %v", simples)
		}
		h := path(t, simples, "history").([]any)
		if len(h) != 2 || path(t, h[0], "from") != "2018-03-01" || path(t, h[0], "until") != "2020-12-31" ||
			path(t, h[1], "from") != "2010-01-01" || path(t, h[0], "text") == nil {
			t.Errorf("simples history = %v", h)
		}
		simei := path(t, r, "simei")
		if path(t, simei, "optant") != true || path(t, simei, "since") != "2021-01-01" || len(path(t, simei, "history").([]any)) != 1 {
			t.Errorf("simei = %v", simei)
		}
		r = s.get(t, "/simples?taxId="+dbtest.SerproBranch+"&history=true").object(t)
		if h := path(t, r, "simples", "history").([]any); len(h) != 0 {
			t.Errorf("SERPRO history = %v, want []", h)
		}
		r = s.get(t, "/simples?taxId="+dbtest.AlphaTaxID).object(t)
		if has(path(t, r, "simples"), "history") {
			t.Errorf("history without history=true")
		}
	})

	t.Run("registry record", func(t *testing.T) {
		r := s.get(t, "/rfb?taxId="+dbtest.BigHead).object(t)
		if path(t, r, "name") != "GRANDE REDE DE LOJAS S.A." || path(t, r, "specialDate") != "2023-05-10" ||
			path(t, r, "special", "text") != dbtest.FixtureSpecial {
			t.Errorf("registry = %v", r)
		}
		if _, ok := path(t, r, "special", "id").(json.Number); !ok {
			t.Errorf("special.id must be a number")
		}
		members := path(t, r, "members").([]any)
		for _, k := range []string{"id", "type", "country"} {
			if has(path(t, members[1], "person"), k) {
				t.Errorf("registry member person carries %s", k)
			}
		}
		if has(path(t, members[0], "person"), "age") {
			t.Errorf("legal person carries age")
		}
		if len(path(t, r, "phones").([]any)) != 1 {
			t.Errorf("placeholder phone kept: %v", path(t, r, "phones"))
		}
		serpro := s.get(t, "/rfb?taxId="+dbtest.SerproBranch).object(t)
		if path(t, serpro, "specialDate") != nil || has(serpro, "special") || path(t, serpro, "jurisdiction") != nil {
			t.Errorf("special must be absent when specialDate is null")
		}
		abroad := s.get(t, "/rfb?taxId="+dbtest.AbroadTaxID).object(t)
		if path(t, abroad, "size") != nil || path(t, abroad, "jurisdiction") != "UNIAO" || path(t, abroad, "equity") != json.Number("0") {
			t.Errorf("abroad registry = %v", abroad)
		}
	})

	t.Run("address abroad", func(t *testing.T) {
		o := s.get(t, "/office/"+dbtest.AbroadTaxID).object(t)
		a := path(t, o, "address")
		if path(t, a, "state") != "EX" || path(t, a, "city") != "MIAMI" || path(t, a, "municipality") != nil ||
			path(t, a, "country", "id") != json.Number("840") {
			t.Errorf("address abroad = %v", a)
		}
		if path(t, o, "company", "size") != nil {
			t.Errorf("porte 00 must give size null")
		}
	})

	t.Run("person membership", func(t *testing.T) {
		p := s.get(t, "/person/"+dbtest.SerproMembers[0].Person.ID()).object(t)
		ms := path(t, p, "membership").([]any)
		if len(ms) != 2 {
			t.Fatalf("membership = %v", ms)
		}
		roots := map[any]bool{}
		for _, m := range ms {
			roots[path(t, m, "company", "id")] = true
			for _, k := range []string{"members", "offices", "simples"} {
				if has(path(t, m, "company"), k) {
					t.Errorf("membership company carries %s", k)
				}
			}
		}
		if !roots[json.Number("33683111")] || !roots[json.Number("11222333")] {
			t.Errorf("membership companies = %v", roots)
		}
		if path(t, p, "age") != "51-60" || path(t, p, "type") != "NATURAL" {
			t.Errorf("person = %v", p)
		}
		legal := s.get(t, "/person/"+dbtest.HoldingPerson.ID()).object(t)
		if has(legal, "age") {
			t.Errorf("legal person carries age")
		}
		upper := s.get(t, "/person/"+url.PathEscape(upperHex(dbtest.OKBRMember.ID())))
		if upper.status != 200 {
			t.Errorf("uppercase person id: %d", upper.status)
		}
	})

	t.Run("company id padding", func(t *testing.T) {
		for _, id := range []string{"33683111", "033683111"[1:], "19131243"} {
			if r := s.get(t, "/company/"+id); r.status != 200 {
				t.Errorf("/company/%s: %d", id, r.status)
			}
		}
		if r := s.get(t, "/company/1"); r.status != 404 {
			t.Errorf("/company/1 (00000001): %d %s", r.status, r.body)
		}
	})
}

func upperHex(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'f' {
			b[i] = c - 32
		}
	}
	return string(b)
}

// TestCompanyAnswerFollowsTheSnapshot: company answers are kept rendered per
// snapshot; a new snapshot must never be answered from the old one's.
func TestCompanyAnswerFollowsTheSnapshot(t *testing.T) {
	d, store, s := fixtureServer(t)
	name := func() any { return path(t, s.get(t, "/company/"+dbtest.SerproRoot).object(t), "name") }
	if got := name(); got != "SERVICO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)" {
		t.Fatalf("name = %v", got)
	}
	// A new import: new data under a new live snapshot.
	dbtest.MustExec(t, d, `UPDATE cnpj.companies SET name = 'SERPRO RENOMEADO' WHERE root = $1`, dbtest.SerproRoot)
	dbtest.NewLiveSnapshot(t, d, store)
	if got := name(); got != "SERPRO RENOMEADO" {
		t.Fatalf("after a new snapshot the company answer is %v", got)
	}
}

// TestOfficeLookupWithoutItsTable: a snapshot imported before
// office_lookups existed (an upgrade over an earlier import) answers every
// office lookup as one with the table does, by the join.
func TestOfficeLookupWithoutItsTable(t *testing.T) {
	d, store, s := fixtureServer(t)
	var taxIDs []string
	if err := d.Select(&taxIDs, `SELECT tax_id FROM cnpj.offices ORDER BY tax_id`); err != nil || len(taxIDs) == 0 {
		t.Fatalf("offices %v: %v", taxIDs, err)
	}
	answers := func() map[string]string {
		out := map[string]string{}
		for _, id := range taxIDs {
			for _, q := range []string{"", "?simples=true&simplesHistory=true"} {
				r := s.get(t, "/office/"+id+q)
				if r.status != 200 {
					t.Fatalf("/office/%s%s: %d %s", id, q, r.status, r.body)
				}
				out[id+q] = string(r.body)
			}
		}
		return out
	}
	with := answers()
	dbtest.MustExec(t, d, `DROP TABLE cnpj.office_lookups`)
	dbtest.NewLiveSnapshot(t, d, store)
	without := answers()
	for k, a := range with {
		if without[k] != a {
			t.Errorf("/office/%s\nwith office_lookups: %s\nwithout:            %s", k, a, without[k])
		}
	}
}

// fixtureServer serves the fixture through a store the test can reach.
func fixtureServer(t *testing.T) (*sqlx.DB, *db.Store, *server) {
	t.Helper()
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	store := db.NewStore(d, db.StoreOptions{})
	svc := service.New(store, service.Options{Now: func() time.Time { return now }})
	return d, store, &server{h: rest.NewRouter(rest.Deps{Service: svc}), db: d}
}
