package auth

import (
	"bufio"
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/cnpjgraph/cnpjgraph/fault"
)

// requestState is the per-request accounting, and the ResponseWriter the
// handler writes through (one allocation for both).
type requestState struct {
	http.ResponseWriter
	svc    *Service
	p      Principal
	status int
	// background is work run as an account outside a request (AsAccount):
	// no per-minute rate, no ResponseWriter.
	background bool

	mu         sync.Mutex
	lookups    int       // admitted so far (Meter.Admit)
	day        time.Time // the UTC day of the debits
	debited    int64     // taken from the balance in all
	refundable int64     // of debited, what may still be given back (same day)
	refunded   int64
}

type stateKey struct{}

func stateFrom(ctx context.Context) *requestState {
	st, _ := ctx.Value(stateKey{}).(*requestState)
	return st
}

func (st *requestState) WriteHeader(code int) {
	if st.status == 0 && code >= 200 { // 1xx (Early Hints) are not the answer's status
		st.status = code
	}
	st.ResponseWriter.WriteHeader(code)
}

func (st *requestState) Write(b []byte) (int, error) {
	if st.status == 0 {
		st.status = http.StatusOK
	}
	return st.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (st *requestState) Unwrap() http.ResponseWriter { return st.ResponseWriter }

// Flush keeps streaming answers streaming.
func (st *requestState) Flush() {
	if st.status == 0 {
		st.status = http.StatusOK
	}
	if f, ok := st.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack is passed through for protocols that take the connection over.
func (st *requestState) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(st.ResponseWriter).Hijack()
}

// setRateHeaders updates the RateLimit headers while they can still be sent.
func (st *requestState) setRateHeaders(d Decision) {
	if st.status == 0 {
		setRateHeaders(st.Header(), d)
	}
}

func setRateHeaders(h http.Header, d Decision) {
	v := []string{strconv.Itoa(d.Limit), strconv.Itoa(d.Remaining), strconv.Itoa(fault.Seconds(d.Reset))}
	h["Ratelimit-Limit"], h["Ratelimit-Remaining"], h["Ratelimit-Reset"] = v[0:1:1], v[1:2:2], v[2:3:3]
}

// Middleware authenticates, limits and accounts each request: credential →
// account → suspended? → the door's permission → per-minute limit, then
// runs the handler with the Principal in the context (where Meter finds
// it), and afterwards refunds a failed request's credits and records its
// ledger row. What the request may look up, and what it costs, is the
// service layer's to decide, lookup by lookup.
//
// permissionFor names the permission a request needs before any lookup
// ("" for none beyond a valid credential; DoorPermission). render
// writes the error answers (ErrMissing, ErrInvalid, *SuspendedError,
// *PrivilegeError, *RateLimitError); the Retry-After and RateLimit headers
// are already set when it runs.
func (s *Service) Middleware(permissionFor func(r *http.Request) string, render func(w http.ResponseWriter, r *http.Request, err error)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var perm string
			if permissionFor != nil {
				perm = permissionFor(r)
			}
			p, err := s.authenticate(r, perm)
			if p == nil {
				if !errors.Is(err, ErrMissing) && !errors.Is(err, ErrInvalid) {
					s.log.ErrorContext(r.Context(), "auth: credential lookup failed", "err", err)
				}
				render(w, r, err)
				return
			}
			st := &requestState{ResponseWriter: w, svc: s, p: *p}
			if err == nil && !s.unlimited {
				d, lerr := s.Allow(r.Context(), p.AccountID, p.Rate, 1)
				if lerr != nil {
					err = lerr
				} else {
					setRateHeaders(w.Header(), d)
					if !d.Allowed {
						rl := &RateLimitError{RetryAfter: d.Reset}
						w.Header().Set("Retry-After", rl.RetryAfterSeconds())
						err = rl
					}
				}
			}
			if err != nil {
				render(st, r, err)
				s.record(st, r, r)
				return
			}
			r2 := r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
			defer func() {
				if v := recover(); v != nil {
					st.status = http.StatusInternalServerError
					s.finish(st, r, r2)
					panic(v)
				}
				s.finish(st, r, r2)
			}()
			next.ServeHTTP(st, r2)
		})
	}
}

// finish settles the request's credits, refunding what is left of them on
// an error answer (the service refunds a failed lookup itself; this is for
// a failure after it, such as a response that could not be written), and
// records the ledger row.
func (s *Service) finish(st *requestState, r, r2 *http.Request) {
	if st.status == 0 {
		st.status = http.StatusOK // nothing written: net/http answers 200
	}
	if st.status >= 400 {
		if err := st.give(r.Context(), math.MaxInt64); err != nil {
			s.log.ErrorContext(r.Context(), "auth: refund failed", "account", st.p.AccountID, "err", err)
		}
	}
	s.record(st, r, r2)
}

func (s *Service) record(st *requestState, r, r2 *http.Request) {
	st.mu.Lock()
	cost := st.debited - st.refunded
	st.mu.Unlock()
	status := st.status
	if status == 0 {
		status = http.StatusOK
	}
	s.ledger.record(usageRow{account: st.p.AccountID, route: routeOf(r, r2), cost: cost, status: status, at: s.now()})
}

// routeOf is the route pattern the router matched (bounded cardinality for
// the ledger), else the path. For a request refused before routing, chi is
// asked which pattern the path would have matched.
func routeOf(r, r2 *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		if p := rc.RoutePattern(); p != "" {
			return p
		}
		if r == r2 && rc.Routes != nil {
			if p := rc.Routes.Find(chi.NewRouteContext(), r.Method, r.URL.Path); p != "" {
				return p
			}
		}
	}
	if r2.Pattern != "" {
		return r2.Pattern
	}
	return r.URL.Path
}
