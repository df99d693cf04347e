package rest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/loaders"
)

// statusWriter remembers what the handler answered, for logs and metrics.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// forwardedClient is the client a trusted proxy says it forwards: the
// peer is one of trusted, and the nearest address of its X-Forwarded-For
// that is not (each proxy appends the address it was reached from, so
// those before the last untrusted one are the client's to write, and may
// be forged). false when the peer is not trusted or names no one.
func forwardedClient(r *http.Request, trusted []netip.Prefix) (string, bool) {
	if len(trusted) == 0 {
		return "", false
	}
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	peer, ok := parseHost(r.RemoteAddr)
	if !ok || !isTrusted(peer) {
		return "", false
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		if strings.TrimSpace(hops[i]) == "" {
			continue
		}
		hop, ok := parseHost(hops[i])
		if !ok {
			return "", false // garbage: name no one rather than a wrong one
		}
		if !isTrusted(hop) || i == 0 {
			return hop.String(), true
		}
	}
	return "", false
}

// parseHost reads an address with or without its port ("10.0.0.5",
// "10.0.0.5:443", "[2001:db8::1]:443"), as proxies and net/http write them.
func parseHost(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

// validRequestID accepts a client's X-Request-Id when it is short printable
// ASCII, so it can go into logs and headers unescaped.
func validRequestID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func newRequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// observe is the outermost middleware: it assigns the request id, and after
// the request logs one access line and records the metrics, labelled with
// the route pattern (not the path, whose cardinality is unbounded).
func observe(log *slog.Logger, m *Metrics, trusted []netip.Prefix) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			id := r.Header.Get("X-Request-Id")
			if !validRequestID(id) {
				id = newRequestID()
			}
			w.Header().Set("X-Request-Id", id)
			st := &requestState{id: id}
			sw := &statusWriter{ResponseWriter: w}
			r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
			next.ServeHTTP(sw, r)
			// Whether the client closed its connection before its answer
			// was sent: asked before the flush below, after which a client
			// that read the answer and closed (as curl does) cancels the
			// request's context too.
			clientLeft := r.Context().Err() != nil
			// An answer of known length is complete: send it before the
			// metrics and the access line, so the client does not wait for
			// them (docs/benchmarks.md, "Where each request's CPU goes").
			// Without a length, a flush here would make the answer chunked.
			if sw.Header().Get("Content-Length") != "" {
				_ = http.NewResponseController(sw).Flush()
			}

			elapsed := time.Since(start)
			route := "unmatched"
			if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" && !st.unmatched {
				route = rc.RoutePattern()
			}
			status := sw.status
			if status == 0 {
				status = http.StatusOK
			}
			if status >= 500 && clientLeft {
				// Its canceled statements made a 504 nobody reads.
				// Counted and logged as nginx's 499 (client closed
				// request), so that the 5xx an operator alerts on are the
				// server's own: each run of make bench left a few such
				// 504s at its end.
				status = statusClientClosed
			}
			m.observe(route, r.Method, status, elapsed)

			level := slog.LevelInfo
			if status >= 500 {
				level = slog.LevelError
			}
			if !log.Enabled(r.Context(), level) { // LOG_LEVEL above it: no line to build
				return
			}
			remote, proxied := forwardedClient(r, trusted)
			if !proxied {
				remote = r.RemoteAddr
			}
			attrs := []slog.Attr{
				slog.String("request_id", id),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.String("route", route),
				slog.Int("status", status),
				slog.Int("bytes", sw.bytes),
				slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
				slog.String("remote", remote),
			}
			if proxied {
				attrs = append(attrs, slog.String("proxy", r.RemoteAddr))
			}
			if ua := r.UserAgent(); ua != "" {
				attrs = append(attrs, slog.String("user_agent", ua))
			}
			log.LogAttrs(r.Context(), level, "request", logFault(attrs, st.fault)...)
		})
	}
}

// statusClientClosed is the status logged and counted for a request whose
// client left before its answer (nginx's 499); no client ever reads it.
const statusClientClosed = 499

// recoverer turns a panic into the contract's 500, logging the stack.
func recoverer(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				p := recover()
				if p == nil {
					return
				}
				if p == http.ErrAbortHandler { //nolint:errorlint // recover() returns the value as panicked, unwrapped
					panic(p)
				}
				log.ErrorContext(r.Context(), "panic", slog.String("request_id", RequestID(r.Context())),
					slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
				writeError(w, r, fault.E(fault.Internal, fault.MsgUnexpected, fmt.Errorf("panic: %v", p)))
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// timeout bounds every request: the lookups pass the context to the
// database, which cancels the statement at the deadline, so a slow or
// unreachable database yields a 504 or 503 instead of a hang.
func timeout(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if d <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// exposedHeaders are the answers' headers a browser lets the calling page
// read: the request id, the rate limit's, a search page's X-Count-Exact,
// and a certificate's file name.
const exposedHeaders = "X-Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, X-Count-Exact, Content-Disposition"

// allowedHeaders are the request headers a page of an allowed origin may
// send: the credential, the body's type, a request id, and those GraphQL
// clients add (Apollo Client's client awareness and CSRF-prevention
// headers), whose preflight would otherwise fail in the browser.
const allowedHeaders = "Authorization, Content-Type, X-Request-Id, " +
	"Apollographql-Client-Name, Apollographql-Client-Version, Apollo-Require-Preflight, X-Apollo-Operation-Name"

// cors lets the configured browser origins call the API ("*": any). A
// preflight from an allowed origin is answered here; other requests get
// the headers and go on.
func cors(origins []string) func(http.Handler) http.Handler {
	any := false
	allowed := make(map[string]bool, len(origins))
	for _, o := range origins {
		o = strings.TrimRight(strings.TrimSpace(o), "/")
		if o == "*" {
			any = true
		} else if o != "" {
			allowed[o] = true
		}
	}
	return func(next http.Handler) http.Handler {
		if !any && len(allowed) == 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			origin := r.Header.Get("Origin")
			if origin == "" || !(any || allowed[origin]) {
				next.ServeHTTP(w, r)
				return
			}
			h := w.Header()
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", exposedHeaders)
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Add("Vary", "Access-Control-Request-Method")
				h.Add("Vary", "Access-Control-Request-Headers")
				// PATCH and DELETE: the list routes.
				h.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE, OPTIONS")
				h.Set("Access-Control-Allow-Headers", allowedHeaders)
				h.Set("Access-Control-Max-Age", strconv.Itoa(600))
				w.WriteHeader(http.StatusNoContent)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// DefaultMaxBodyBytes bounds a request's body unless Deps say otherwise:
// a GraphQL query with its variables is a few KiB.
const DefaultMaxBodyBytes = 1 << 20

// limitBody bounds the body of a request: a declared length above max is
// answered 413 at once, before a byte of it is read; a body of undeclared
// length (chunked) is read here, up to max, and answered 413 as soon as it
// passes max. Either way a handler never sees more than max bytes, and the
// 413 is the contract's JSON error whatever route it hits.
func limitBody(max int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.ContentLength > max:
				writeError(w, r, fault.E(fault.TooLarge, fault.MsgBodyTooLarge, nil))
				return
			case r.Body == nil || r.Body == http.NoBody:
			case r.ContentLength < 0:
				body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
				if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
					writeError(w, r, fault.E(fault.TooLarge, fault.MsgBodyTooLarge, err))
					return
				} else if err != nil {
					writeError(w, r, fault.Invalid("the request body could not be read"))
					return
				}
				r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			default:
				r.Body = http.MaxBytesReader(w, r.Body, max)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// withLoaders gives every request's context fresh dataloaders, built if the
// request uses them: a value is read once per request. A REST request has
// nothing to batch, so its loaders do not wait for company; GraphQL
// installs batching ones of its own.
func withLoaders(store loaders.Store) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(loaders.WithLazy(r.Context(), store, 0)))
		})
	}
}
