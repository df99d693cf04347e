// Package rest serves the documented REST routes: it parses and validates
// requests into typed queries, calls the service layer, and presents the
// answers and errors in the contract's JSON shapes.
package rest

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/imagery"
	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/cnpjgraph/cnpjgraph/wire"
)

// Deps is what the router needs.
type Deps struct {
	Service *service.Service
	Logger  *slog.Logger // nil: discard
	Metrics *Metrics     // nil: a fresh registry without pool statistics
	// RequestTimeout bounds every request (0: none).
	RequestTimeout time.Duration
	// MaxBodyBytes bounds the body of every request (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MetricsElsewhere leaves /metrics off this router: it is served on a
	// listener of its own (METRICS_ADDR, Metrics.Handler).
	MetricsElsewhere bool
	// Degraded lists what the instance does in a degraded way right now
	// (auth.Service.Degraded): /readyz then says "degraded", still 200.
	// nil: never.
	Degraded func() []string
	// CORSOrigins are the browser origins allowed to call the API; "*" for any.
	CORSOrigins []string
	// TrustedProxies are the proxies in front (TRUSTED_PROXIES): a request
	// from one of them is logged as from the client its X-Forwarded-For
	// names. nil: the peer is the client.
	TrustedProxies []netip.Prefix
	// Authenticate resolves the credential of every request to the account
	// asking (auth.Service.Middleware), whose lookups the service then
	// admits and prices; nil serves them openly.
	Authenticate func(http.Handler) http.Handler
	// Mount adds routes served under the same middleware as the lookups
	// (GraphQL); called with the router after the REST routes.
	Mount func(r chi.Router)
	// MountPublic adds routes that need no credential (the playground page).
	MountPublic func(r chi.Router)

	// Seats gives the legacy format accented city names; nil: the
	// registry's own.
	Seats *imagery.Municipalities
	// PublicURL is the base of links in answers ("https://api.example.com");
	// empty: the scheme and Host of the request. The service signs them
	// (service.Options.SignLink).
	PublicURL string
}

// RenderError writes err as the contract's JSON error body; it is the one
// renderer, handed to middlewares (auth) that answer on their own.
func RenderError(w http.ResponseWriter, r *http.Request, err error) { writeError(w, r, err) }

// Routes lists the documented lookups this router serves, as method and
// chi pattern; the route test checks each of them answers.
var Routes = []string{
	"GET /office/{taxId}",
	"GET /company/{id}",
	"GET /person/{id}",
	"GET /rfb",
	"GET /simples",
	"GET /rfb/certificate",
	"GET /simples/certificate",
	"GET /office/{taxId}/map",
	"GET /office/{taxId}/street",
	"GET /companies/{taxId}",
	"GET /file/{token}",
	"GET /me/requests",
	"GET /credit",
	"GET /zip/{code}",
	"GET /ccc",
	"GET /ccc/certificate",
	"GET /suframa",
	"GET /suframa/certificate",
	"GET /office",
	"GET /person",
	"POST /list",
	"GET /list",
	"GET /list/{listId}",
	"PATCH /list/{listId}",
	"DELETE /list/{listId}",
	"POST /list/{listId}/export",
	"GET /list/{listId}/export",
	"GET /list/{listId}/export/{exportId}",
	"POST /list/{listId}/export/{exportId}",
	"GET /list/{listId}/export/{exportId}/{file}",
}

// NewRouter returns the HTTP handler of the service.
func NewRouter(d Deps) http.Handler {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := d.Metrics
	if m == nil {
		m = NewMetrics(nil)
	}
	h := lookups{svc: d.Service}
	docs := documentRoutes{svc: d.Service}
	legacy := legacyRoutes{svc: d.Service, seats: d.Seats}
	surface := surfaceRoutes{svc: d.Service}
	search := searches{svc: d.Service}

	r := chi.NewRouter()
	maxBody := d.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = DefaultMaxBodyBytes
	}
	// HEAD of every GET route is that GET without its body (net/http drops
	// it), decided once here rather than route by route.
	// Compression sits inside observe, whose access line and metrics then
	// count the bytes sent.
	r.Use(observe(log, m, d.TrustedProxies), recoverer(log), cors(d.CORSOrigins), compress(), middleware.GetHead)
	r.NotFound(notFound)
	r.MethodNotAllowed(notFound)

	// Operations: no credential, no loaders, no request timeout beyond
	// their own.
	r.Get("/healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get("/readyz", ready(d.Service, d.Degraded))
	if !d.MetricsElsewhere {
		r.Method(http.MethodGet, "/metrics", m.Handler())
	}
	if d.MountPublic != nil {
		d.MountPublic(r)
	}
	// Deprecated: always 404, with no credential or data needed.
	r.Get("/file/{token}", gone)
	r.Get("/me/requests", gone)

	r.Group(func(r chi.Router) {
		r.Use(timeout(d.RequestTimeout))
		if d.Authenticate != nil {
			r.Use(d.Authenticate)
		}
		// After the credential: a stranger's body is never read.
		r.Group(func(r chi.Router) {
			// A list's items run to a million tax ids.
			r.Use(limitBody(max(maxBody, ListMaxBodyBytes)), withBaseURL(d.PublicURL))
			mountLists(r, d.Service)
		})
		r.Group(func(r chi.Router) {
			r.Use(limitBody(maxBody), withLoaders(d.Service.Store()), withBaseURL(d.PublicURL))
			// Searches take turns of their own (service.SearchSettings).
			r.Get("/office", search.offices)
			r.Get("/person", search.persons)
			r.Group(func(r chi.Router) {
				r.Use(takeTurns(d.Service, false))
				r.Get("/office/{taxId}", h.office)
				r.Get("/company/{id}", h.company)
				r.Get("/person/{id}", h.person)
				r.Get("/rfb", h.registry)
				r.Get("/simples", h.simples)
				r.Get("/rfb/certificate", docs.registryCertificate)
				r.Get("/simples/certificate", docs.simplesCertificate)
				r.Get("/office/{taxId}/map", docs.officeMap)
				r.Get("/office/{taxId}/street", docs.officeStreet)
				r.Get("/companies/{taxId}", legacy.companies)
				r.Get("/credit", surface.credit)
				r.Get("/zip/{code}", surface.zip)
				r.Get("/ccc", surface.ccc)
				r.Get("/ccc/certificate", surface.cccCertificate)
				r.Get("/suframa", surface.suframa)
				r.Get("/suframa/certificate", surface.suframaCertificate)
			})
			if d.Mount != nil {
				r.Group(func(r chi.Router) {
					r.Use(takeTurns(d.Service, true))
					d.Mount(r)
				})
			}
		})
	})
	return r
}

// takeTurns runs each request in its turn among the lookups
// (service.LookupTurn): one place for the whole request, a GraphQL query's
// fields included, so its loaders still batch them. A request whose
// deadline passes while it waits is a 504, or, with goOn (GraphQL, which
// renders its own errors), goes on without a place: its fields then fail
// with GraphQL's 504, before any statement, their deadline being past.
func takeTurns(svc *service.Service, goOn bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, end, err := svc.LookupTurn(r.Context())
			switch {
			case err == nil:
				defer end()
				r = r.WithContext(ctx)
			case !goOn:
				writeError(w, r, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// notFound answers unknown routes and methods as the contract's clients
// expect: a JSON 404 naming the method and path as sent.
func notFound(w http.ResponseWriter, r *http.Request) {
	if st := stateFrom(r.Context()); st != nil {
		st.unmatched = true
	}
	writeJSON(w, http.StatusNotFound, wire.Error{
		Code:    http.StatusNotFound,
		Message: "Cannot " + r.Method + " " + r.URL.EscapedPath(),
	})
}

type readyJSON struct {
	Status   string       `json:"status"`
	Degraded []string     `json:"degraded,omitempty"`
	Snapshot snapshotJSON `json:"snapshot"`
}

type snapshotJSON struct {
	ID    int64  `json:"id"`
	Month string `json:"month"`
	Date  string `json:"date"`
}

// ready answers 200 with the live snapshot when the database answers and
// holds one, 503 otherwise. An instance that serves in a degraded way
// (rate limits per instance) is ready, and says "degraded" and why.
func ready(svc *service.Service, degraded func() []string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		snap, err := svc.Ready(ctx)
		if err != nil {
			f := fault.Classify(err)
			if f.Kind != fault.Unavailable {
				// Whatever keeps us from answering means not ready.
				f = fault.E(fault.Unavailable, fault.MsgDatabaseDown, err)
			}
			writeError(w, r, f)
			return
		}
		out := readyJSON{Status: "ready", Snapshot: snapshotJSON{
			ID:    snap.ID,
			Month: snap.DumpMonth,
			Date:  snap.ReferenceDate.Format("2006-01-02"),
		}}
		if degraded != nil {
			if out.Degraded = degraded(); len(out.Degraded) > 0 {
				out.Status = "degraded"
			}
		}
		writeJSON(w, http.StatusOK, out)
	}
}
