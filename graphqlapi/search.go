package graphqlapi

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/cnpjgraph/cnpjgraph/service"
)

// searchRequest turns searchOffices' or searchPersons' arguments into the
// service's request, the filter flattened to GET /office's parameter names
// ({address: {state: {in: ["SP"]}}} → address.state.in = [SP]), so both
// doors share one parser and one set of sentences.
func searchRequest(ctx context.Context, filter map[string]any, first *int, after *string) service.SearchRequest {
	r := service.SearchRequest{Filters: map[string][]string{}, Limit: first, Cursors: wantsEdges(ctx)}
	flatten("", filter, r.Filters)
	if after != nil {
		r.After = *after
	}
	return r
}

// flatten writes the leaves of a filter under their dotted names. The
// filter is a map whose values are gqlgen's input structs (json tags name
// their fields), lists and scalars.
func flatten(prefix string, v any, out map[string][]string) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return // an explicit null is no condition
		}
		rv = rv.Elem()
	}
	name := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch {
	case rv.Kind() == reflect.Map:
		for _, k := range rv.MapKeys() {
			flatten(name(k.String()), rv.MapIndex(k).Interface(), out)
		}
	case rv.Kind() == reflect.Struct && rv.Type() != reflect.TypeFor[time.Time]():
		for i := range rv.NumField() {
			tag, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
			if tag != "" && tag != "-" {
				flatten(name(tag), rv.Field(i).Interface(), out)
			}
		}
	case rv.Kind() == reflect.Slice:
		if rv.IsNil() {
			return
		}
		values := make([]string, rv.Len())
		for i := range values {
			values[i] = scalarText(rv.Index(i).Interface())
		}
		out[prefix] = values
	default:
		out[prefix] = []string{scalarText(rv.Interface())}
	}
}

// scalarText is a value as it would appear in a query string.
func scalarText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case json.Number:
		return v.String()
	case time.Time:
		return v.Format(time.DateOnly)
	}
	return fmt.Sprint(v)
}

// wantsEdges reports whether the connection's edges (and so a cursor per
// record) are selected.
func wantsEdges(ctx context.Context) bool {
	return slices.ContainsFunc(graphql.CollectFieldsCtx(ctx, nil), func(f graphql.CollectedField) bool {
		return f.Name == "edges"
	})
}

// endCursor is the cursor after the page: the next page's token, or the
// last edge's cursor on the last page; nil when there is neither.
func endCursor(next string, cursors []string) *string {
	switch {
	case next != "":
		return &next
	case len(cursors) > 0:
		return &cursors[len(cursors)-1]
	}
	return nil
}
