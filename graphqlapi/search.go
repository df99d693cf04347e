package graphqlapi

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/cnpjgraph/cnpjgraph/graph"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// searchRequest turns searchOffices' or searchPersons' arguments into the
// service's request, the filter flattened to GET /office's parameter names
// ({address: {state: {in: ["SP"]}}} → address.state.in = [SP]), so both
// doors share one parser and one set of sentences.
func searchRequest(ctx context.Context, filter map[string]any, first *int, after *string) service.SearchRequest {
	r := service.SearchRequest{Filters: map[string][]string{}, Limit: first, SizeName: "first", Cursors: wantsCursors(ctx)}
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

// wantsCursors reports whether the connection's edges or its
// pageInfo.startCursor are selected: both need a cursor per record, which
// costs a stored token each.
func wantsCursors(ctx context.Context) bool {
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		if f.Name == "edges" {
			return true
		}
		if f.Name == "pageInfo" {
			for _, g := range graphql.CollectFields(graphql.GetOperationContext(ctx), f.Selections, nil) {
				if g.Name == "startCursor" {
					return true
				}
			}
		}
	}
	return false
}

// pageInfo is a search page's: the page after it is named by next (the
// last record's cursor, "" on the last page); cursors, when asked, are
// each record's.
func pageInfo(next string, cursors []string, after *string) *graph.PageInfo {
	info := &graph.PageInfo{HasNextPage: next != "", HasPreviousPage: after != nil}
	if len(cursors) > 0 {
		info.StartCursor = &cursors[0]
		info.EndCursor = &cursors[len(cursors)-1]
	} else if next != "" {
		info.EndCursor = &next
	}
	return info
}
