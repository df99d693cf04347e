package graphqlapi

import (
	"context"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/graph"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// ErrDepthLimit is the extensions.code of a query nested too deep.
const ErrDepthLimit = "DEPTH_LIMIT_EXCEEDED"

// ErrComplexityLimit is the extensions.code gqlgen's complexity limit sets.
const ErrComplexityLimit = "COMPLEXITY_LIMIT_EXCEEDED"

func init() {
	// Rejected before execution, as parse errors and the complexity limit
	// are: HTTP 422 with the errors and no data.
	errcode.RegisterErrorType(ErrDepthLimit, errcode.KindProtocol)
	errcode.RegisterErrorType(fault.InvalidArgument.Code(), errcode.KindProtocol)
	errcode.RegisterErrorType(ErrComplexityLimit, errcode.KindProtocol)
}

// DepthLimit rejects operations whose fields nest deeper than Max, before
// anything runs. Introspection fields are not counted: the validator bounds
// their depth with its own rule, and GraphiQL's schema query must pass.
type DepthLimit struct {
	Max int
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = DepthLimit{}

// ExtensionName names the extension.
func (DepthLimit) ExtensionName() string { return "DepthLimit" }

// Validate accepts any schema.
func (DepthLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext measures the operation's depth.
func (d DepthLimit) MutateOperationContext(_ context.Context, op *graphql.OperationContext) *gqlerror.Error {
	depth := Depth(op.Doc, op.Operation)
	if depth <= d.Max {
		return nil
	}
	err := gqlerror.Errorf("query depth %d exceeds the limit of %d", depth, d.Max)
	errcode.Set(err, ErrDepthLimit)
	err.Extensions["limit"] = d.Max
	return err
}

// Depth is the number of nested field levels of op: `{ office { taxId } }`
// is 2. Fragments count where they are spread; each fragment's depth is
// computed once (the validator has already rejected fragment cycles).
func Depth(doc *ast.QueryDocument, op *ast.OperationDefinition) int {
	if op == nil {
		return 0
	}
	memo := map[string]int{}
	var depth func(ast.SelectionSet) int
	depth = func(set ast.SelectionSet) int {
		deepest := 0
		for _, s := range set {
			d := 0
			switch s := s.(type) {
			case *ast.Field:
				if strings.HasPrefix(s.Name, "__") {
					continue
				}
				d = 1 + depth(s.SelectionSet)
			case *ast.InlineFragment:
				d = depth(s.SelectionSet)
			case *ast.FragmentSpread:
				v, ok := memo[s.Name]
				if !ok {
					memo[s.Name] = 0 // a cycle, were one to slip through, ends here
					def := s.Definition
					if def == nil && doc != nil {
						def = doc.Fragments.ForName(s.Name)
					}
					if def != nil {
						v = depth(def.SelectionSet)
					}
					memo[s.Name] = v
				}
				d = v
			}
			deepest = max(deepest, d)
		}
		return deepest
	}
	return depth(op.SelectionSet)
}

// ListLimit rejects, before anything runs, an `offices` field asking for
// more tax ids than service.MaxOffices, with REST's kind of sentence: the
// complexity limit would price it at the cap and let it through.
type ListLimit struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = ListLimit{}

// ExtensionName names the extension.
func (ListLimit) ExtensionName() string { return "ListLimit" }

// Validate accepts any schema.
func (ListLimit) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext counts the tax ids of every root `offices` field,
// resolving fragments, aliases and variables as execution will.
func (ListLimit) MutateOperationContext(_ context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if !strings.Contains(op.RawQuery, "offices") {
		// A field is named in the text, under any alias: none to count,
		// and no fields to collect (2 % of the server's time on the
		// nested query, which has none).
		return nil
	}
	for _, f := range graphql.CollectFields(op, op.Operation.SelectionSet, []string{"Query"}) {
		if f.Name != "offices" {
			continue
		}
		if ids, _ := f.ArgumentMap(op.Variables)["taxIds"].([]any); len(ids) > service.MaxOffices {
			flt := fault.Invalid(service.OfficesRule)
			return &gqlerror.Error{Err: flt, Message: flt.Message, Extensions: Extensions(flt)}
		}
	}
	return nil
}

// Complexity prices fields for extension.FixedComplexityLimit. A field
// costs 1 plus its selection; a list costs its selection times the number
// of items it will hold: the tax ids asked for, the page size, or, where
// the data decides, a typical count (members of a company). Loader
// batching keeps SQL per level constant, so the limit is on the size of the
// answer, which grows with these products.
func Complexity() graph.ComplexityRoot {
	var c graph.ComplexityRoot
	c.Query.Offices = func(child int, taxIDs []string, _ *bool, _ []string, _ *graph.Strategy, _, _ *int, _, _, _ *bool, _ []string) int {
		// More than MaxOffices is rejected with its own sentence.
		return 1 + min(len(taxIDs), service.MaxOffices)*child
	}
	c.Company.Offices = page
	c.Person.Membership = page
	c.Company.Members = func(child int) int { return 1 + TypicalMembers*child }
	c.RegistryRecord.Members = func(child int) int { return 1 + TypicalMembers*child }
	return c
}

// page prices a connection: its selection times the page size asked for.
func page(child int, first *int, _ *string) int {
	n := service.DefaultPageSize
	if first != nil {
		n = min(max(*first, 1), service.MaxPageSize)
	}
	return 1 + n*child
}

// TypicalMembers is the list size the complexity assumes for a company's
// members, where the data decides (a few, rarely dozens). The lists that
// can run to thousands (a company's offices, a person's memberships) are
// paginated and priced by their page size.
const TypicalMembers = 5

// ComplexityLimit is gqlgen's FixedComplexityLimit with its verdict
// remembered for operations whose variables cannot change their
// complexity: the complexity functions (Complexity) read list and Int
// arguments alone (the tax ids, the page sizes), so an operation with no
// variable of either type has the same complexity on every request.
// Working it out again was 3 % of the server's time on the nested query.
// Only passes are remembered: an operation over the limit is priced and
// answered with its figure each time.
type ComplexityLimit struct {
	*extension.ComplexityLimit
	under *lru.LRU[struct{}] // by complexityKey
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = ComplexityLimit{}

// NewComplexityLimit rejects operations of complexity above limit,
// remembering up to size operations under it.
func NewComplexityLimit(limit, size int) ComplexityLimit {
	return ComplexityLimit{ComplexityLimit: extension.FixedComplexityLimit(limit), under: lru.New[struct{}](size)}
}

// MutateOperationContext prices the operation unless it passed before.
func (c ComplexityLimit) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	key, fixed := complexityKey(op)
	if fixed {
		if _, ok := c.under.Get(ctx, key); ok {
			return nil
		}
	}
	if err := c.ComplexityLimit.MutateOperationContext(ctx, op); err != nil {
		return err
	}
	if fixed {
		c.under.Add(ctx, key, struct{}{})
	}
	return nil
}

// complexityKey names an operation by its text and name, and says whether
// its complexity is fixed by them: none of its variables is a list or an
// Int.
func complexityKey(op *graphql.OperationContext) (string, bool) {
	if op.Operation == nil {
		return "", false
	}
	for _, v := range op.Operation.VariableDefinitions {
		if v.Type.Elem != nil || v.Type.NamedType == "Int" {
			return "", false
		}
	}
	return op.OperationName + "\x00" + op.RawQuery, true
}
