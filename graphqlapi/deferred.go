package graphqlapi

import (
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// validationRules are gqlparser's rules and one more that takes @defer off
// a query once the other rules have checked it, before the query cache
// keeps it. The schema declares @defer (gqlgen's prelude adds it), but the
// transports answer with one response: a deferred fragment's fields were
// answered null beside "hasNext": true, and the rest was never sent. The
// incremental delivery proposal lets a server answer a deferred fragment
// in the initial response, and every client reads a complete one, so each
// fragment is answered with the rest.
func validationRules() *rules.Rules {
	r := rules.NewDefaultRules()
	r.AddRule("AnswerDeferredFragmentsAtOnce", func(observers *core.Events, _ core.AddErrFunc) {
		// The walker calls these after it has walked the fragment's
		// directives, so @defer's own arguments are still validated.
		observers.OnInlineFragment(func(_ *core.Walker, f *ast.InlineFragment) {
			f.Directives = withoutDefer(f.Directives)
		})
		observers.OnFragmentSpread(func(_ *core.Walker, f *ast.FragmentSpread) {
			f.Directives = withoutDefer(f.Directives)
		})
	})
	return r
}

// withoutDefer is directives without @defer (a new list when it had one).
func withoutDefer(directives ast.DirectiveList) ast.DirectiveList {
	if directives.ForName("defer") == nil {
		return directives
	}
	out := make(ast.DirectiveList, 0, len(directives)-1)
	for _, d := range directives {
		if d.Name != "defer" {
			out = append(out, d)
		}
	}
	return out
}
