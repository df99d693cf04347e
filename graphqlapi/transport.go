package graphqlapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/cnpjgraph/cnpjgraph/fault"
)

// transport is gqlgen's GET and POST transports in one, except for a
// request it cannot take, which goes through the error presenter like
// every other error, so it carries extensions.code and never quotes the
// body back (gqlgen's answers did, whole, without a code): a POST body over
// the router's limit (the reader fails with *http.MaxBytesError) is 413
// PAYLOAD_TOO_LARGE; a POST not sent as application/json or not a JSON
// request object, a GET query string that does not parse, or variables or
// extensions that are not JSON objects, are 400 BAD_REQUEST with a
// constraint. GET would also have to refuse mutations, as gqlgen's does;
// the schema has none.
type transport struct{}

var _ graphql.Transport = transport{}

// Constraints of a request that cannot be taken.
const (
	constraintJSONType    = "Content-Type must be application/json"
	constraintJSONBody    = "body must be a JSON object: {query, variables, operationName, extensions}"
	constraintBodyRead    = "body could not be read"
	constraintQueryString = "query string must be correctly URL-encoded"
	constraintVariables   = "variables must be a JSON object"
	constraintExtensions  = "extensions must be a JSON object"
)

// Supports takes every GET and POST, so that none falls through to
// gqlgen's uncoded "transport not supported".
func (transport) Supports(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodPost) && r.Header.Get("Upgrade") == ""
}

func (transport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	contentType := responseContentType(r)
	w.Header().Set("Content-Type", contentType)
	start := graphql.Now()
	read := paramsOfPOST
	if r.Method == http.MethodGet {
		read = paramsOfGET
	}
	params, f := read(r)
	if f != nil {
		fail(w, r, exec, f)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	execute(w, r, exec, contentType, &params)
}

// paramsOfPOST reads a POST's JSON body.
func paramsOfPOST(r *http.Request) (graphql.RawParams, *fault.Error) {
	var params graphql.RawParams
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return params, fault.Invalid(constraintJSONType)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			return params, fault.E(fault.TooLarge, fault.MsgBodyTooLarge, err)
		}
		return params, fault.Invalid(constraintBodyRead)
	}
	if err := decodeJSON(body, &params); err != nil {
		return params, fault.Invalid(constraintJSONBody)
	}
	return params, nil
}

// paramsOfGET reads a GET's query string.
func paramsOfGET(r *http.Request) (graphql.RawParams, *fault.Error) {
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return graphql.RawParams{}, fault.Invalid(constraintQueryString)
	}
	params := graphql.RawParams{Query: values.Get("query"), OperationName: values.Get("operationName")}
	var cs []string
	if v := values.Get("variables"); v != "" && decodeJSON([]byte(v), &params.Variables) != nil {
		cs = append(cs, constraintVariables)
	}
	if v := values.Get("extensions"); v != "" && decodeJSON([]byte(v), &params.Extensions) != nil {
		cs = append(cs, constraintExtensions)
	}
	if cs != nil {
		return params, fault.Invalid(cs...)
	}
	return params, nil
}

// decodeJSON decodes b into v, numbers as json.Number (as gqlgen does).
func decodeJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// fail answers a request the transport cannot take.
func fail(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, f *fault.Error) {
	writeResponse(w, f.Status(), exec.DispatchError(r.Context(), gqlerror.List{{Err: f, Message: f.Message}}))
}

// execute runs a request's operation and writes its answer.
func execute(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor, contentType string, params *graphql.RawParams) {
	ctx := r.Context()
	rc, opErr := exec.CreateOperationContext(ctx, params)
	if opErr != nil {
		if f := uncodedRefusal(opErr); f != nil {
			fail(w, r, exec, f)
			return
		}
		writeResponse(w, protocolStatus(contentType, opErr), exec.DispatchError(graphql.WithOperationContext(ctx, rc), opErr))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	writeResponse(w, 0, responses(ctx))
}

// uncodedRefusal is the 400 BAD_REQUEST of a request gqlgen refused
// without a code: its persisted-query extension's "provided APQ hash does
// not match query", "unsupported APQ version", "invalid APQ extension
// data". Its words become the constraints. Nil when every error has a code
// (a parse or validation failure; PERSISTED_QUERY_NOT_FOUND, on which
// clients send the query again).
func uncodedRefusal(errs gqlerror.List) *fault.Error {
	var cs []string
	for _, e := range errs {
		if e.Err == nil && e.Extensions["code"] == nil {
			cs = append(cs, e.Message)
		}
	}
	if cs == nil {
		return nil
	}
	return fault.Invalid(cs...)
}

const (
	typeJSON            = "application/json"
	typeGraphQLResponse = "application/graphql-response+json"
)

// responseContentType negotiates as gqlgen's POST does: JSON unless the
// client asks for (or only accepts other things than) the GraphQL type.
func responseContentType(r *http.Request) string {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return typeJSON
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "*/*", "application/*", typeJSON:
			return typeJSON
		case typeGraphQLResponse:
			return typeGraphQLResponse
		}
	}
	return typeGraphQLResponse
}

// protocolStatus is gqlgen's status of a query that cannot run: 422 (400
// for the GraphQL response type) when it is malformed or over a limit.
func protocolStatus(contentType string, errs gqlerror.List) int {
	if errcode.GetErrorKind(errs) != errcode.KindProtocol {
		return http.StatusOK
	}
	if contentType == typeGraphQLResponse {
		return http.StatusBadRequest
	}
	return http.StatusUnprocessableEntity
}

// writeResponse writes an answer with status (0: as refusalStatus decides
// on the first write) and its length, so the router sends it before the
// access line, as it does REST's.
func writeResponse(w http.ResponseWriter, status int, resp *graphql.Response) {
	b, err := encodeResponse(resp)
	if err != nil {
		b = []byte(`{"errors":[{"message":"` + fault.MsgUnexpected + `","extensions":{"code":"INTERNAL_SERVER_ERROR","status":500}}]}`)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if status != 0 {
		w.WriteHeader(status)
	}
	_, _ = w.Write(b)
}

// encodeResponse is resp as JSON. An answer of data alone (the usual one) is
// written around the data gqlgen has already encoded: json.Marshal would
// read it all again to check and compact it (2 % of the server's time on
// the nested query).
func encodeResponse(resp *graphql.Response) ([]byte, error) {
	if len(resp.Errors) > 0 || len(resp.Data) == 0 || resp.Label != "" || resp.Path != nil ||
		resp.HasNext != nil || len(resp.Extensions) > 0 {
		return json.Marshal(resp)
	}
	b := make([]byte, 0, len(`{"data":}`)+len(resp.Data))
	b = append(b, `{"data":`...)
	b = append(b, resp.Data...)
	return append(b, '}'), nil
}
