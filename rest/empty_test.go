package rest_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// TestEmptyColumnsAreNull: a company, an office and a member whose every
// optional column is empty (NULL or ” as the dump writes it) answer null
// for those fields in every answer, never "".
func TestEmptyColumnsAreNull(t *testing.T) {
	t.Parallel()
	d := fixtureDB(t)
	const root = "55666777"
	taxID := string(cnpj.Build(root, "0001"))
	person := dbtest.Person{Type: "FOREIGN", Name: "EMPTY HOLDINGS LTD"}
	dbtest.MustExec(t, d, `INSERT INTO cnpj.companies VALUES ($1,'EMPRESA VAZIA LTDA','','','0','','')`, root)
	// Dates are NULL; text columns '' (the importer keeps the dump's empty
	// fields as it reads them).
	dbtest.MustExec(t, d, `INSERT INTO cnpj.offices VALUES ($1,$2,true,'','',NULL,'','','',NULL,'',
		'{}','','','','','','','','{}','','',NULL)`, taxID, root)
	dbtest.MustExec(t, d, `INSERT INTO cnpj.persons VALUES ($1,'FOREIGN',NULL,$2,NULL,'')`, person.ID(), person.Name)
	dbtest.MustExec(t, d, `INSERT INTO cnpj.members VALUES ($1,0,$2,'37',NULL,NULL,NULL)`, root, person.ID())
	dbtest.Fold(t, d)
	s := routerWith(t, d, legacyDeps(t))

	for _, target := range []string{
		"/office/" + taxID + "?simples=true",
		"/rfb?taxId=" + taxID,
		"/company/" + root,
		"/person/" + person.ID(),
		"/simples?taxId=" + taxID + "&history=true",
		"/companies/" + taxID,
	} {
		r := s.get(t, target)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", target, r.status, r.body)
		}
		var v any
		if err := json.Unmarshal(r.body, &v); err != nil {
			t.Fatal(err)
		}
		for _, p := range emptyStrings(v, "") {
			t.Errorf("%s: %s is \"\", want null", target, p)
		}
	}
	o := s.get(t, "/office/"+taxID).object(t)
	for _, field := range []string{"alias", "founded", "statusDate", "specialDate"} {
		if v, ok := o[field]; !ok || v != nil {
			t.Errorf("office %s = %v, want null", field, v)
		}
	}
	addr := path(t, o, "address").(map[string]any)
	for _, field := range []string{"street", "number", "details", "district", "city", "state", "zip", "municipality"} {
		if v, ok := addr[field]; !ok || v != nil {
			t.Errorf("address.%s = %v, want null", field, v)
		}
	}
	// A foreign legal person (qualification 37, no age band) has no age.
	if p := path(t, o, "company", "members", 0, "person").(map[string]any); has(p, "age") {
		t.Errorf("a foreign legal person carries age: %v", p)
	}
}

// emptyStrings lists the paths of the "" values in a decoded JSON value.
func emptyStrings(v any, at string) []string {
	switch v := v.(type) {
	case string:
		if v == "" {
			return []string{at}
		}
	case map[string]any:
		var out []string
		for k, x := range v {
			out = append(out, emptyStrings(x, at+"."+k)...)
		}
		return out
	case []any:
		var out []string
		for i, x := range v {
			out = append(out, emptyStrings(x, fmt.Sprintf("%s[%d]", at, i))...)
		}
		return out
	}
	return nil
}
