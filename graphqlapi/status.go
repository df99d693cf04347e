package graphqlapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/99designs/gqlgen/graphql"

	"github.com/cnpjgraph/cnpjgraph/fault"
)

// A GraphQL answer is 200 even when fields failed. But when the caller was
// refused outright (every root field refused for the same credential,
// permission, rate or credit reason, nothing answered), the HTTP status is
// the one the same REST request gets (401, 403 or 429 with Retry-After):
// clients and proxies back off on those.

// refusal is the refusal of a whole response, if any.
type refusal struct{ f *fault.Error }

type refusalKey struct{}

// refusalOf inspects a response: it is a refusal when it carries errors,
// all of them refusals of one kind, and no root field has data.
func refusalOf(resp *graphql.Response) *fault.Error {
	if resp == nil || len(resp.Errors) == 0 || !allNull(resp.Data) {
		return nil
	}
	var first *fault.Error
	for _, e := range resp.Errors {
		var f *fault.Error
		if !errors.As(e, &f) || !refused(f.Kind) {
			return nil
		}
		if first == nil {
			first = f
		} else if f.Kind != first.Kind {
			return nil
		}
	}
	return first
}

func refused(k fault.Kind) bool {
	return k == fault.Unauthenticated || k == fault.PermissionDenied || k == fault.ResourceExhausted
}

// allNull reports whether data is null, or an object whose every field is
// null or a list of nulls (an `offices` whose every lookup was refused).
func allNull(data json.RawMessage) bool {
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		return true
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return false
	}
	for _, v := range fields {
		var items []json.RawMessage
		if bytes.Equal(v, []byte("null")) {
			continue
		}
		if err := json.Unmarshal(v, &items); err != nil {
			return false
		}
		for _, item := range items {
			if !bytes.Equal(item, []byte("null")) {
				return false
			}
		}
	}
	return true
}

// noteRefusal records a refused response for the writer of refusalStatus.
func noteRefusal(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if st, ok := ctx.Value(refusalKey{}).(*refusal); ok {
		st.f = refusalOf(resp)
	}
	return resp
}

type refusalWriter struct {
	http.ResponseWriter
	st     *refusal
	headed bool
}

func (w *refusalWriter) WriteHeader(status int) {
	if w.headed {
		return
	}
	w.headed = true
	if f := w.st.f; f != nil {
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(fault.Seconds(f.RetryAfter)))
		}
		status = f.Status()
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write sends the status first: the transports write an answer's body
// without calling WriteHeader.
func (w *refusalWriter) Write(b []byte) (int, error) {
	if !w.headed {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// refusalStatus answers refused responses with the REST status.
func refusalStatus(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := &refusal{}
		ctx := context.WithValue(r.Context(), refusalKey{}, st)
		next.ServeHTTP(&refusalWriter{ResponseWriter: w, st: st}, r.WithContext(ctx))
	})
}
