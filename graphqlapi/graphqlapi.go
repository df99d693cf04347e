// Package graphqlapi is the GraphQL room: gqlgen's executable schema
// (graph/) over its resolvers (thin calls into the service layer), with its
// transports, limits, error presentation and the playground, mounted on the
// REST router so that both share request ids, access logs, metrics,
// timeouts and per-request loaders. Only this room imports generated code
// or gqlgen.
package graphqlapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/go-chi/chi/v5"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/graph"
	"github.com/cnpjgraph/cnpjgraph/graphqlapi/scalars"
	"github.com/cnpjgraph/cnpjgraph/loaders"
	"github.com/cnpjgraph/cnpjgraph/playground"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// Defaults of the protections; Options override them.
const (
	// DefaultMaxComplexity admits offices(50) six levels deep (office →
	// company → members → person → membership(first: 5) → company →
	// offices(first: 3), ~29,000 with the costs of Complexity) and rejects
	// the same for 100 tax ids (~58,000) or anything fanning out further.
	DefaultMaxComplexity = 30000
	// DefaultMaxDepth admits the deepest useful path (office → company →
	// members → person → membership → edges → node → company → offices →
	// edges → node → field is 12) with a little room.
	DefaultMaxDepth = 14
	// DefaultMaxTokens bounds the parser's work on one query: GraphiQL's
	// introspection query is about 300 tokens, offices(100) about 250.
	DefaultMaxTokens = 5000
	// DefaultCacheSize is the number of parsed queries and persisted
	// queries each LRU keeps.
	DefaultCacheSize = 1000
)

// Options configure the GraphQL handler.
type Options struct {
	Service *service.Service
	Logger  *slog.Logger // nil: discard
	// RequestID returns the request id of the router serving the request,
	// for the log lines of server errors (rest.RequestID).
	RequestID func(context.Context) string

	MaxComplexity int // 0: DefaultMaxComplexity
	MaxDepth      int // 0: DefaultMaxDepth
	MaxTokens     int // 0: DefaultMaxTokens
	CacheSize     int // 0: DefaultCacheSize

	// BatchWait is the batch window of each GraphQL request's loaders, so
	// that a level's loads share one statement (0: loaders.Wait).
	BatchWait time.Duration
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.RequestID == nil {
		o.RequestID = func(context.Context) string { return "" }
	}
	if o.MaxComplexity <= 0 {
		o.MaxComplexity = DefaultMaxComplexity
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	if o.CacheSize <= 0 {
		o.CacheSize = DefaultCacheSize
	}
	if o.BatchWait <= 0 {
		o.BatchWait = loaders.Wait
	}
	return o
}

// Schema returns the executable schema over svc, with the complexity
// costs of Complexity.
func Schema(svc *service.Service) graphql.ExecutableSchema {
	cfg := graph.Config{Resolvers: &Resolver{Service: svc}}
	cfg.Complexity = Complexity()
	return graph.NewExecutableSchema(cfg)
}

// New returns the GraphQL handler. Transports and extensions are wired one
// by one (not handler.NewDefaultServer) so that nothing is served that was
// not chosen: no websockets, no multipart uploads.
func New(o Options) http.Handler {
	o = o.withDefaults()
	srv := handler.New(Schema(o.Service))
	srv.AddTransport(transport{}) // gqlgen's GET and POST, with coded answers to a request it cannot take
	srv.SetQueryCache(lru.New[*ast.QueryDocument](o.CacheSize))
	srv.SetParserTokenLimit(o.MaxTokens)
	srv.SetValidationRulesFn(validationRules)
	srv.Use(extension.Introspection{})
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](o.CacheSize)})
	// The limits run before anything is looked up: a rejected query costs
	// nothing. Each lookup it performs is admitted and priced by the
	// service as it runs, as the same REST request would be.
	srv.Use(DepthLimit{Max: o.MaxDepth})
	srv.Use(ListLimit{})
	srv.Use(NewComplexityLimit(o.MaxComplexity, o.CacheSize))
	present := presenter(o)
	srv.SetErrorPresenter(present)
	// gqlgen answers a bare `null` when the request's context has ended
	// before the response is built (the router's timeout, a client gone);
	// answer the contract's 504 instead, as REST does.
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		h := next(ctx)
		return func(ctx context.Context) *graphql.Response {
			if err := ctx.Err(); err != nil {
				return &graphql.Response{Errors: gqlerror.List{present(ctx, fault.E(fault.DeadlineExceeded, fault.MsgTimeout, err))}}
			}
			return h(ctx)
		}
	})
	srv.AroundResponses(noteRefusal)
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		o.Logger.ErrorContext(ctx, "graphql panic", slog.String("request_id", o.RequestID(ctx)),
			slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
		return fault.E(fault.Internal, fault.MsgUnexpected, fmt.Errorf("panic: %v", p))
	})

	h := refusalStatus(srv)
	store := o.Service.Store()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := loaders.WithLazy(r.Context(), store, o.BatchWait)
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Mount returns what rest.Deps.Mount takes: GET and POST /graphql and, when
// configured, GET /playground, under the router's middleware.
func Mount(o Options) func(chi.Router) {
	return func(r chi.Router) {
		h := New(o)
		r.Get("/graphql", h.ServeHTTP)
		r.Post("/graphql", h.ServeHTTP)
	}
}

// MountPlayground adds GET /playground. It needs no credential (the page is
// public; the queries it sends carry one), so it is mounted outside auth.
// The Endpoint defaults to /graphql.
func MountPlayground(p playground.Options) func(chi.Router) {
	if p.Endpoint == "" {
		p.Endpoint = "/graphql"
	}
	// The page links its assets under /playground/assets/; the handler
	// expects paths relative to its root.
	ph := http.StripPrefix("/playground", playground.Handler(p))
	return func(r chi.Router) {
		r.Get("/playground", ph.ServeHTTP)
		r.Get("/playground/*", ph.ServeHTTP)
	}
}

// presenter turns every error into what the client may see. Errors of the
// protocol itself (parse, validation, limits) are already public and keep
// their codes; everything else goes through fault.Classify, exactly as a
// REST error body does: the fault's message, its code in extensions.code,
// never the internal text. Server-side failures are logged with their cause.
func presenter(o Options) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		var gqlErr *gqlerror.Error
		if errors.As(err, &gqlErr) && gqlErr.Err == nil {
			if gqlErr.Path == nil {
				gqlErr.Path = graphql.GetPath(ctx)
			}
			if names := unchosenOperations(ctx); names != nil {
				gqlErr.Message = "operationName is required: the query holds more than one operation (" +
					strings.Join(names, ", ") + ")"
			}
			return gqlErr
		}
		if in, ok := errors.AsType[*scalars.InputError](err); ok && gqlErr != nil {
			err = fault.Invalid(inputName(gqlErr.Path) + " " + in.Rule)
		}
		f := fault.Classify(err)
		out := &gqlerror.Error{Err: f, Message: f.Message, Extensions: Extensions(f)}
		if gqlErr != nil {
			out.Path, out.Locations = gqlErr.Path, gqlErr.Locations
		} else {
			out.Path = graphql.GetPath(ctx)
		}
		if f.Status() >= 500 {
			attrs := []slog.Attr{
				slog.String("request_id", o.RequestID(ctx)),
				slog.String("path", out.Path.String()),
				slog.String("error_kind", f.Kind.String()),
			}
			if f.Cause != nil {
				attrs = append(attrs, slog.String("error", f.Cause.Error()))
			}
			o.Logger.LogAttrs(ctx, slog.LevelError, "graphql error", attrs...)
		}
		return out
	}
}

// inputName names an input value by its path below the root field's
// argument, as REST names a search's parameters (["searchOffices",
// "filter", "founded", "gte"] is founded.gte).
func inputName(path ast.Path) string {
	if len(path) > 2 {
		path = path[2:]
	}
	return path.String()
}

// unchosenOperations are the operations' names of a query that holds more
// than one and came without operationName, whose error gqlgen words as
// "operation  not found"; nil for any other request.
func unchosenOperations(ctx context.Context) []string {
	if !graphql.HasOperationContext(ctx) {
		return nil
	}
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation != nil || oc.Doc == nil || len(oc.Doc.Operations) < 2 || oc.OperationName != "" {
		return nil
	}
	names := make([]string, len(oc.Doc.Operations))
	for i, op := range oc.Doc.Operations {
		names[i] = op.Name
	}
	return names
}

// Extensions are a fault's public fields as GraphQL error extensions: the
// code, the HTTP status the same REST request would get, and the
// contract's extra fields where set.
func Extensions(f *fault.Error) map[string]any {
	ext := map[string]any{"code": f.Code(), "status": f.Status()}
	if len(f.Constraints) > 0 {
		ext["constraints"] = f.Constraints
	}
	if f.Reason != "" {
		ext["reason"] = f.Reason
	}
	if f.Permission != "" {
		ext["permission"] = f.Permission
	}
	if f.Required != nil {
		ext["required"] = *f.Required
	}
	if f.Remaining != nil {
		ext["remaining"] = *f.Remaining
	}
	return ext
}
