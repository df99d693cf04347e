package rest

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/wire"
)

const contentTypeJSON = "application/json; charset=utf-8"

// writeJSON writes v with status. The body is encoded before anything is
// sent, so an encoding failure still becomes a proper JSON 500, and the
// Content-Type goes out before the status line.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"code":500,"message":"` + fault.MsgUnexpected + `"}`)
	}
	writeBody(w, status, body)
}

// writeBody writes an encoded JSON body with status. Its length goes in the
// header, so the answer can be sent whole before the access line is
// written (observe).
func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", contentTypeJSON)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError is the only place an error becomes a response: the fault's
// kind decides the status, its public fields the body; the cause goes to
// the access log through the request's state, never to the client.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	f := fault.Classify(err)
	if st := stateFrom(r.Context()); st != nil {
		st.fault = f
	}
	if f.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(fault.Seconds(f.RetryAfter)))
	}
	writeJSON(w, f.Status(), wire.Error{
		Code:        f.Status(),
		Message:     f.Message,
		Constraints: f.Constraints,
		Reason:      f.Reason,
		Permission:  f.Permission,
		Required:    f.Required,
		Remaining:   f.Remaining,
	})
}

// requestState is what the middlewares learn about a request as it runs.
type requestState struct {
	id        string
	fault     *fault.Error
	unmatched bool // no route: metrics must not label by path
}

type stateKey struct{}

func stateFrom(ctx context.Context) *requestState {
	st, _ := ctx.Value(stateKey{}).(*requestState)
	return st
}

// RequestID returns the request id of a request served by the router.
func RequestID(ctx context.Context) string {
	if st := stateFrom(ctx); st != nil {
		return st.id
	}
	return ""
}

// logFault adds the fault of a failed request to its access log line.
func logFault(attrs []slog.Attr, f *fault.Error) []slog.Attr {
	if f == nil {
		return attrs
	}
	attrs = append(attrs, slog.String("error_kind", f.Kind.String()))
	if f.Cause != nil {
		attrs = append(attrs, slog.String("error", f.Cause.Error()))
	}
	return attrs
}
