package graphqlapi

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// TestEncodeResponse: an answer of data alone is written around gqlgen's
// encoded data, and means what json.Marshal's answer means; any other
// answer is json.Marshal's, byte for byte.
func TestEncodeResponse(t *testing.T) {
	yes := true
	data := json.RawMessage(`{"office":{"taxId":"33683111000280","company":{"name":"A & B <C> \"D\"","members":[]}}}`)
	for _, c := range []struct {
		name string
		resp graphql.Response
		fast bool
	}{
		{"data alone", graphql.Response{Data: data}, true},
		{"null data", graphql.Response{Data: json.RawMessage(`null`)}, true},
		{"no data", graphql.Response{}, false},
		{"data with errors", graphql.Response{Data: data, Errors: gqlerror.List{{Message: "partial"}}}, false},
		{"data with extensions", graphql.Response{Data: data, Extensions: map[string]any{"cost": 3}}, false},
		{"incremental", graphql.Response{Data: data, HasNext: &yes, Label: "x"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := encodeResponse(&c.resp)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(&c.resp)
			if err != nil {
				t.Fatal(err)
			}
			if !c.fast {
				if string(got) != string(want) {
					t.Fatalf("got %s, want json.Marshal's %s", got, want)
				}
				return
			}
			if string(got) != `{"data":`+string(c.resp.Data)+`}` {
				t.Fatalf("got %s, want the data as gqlgen wrote it", got)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("not JSON: %s: %v", got, err)
			}
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("got %v, json.Marshal's means %v", g, w)
			}
		})
	}
}

// TestComplexityKey: an operation is remembered by its name and text only
// when no variable is a list or an Int, the arguments Complexity reads.
func TestComplexityKey(t *testing.T) {
	for _, c := range []struct {
		vars  string
		fixed bool
	}{
		{"", true},
		{"($t: String!)", true},
		{"($id: ID!, $cache: Boolean)", true},
		{"($n: Int)", false},
		{"($n: Int!)", false},
		{"($ids: [String!]!)", false},
		{"($t: String!, $n: Int)", false},
	} {
		doc, err := parser.ParseQuery(&ast.Source{Input: "query q" + c.vars + " { __typename }"})
		if err != nil {
			t.Fatal(err)
		}
		op := &graphql.OperationContext{RawQuery: "query text", OperationName: "q", Operation: doc.Operations[0]}
		key, fixed := complexityKey(op)
		if fixed != c.fixed || (fixed && key != "q\x00query text") {
			t.Errorf("%q: key %q, fixed %v", c.vars, key, fixed)
		}
	}
}
