package graphqlapi_test

import (
	"strings"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// TestDeferredFragmentsAnsweredAtOnce: a fragment under @defer is answered
// in the one response, byte for byte as the same query without the
// directive, where it was null beside "hasNext": true and the rest never
// came. @defer's arguments are still validated.
func TestDeferredFragmentsAnsweredAtOnce(t *testing.T) {
	s := newServer(t, serverOptions{})
	vars := map[string]any{"id": dbtest.SerproBranch, "d": true}
	const fragment = `fragment M on Company { members { role { id } person { name membership { nodes { company { name } } } } } }`
	for _, c := range []struct{ name, deferred, plain string }{
		{"inline fragment",
			`query($id: String!) { office(taxId: $id) { taxId ... @defer { alias company { name } } } }`,
			`query($id: String!) { office(taxId: $id) { taxId ... { alias company { name } } } }`},
		{"fragment spread with a label, over a list",
			`query($id: String!) { office(taxId: $id) { company { name ...M @defer(label: "members") } } } ` + fragment,
			`query($id: String!) { office(taxId: $id) { company { name ...M } } } ` + fragment},
		{"if a variable",
			`query($id: String!, $d: Boolean!) { office(taxId: $id) { taxId ... @defer(if: $d) { company { name } } } }`,
			`query($id: String!, $d: Boolean!) { office(taxId: $id) { taxId ... @include(if: $d) { company { name } } } }`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := s.post(t, c.deferred, vars).ok(t)
			want := s.post(t, c.plain, vars).ok(t)
			if string(got.raw) != string(want.raw) {
				t.Errorf("with @defer:\n%s\nwithout:\n%s", got.raw, want.raw)
			}
			if strings.Contains(string(got.raw), "hasNext") || !strings.Contains(string(got.raw), `"name":"SERVICO FEDERAL`) {
				t.Errorf("not one complete answer: %s", got.raw)
			}
		})
	}
	bad := s.post(t, `query($id: String!) { office(taxId: $id) { taxId ... @defer(if: "yes") { alias } } }`, vars).only(t)
	if bad.Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" || !strings.Contains(bad.Message, "non boolean value") {
		t.Errorf("@defer(if: \"yes\"): %+v", bad)
	}
}
