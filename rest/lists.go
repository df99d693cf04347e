package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/listfile"
	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/cnpjgraph/cnpjgraph/wire"
)

// ListMaxBodyBytes bounds the body of the list routes: a list's items run
// to a million tax ids (about 17 MB of JSON).
const ListMaxBodyBytes = 32 << 20

// listRoutes serves CNPJá's list service (the official client's `list`):
// an account's lists of tax ids and their exports (docs/api.md, "Lists").
type listRoutes struct{ svc *service.Service }

func mountLists(r chi.Router, svc *service.Service) {
	h := listRoutes{svc: svc}
	r.Post("/list", h.create)
	r.Get("/list", h.search)
	r.Get("/list/{listId}", h.read)
	r.Patch("/list/{listId}", h.update)
	r.Delete("/list/{listId}", h.delete)
	r.Post("/list/{listId}/export", h.createExport)
	r.Get("/list/{listId}/export", h.searchExports)
	// The official client reads an export with POST (its readExport).
	r.Get("/list/{listId}/export/{exportId}", h.readExport)
	r.Post("/list/{listId}/export/{exportId}", h.readExport)
	r.Get("/list/{listId}/export/{exportId}/{file}", h.file)
}

// listBody is a create's or an update's JSON body; absent fields stay nil.
type listBody struct {
	Title       *string                    `json:"title"`
	Description *string                    `json:"description"`
	Limit       *int                       `json:"limit"`
	Items       []string                   `json:"items"`
	Query       map[string]json.RawMessage `json:"query"`
}

// readJSON decodes a request's JSON object into v, unknown fields refused.
func readJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
		return fault.E(fault.TooLarge, fault.MsgBodyTooLarge, err)
	}
	if err != nil {
		return fault.Invalid("the request body could not be read")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		switch {
		case errors.As(err, &ute) && ute.Field != "":
			name := strings.Split(ute.Field, ".")[0]
			return fault.Invalid(name + " must be " + service.JSONKind(fieldType(v, name, ute.Type)))
		case errors.As(err, &ute):
			return fault.Invalid("the request body must be a JSON object")
		}
		return fault.Invalid("the request body must be a JSON object of the documented fields: " +
			strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return fault.Invalid("the request body must be one JSON object, with nothing after it")
	}
	return nil
}

// fieldType is the type of the field of *v whose JSON name is name, so a
// list's wrong element names the list; else def.
func fieldType(v any, name string, def reflect.Type) reflect.Type {
	t := reflect.TypeOf(v).Elem()
	for i := range t.NumField() {
		if f := t.Field(i); strings.Split(f.Tag.Get("json"), ",")[0] == name {
			return f.Type
		}
	}
	return def
}

func (b listBody) input() service.ListInput {
	return service.ListInput{Title: b.Title, Description: b.Description, Limit: b.Limit, Items: b.Items, Query: b.Query}
}

func (h listRoutes) create(w http.ResponseWriter, r *http.Request) {
	var b listBody
	if err := readJSON(r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	v, err := h.svc.CreateList(r.Context(), b.input())
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, listOf(v, true))
}

// listParam reads a path id; the service validates it.
func listParam(r *http.Request, name string) string {
	v, err := url.PathUnescape(chi.URLParam(r, name))
	if err != nil {
		return ""
	}
	return v
}

func (h listRoutes) read(w http.ResponseWriter, r *http.Request) {
	v, err := h.svc.ReadList(r.Context(), listParam(r, "listId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listOf(v, true))
}

func (h listRoutes) update(w http.ResponseWriter, r *http.Request) {
	var b listBody
	if err := readJSON(r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	v, err := h.svc.UpdateList(r.Context(), listParam(r, "listId"), b.input())
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listOf(v, true))
}

// delete answers the deleted list: the official client parses any answer
// as JSON, an empty body included.
func (h listRoutes) delete(w http.ResponseWriter, r *http.Request) {
	v, err := h.svc.DeleteList(r.Context(), listParam(r, "listId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, listOf(v, false))
}

// pageRequest reads token, limit and (for lists) search; any other
// parameter is refused, as the searches refuse them, by the service after
// the caller's permission (PageRequest.Problem).
func pageRequest(r *http.Request, search bool) service.PageRequest {
	values, err := url.ParseQuery(r.URL.RawQuery)
	var cs service.Constraints
	if err != nil {
		cs.Add("query string must be correctly URL-encoded")
	}
	var p service.PageRequest
	for name, vs := range values {
		if len(vs) > 1 {
			cs.Add(name + " must be given only once")
		}
		switch {
		case name == "token":
			p.Token = vs[0]
		case name == "limit":
			n, err := strconv.Atoi(vs[0])
			if err != nil {
				cs.Add("limit must be an integer from 1 to " + strconv.Itoa(service.MaxListPageSize))
				continue
			}
			p.Limit = &n
		case name == "search" && search:
			p.Search = &vs[0]
		default:
			cs.Add(name + " is not a parameter of this listing")
		}
	}
	p.TokenOnly = len(values) == 1
	p.Problem = cs.Err()
	return p
}

func (h listRoutes) search(w http.ResponseWriter, r *http.Request) {
	req := pageRequest(r, true)
	page, err := h.svc.SearchLists(r.Context(), req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := listPage[listJSON]{Next: nullable(page.Next), Limit: page.Limit, Count: page.Count, Records: []listJSON{}}
	for _, v := range page.Records {
		out.Records = append(out.Records, listOf(v, false))
	}
	writeJSON(w, http.StatusOK, out)
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (h listRoutes) createExport(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Options json.RawMessage `json:"options"`
	}
	if err := readJSON(r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	id, err := h.svc.CreateExport(r.Context(), listParam(r, "listId"), b.Options)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"id": id})
}

func (h listRoutes) searchExports(w http.ResponseWriter, r *http.Request) {
	req := pageRequest(r, false)
	page, err := h.svc.SearchExports(r.Context(), listParam(r, "listId"), req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := listPage[exportJSON]{Next: nullable(page.Next), Limit: page.Limit, Count: page.Count, Records: []exportJSON{}}
	for _, v := range page.Records {
		out.Records = append(out.Records, exportOf(v))
	}
	writeJSON(w, http.StatusOK, out)
}

func (h listRoutes) readExport(w http.ResponseWriter, r *http.Request) {
	v, err := h.svc.ReadExport(r.Context(), listParam(r, "listId"), listParam(r, "exportId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, exportOf(v))
}

// file streams an export's file from the database, a part at a time.
func (h listRoutes) file(w http.ResponseWriter, r *http.Request) {
	listID, exportID, name := listParam(r, "listId"), listParam(r, "exportId"), listParam(r, "file")
	typ, size, err := h.svc.ExportFile(r.Context(), listID, exportID, name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	ct := listfile.ZipContentType
	if typ == service.FileExcel {
		ct = listfile.ExcelContentType
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	if r.Method == http.MethodHead {
		return
	}
	// A file runs to hundreds of megabytes: past the request's deadline
	// and the server's write timeout, each part gets its own, and the
	// download ends when the client stops reading. Once the first part is
	// out, a failure can only cut the body short.
	rc := http.NewResponseController(w)
	for part := 0; ; part++ {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), filePartTimeout)
		data, ok, err := h.svc.Lists().FilePart(ctx, exportID, typ, part)
		cancel()
		if err != nil || !ok {
			return
		}
		_ = rc.SetWriteDeadline(time.Now().Add(filePartTimeout))
		if _, err := w.Write(data); err != nil {
			return
		}
	}
}

// filePartTimeout bounds reading a part of an export's file (a MiB) and
// writing it to the client.
const filePartTimeout = time.Minute

// The shapes of the official client's ListDto, ListSummaryDto,
// ListExportDto and their pages, in its field order.
type listJSON struct {
	ID          string              `json:"id"`
	Created     wire.Stamp          `json:"created"`
	Updated     wire.Stamp          `json:"updated"`
	Title       string              `json:"title"`
	Description *string             `json:"description"`
	Size        int                 `json:"size"`
	Items       *[]string           `json:"items,omitempty"` // ListDto only
	Query       map[string][]string `json:"query,omitempty"`
	Limit       *int32              `json:"limit,omitempty"`
}

func listOf(v service.ListView, items bool) listJSON {
	l := v.List
	out := listJSON{ID: l.ID, Created: wire.StampOf(l.Created), Updated: wire.StampOf(l.Updated), Title: l.Title,
		Size: l.Size, Query: v.Query}
	if l.Description.Valid {
		out.Description = &l.Description.String
	}
	if items {
		its := []string(l.Items)
		if its == nil {
			its = []string{}
		}
		out.Items = &its
	}
	if l.Limit.Valid {
		out.Limit = &l.Limit.Int32
	}
	return out
}

type exportJSON struct {
	Updated      wire.Stamp            `json:"updated"`
	Created      wire.Stamp            `json:"created"`
	ID           string                `json:"id"`
	Status       string                `json:"status"`
	StatusReason *string               `json:"statusReason"`
	Progress     float64               `json:"progress"`
	Options      service.ExportOptions `json:"options"`
	Links        []exportLinkJSON      `json:"links"`
}

type exportLinkJSON struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

func exportOf(v service.ExportView) exportJSON {
	e := v.Export
	out := exportJSON{Updated: wire.StampOf(e.Updated), Created: wire.StampOf(e.Created), ID: e.ID, Status: e.Status,
		Progress: e.Progress, Options: v.Options, Links: []exportLinkJSON{}}
	if e.StatusReason.Valid {
		out.StatusReason = &e.StatusReason.String
	}
	for _, l := range v.Links {
		out.Links = append(out.Links, exportLinkJSON(l))
	}
	return out
}

type listPage[T any] struct {
	Next    *string `json:"next"`
	Limit   int     `json:"limit"`
	Count   int     `json:"count"`
	Records []T     `json:"records"`
}
