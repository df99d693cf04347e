package graphqlapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/resolvers"
)

// The seam for credentials, credits and rate limits (issue 5): before an
// operation runs, RootLookups lists the lookups its root fields will
// perform, each priced as the same REST request, and Options.Meter is
// called with them. Batching many lookups into one query therefore costs
// what the same REST requests cost: `offices` with 50 tax ids is 50 office
// lookups. Edges below a root field (company, members, ...) are part of the
// lookup's answer, as in REST, and are bounded by the complexity limit.

// Lookup kinds: the REST route each root field prices as.
const (
	KindOffice   = "office"  // GET /office/:taxId
	KindCompany  = "company" // GET /company/:id
	KindPerson   = "person"  // GET /person/:id
	KindRegistry = "rfb"     // GET /rfb
	KindSimples  = "simples" // GET /simples
)

// Lookup is one root field of an operation, as lookups.
type Lookup struct {
	Field string // the response key: the alias, or the field's name
	Kind  string // KindOffice, ...
	Count int    // lookups performed: len(taxIds) for offices, else 1
	// Portals an office lookup consults beyond the registry, which REST
	// prices separately when fetched online.
	Simples       bool
	Registrations bool
	// Strategy as asked ("" for the default, CACHE_IF_ERROR): CACHE never
	// goes online and is never charged.
	Strategy string
}

// Lookups are an operation's root lookups.
type Lookups []Lookup

// Total is the number of lookups.
func (ls Lookups) Total() int {
	n := 0
	for _, l := range ls {
		n += l.Count
	}
	return n
}

// Meter decides whether an operation may run, given its root lookups: the
// place to check permissions, the per-minute rate and the credits. An
// error (a *fault.Error such as 429 rate limit exceeded, with Required and
// Remaining) rejects the operation before anything is looked up.
type Meter func(ctx context.Context, op *graphql.OperationContext, lookups Lookups) error

// RootLookups counts the lookups op's root fields will perform, resolving
// fragments, aliases, variables and @skip/@include as execution will.
// Introspection (__schema, __type, __typename) performs none. An `offices`
// list longer than resolvers.MaxOffices is an error: nothing runs.
func RootLookups(op *graphql.OperationContext) (Lookups, error) {
	var out Lookups
	for _, f := range graphql.CollectFields(op, op.Operation.SelectionSet, []string{"Query"}) {
		args := f.ArgumentMap(op.Variables)
		l := Lookup{Field: f.Alias, Count: 1}
		if l.Field == "" {
			l.Field = f.Name
		}
		switch f.Name {
		case "office", "offices":
			l.Kind = KindOffice
			l.Simples, _ = args["simples"].(bool)
			l.Registrations = listLen(args["registrations"]) > 0
			if f.Name == "offices" {
				l.Count = listLen(args["taxIds"])
				if l.Count > resolvers.MaxOffices {
					return nil, fault.Invalid(resolvers.OfficesRule)
				}
			}
		case "company":
			l.Kind = KindCompany
		case "person":
			l.Kind = KindPerson
		case "rfb":
			l.Kind = KindRegistry
		case "simples":
			l.Kind = KindSimples
		default:
			continue // introspection
		}
		if s, ok := args["strategy"]; ok && s != nil {
			l.Strategy = fmt.Sprint(s)
		}
		out = append(out, l)
	}
	return out, nil
}

// listLen is the length of a list argument; a single value given for a
// list is a list of one (GraphQL's input coercion).
func listLen(v any) int {
	switch v := v.(type) {
	case nil:
		return 0
	case []any:
		return len(v)
	case []string:
		return len(v)
	default:
		return 1
	}
}

// lookupMeter runs RootLookups and the Meter before execution.
type lookupMeter struct{ meter Meter }

func (lookupMeter) ExtensionName() string                   { return "LookupMeter" }
func (lookupMeter) Validate(graphql.ExecutableSchema) error { return nil }

func (m lookupMeter) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	lookups, err := RootLookups(op)
	metered := false
	if err == nil && m.meter != nil {
		err = m.meter(ctx, op, lookups)
		metered = err != nil
	}
	if err == nil {
		return nil
	}
	f := fault.Classify(err)
	if ms, ok := ctx.Value(meterKey{}).(*meterState); ok && metered {
		ms.refused, ms.cause = f, err
	}
	// The code goes on now: the transport picks the HTTP status from it;
	// the presenter writes the rest.
	return &gqlerror.Error{Err: f, Message: f.Message, Extensions: Extensions(f)}
}

// meterState remembers a refusal by the meter, so that the response carries
// the status the same REST request would get (401, 403, 429 with
// Retry-After) instead of GraphQL's 200: clients back off on those.
type meterState struct {
	refused *fault.Error
	cause   error
}

type meterKey struct{}

type meterWriter struct {
	http.ResponseWriter
	st *meterState
}

func (w *meterWriter) WriteHeader(status int) {
	if f := w.st.refused; f != nil {
		var rl *auth.RateLimitError
		if errors.As(w.st.cause, &rl) {
			w.Header().Set("Retry-After", rl.RetryAfterSeconds())
		}
		status = f.Status()
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *meterWriter) Write(b []byte) (int, error) { return w.ResponseWriter.Write(b) }

func meterStatus(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := &meterState{}
		ctx := context.WithValue(r.Context(), meterKey{}, st)
		next.ServeHTTP(&meterWriter{ResponseWriter: w, st: st}, r.WithContext(ctx))
	})
}
