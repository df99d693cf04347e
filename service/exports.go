package service

// An export of a list: its options, the job an exporting instance claims,
// and its files as their owner reads them (package exporter runs it).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/loaders"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// Export file types, in the order an export's links list them.
const (
	FileExcel   = "EXCEL"
	FileJSONZip = "JSON_ZIP"
)

// ExportFileTypes are the files every completed export has.
var ExportFileTypes = []string{FileExcel, FileJSONZip}

// ExportRoute is the usage ledger's route of an export's work.
const ExportRoute = "export /list/{listId}/export"

// ExportView is an export as its owner reads it, with links to its files
// once completed.
type ExportView struct {
	Export  db.ListExport
	Options ExportOptions
	Links   []ExportLink
}

// ExportLink is a link to a file of a completed export.
type ExportLink struct {
	Type string
	URL  string
}

// ExportOptions are an export's office lookup options (the client's
// ListJobOptionsDto), stored with defaults filled in.
type ExportOptions struct {
	Simples             bool     `json:"simples"`
	SimplesHistory      bool     `json:"simplesHistory"`
	Registrations       []string `json:"registrations,omitempty"`
	RegistrationsSource string   `json:"registrationsSource"`
	Suframa             bool     `json:"suframa"`
	Geocoding           bool     `json:"geocoding"`
	Strategy            Strategy `json:"strategy"`
	MaxAge              int      `json:"maxAge"`
	MaxStale            int      `json:"maxStale"`
	maxAgeSet           bool
}

// ParseExportOptions reads an export's options, validated as the office
// lookup's parameters are.
func ParseExportOptions(raw json.RawMessage) (ExportOptions, error) {
	var in struct {
		Simples             *bool    `json:"simples"`
		SimplesHistory      *bool    `json:"simplesHistory"`
		Registrations       []string `json:"registrations"`
		RegistrationsSource *string  `json:"registrationsSource"`
		Suframa             *bool    `json:"suframa"`
		Geocoding           *bool    `json:"geocoding"`
		Strategy            *string  `json:"strategy"`
		MaxAge              *int     `json:"maxAge"`
		MaxStale            *int     `json:"maxStale"`
	}
	c := DefaultCache()
	o := ExportOptions{RegistrationsSource: "AUTO", Strategy: c.Strategy, MaxAge: c.MaxAge, MaxStale: c.MaxStale}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return o, fault.Invalid(optionsProblem(err))
	}
	var cs Constraints
	o.Simples = in.Simples != nil && *in.Simples
	if in.SimplesHistory != nil && *in.SimplesHistory {
		o.Simples, o.SimplesHistory = true, true
	}
	if in.Registrations != nil {
		o.Registrations = cs.ParseRegistrations("options.registrations", in.Registrations)
		if len(in.Registrations) == 0 {
			cs.Add("options.registrations must not be empty")
		}
	}
	if in.RegistrationsSource != nil {
		if !slices.Contains([]string{"AUTO", "CCC", "SINTEGRA"}, *in.RegistrationsSource) {
			cs.Add("options.registrationsSource must be one of: AUTO, CCC, SINTEGRA")
		}
		o.RegistrationsSource = *in.RegistrationsSource
	}
	o.Suframa = in.Suframa != nil && *in.Suframa
	o.Geocoding = in.Geocoding != nil && *in.Geocoding
	if in.Strategy != nil {
		o.Strategy = cs.ParseStrategy("options.strategy", *in.Strategy)
	}
	for _, d := range []struct {
		name string
		v    *int
		to   *int
	}{{"options.maxAge", in.MaxAge, &o.MaxAge}, {"options.maxStale", in.MaxStale, &o.MaxStale}} {
		if d.v == nil {
			continue
		}
		if n, ok := cs.ParseDays(d.name, strconv.Itoa(*d.v)); ok {
			*d.to = n
		}
	}
	o.maxAgeSet = in.MaxAge != nil
	cs.CheckCache(o.cache())
	return o, cs.Err()
}

// optionsProblem says what is wrong with the options' JSON, in the
// options' words.
func optionsProblem(err error) string {
	var ute *json.UnmarshalTypeError
	switch {
	case errors.As(err, &ute) && ute.Field != "":
		return "options." + ute.Field + " must be " + JSONKind(ute.Type)
	case errors.As(err, &ute):
		return "options must be a JSON object of the office lookup's options"
	}
	return "options must be a JSON object of the office lookup's options: " + strings.TrimPrefix(err.Error(), "json: ")
}

func (o ExportOptions) cache() CacheQuery {
	return CacheQuery{Strategy: o.Strategy, MaxAge: o.MaxAge, MaxStale: o.MaxStale, AgeSet: o.maxAgeSet}
}

// officeQuery is the office lookup an export runs for each tax id.
func (o ExportOptions) officeQuery(id cnpj.CNPJ) OfficeQuery {
	return OfficeQuery{TaxID: id, Simples: o.Simples, SimplesHistory: o.SimplesHistory,
		Registrations: o.Registrations, Suframa: o.Suframa, Geocoding: o.Geocoding, Cache: o.cache()}
}

// CreateExport queues an export of one of the caller's lists; an
// exporting instance (package exporter) picks it up.
func (s *Service) CreateExport(ctx context.Context, listID string, options json.RawMessage) (string, error) {
	if err := s.meter.Admit(ctx, WriteList); err != nil {
		return "", err
	}
	if err := validListID("listId", listID); err != nil {
		return "", err
	}
	o, err := ParseExportOptions(options)
	if err != nil {
		return "", err
	}
	// Refused now rather than failed later: what this server cannot serve.
	if err := s.officeOptionsServed(o.officeQuery("")); err != nil {
		return "", err
	}
	stored, _ := json.Marshal(o)
	e := db.ListExport{ID: uuid.NewString(), ListID: listID, Created: s.now().UTC(), Options: stored}
	err = s.lists().CreateExport(ctx, s.owner(ctx), e)
	if errors.Is(err, db.ErrExportsQueued) {
		return "", fault.Invalid(fmt.Sprintf("an account may have at most %d exports queued or running: wait for one to end", db.MaxQueuedExports))
	}
	if err != nil {
		return "", listErr(err)
	}
	s.wakeExports()
	return e.ID, nil
}

// ReadExport is one export of one of the caller's lists, with links to its
// files once completed, signed for the caller.
func (s *Service) ReadExport(ctx context.Context, listID, exportID string) (ExportView, error) {
	if err := s.meter.Admit(ctx, ReadList); err != nil {
		return ExportView{}, err
	}
	if err := validListID("listId", listID); err != nil {
		return ExportView{}, err
	}
	if err := validListID("exportId", exportID); err != nil {
		return ExportView{}, err
	}
	e, err := s.lists().Export(ctx, s.owner(ctx), listID, exportID)
	if err != nil {
		return ExportView{}, listErr(err)
	}
	return s.exportView(ctx, e), nil
}

func (s *Service) exportView(ctx context.Context, e db.ListExport) ExportView {
	v := ExportView{Export: e, Links: []ExportLink{}}
	_ = json.Unmarshal(e.Options, &v.Options)
	if e.Status != "COMPLETED" {
		return v
	}
	for _, t := range ExportFileTypes {
		if !slices.Contains(e.Files, t) {
			continue
		}
		if url, ok := s.Link(ctx, KindListFile, ExportFilePath(e.ListID, e.ID, t), nil); ok {
			v.Links = append(v.Links, ExportLink{Type: t, URL: url})
		}
	}
	return v
}

// ExportFilePath is the route of an export's file.
func ExportFilePath(listID, exportID, typ string) string {
	return "/list/" + listID + "/export/" + exportID + "/" + ExportFileName(typ)
}

// ExportFileName is the name of an export's file of type typ.
func ExportFileName(typ string) string {
	if typ == FileExcel {
		return "offices.xlsx"
	}
	return "offices.zip"
}

// ExportFileType is the type of the file name, "" when none.
func ExportFileType(name string) string {
	for _, t := range ExportFileTypes {
		if ExportFileName(t) == name {
			return t
		}
	}
	return ""
}

// SearchExports is a page of a list's exports, oldest first.
func (s *Service) SearchExports(ctx context.Context, listID string, r PageRequest) (ListPageView[ExportView], error) {
	if err := s.meter.Admit(ctx, ReadList); err != nil {
		return ListPageView[ExportView]{}, err
	}
	if err := validListID("listId", listID); err != nil {
		return ListPageView[ExportView]{}, err
	}
	if r.Search != nil {
		return ListPageView[ExportView]{}, fault.Invalid("search is not a parameter of this listing")
	}
	p, err := s.pageStart(ctx, r, &listID)
	if err != nil {
		return ListPageView[ExportView]{}, err
	}
	if _, err := s.lists().List(ctx, p.AccountID, listID, false); err != nil {
		return ListPageView[ExportView]{}, listErr(err)
	}
	after, afterID := p.AfterCreated, p.AfterID
	if p.Token == "" {
		afterID = uuid.Nil.String()
	}
	rows, count, err := s.lists().Exports(ctx, listID, after, afterID, p.Limit+1)
	if err != nil {
		return ListPageView[ExportView]{}, err
	}
	more := len(rows) > p.Limit
	rows = rows[:min(len(rows), p.Limit)]
	page := ListPageView[ExportView]{Limit: p.Limit, Count: count}
	for _, e := range rows {
		page.Records = append(page.Records, s.exportView(ctx, e))
	}
	if len(rows) > 0 {
		last := rows[len(rows)-1]
		page.Next, err = s.nextPage(ctx, p, more, last.Created, last.ID)
	}
	return page, err
}

// ExportJob is an export an instance claimed: its list, its options, and
// the context its lookups run in, as the list's account.
type ExportJob struct {
	Export  db.ListExport
	List    db.List
	Options ExportOptions
	ctx     context.Context
}

// Lists is the store of lists and exports, for the exporter.
func (s *Service) Lists() db.Lists { return s.lists() }

// ExportStale is how long an export's heartbeat may be silent before
// another instance takes it over (its instance stopped).
const ExportStale = 2 * time.Minute

// ClaimExport takes the next export to run, if any.
func (s *Service) ClaimExport(ctx context.Context) (ExportJob, bool, error) {
	e, ok, err := s.lists().ClaimExport(ctx, ExportStale)
	if err != nil || !ok {
		return ExportJob{}, false, err
	}
	job := ExportJob{Export: e, ctx: ctx}
	_ = json.Unmarshal(e.Options, &job.Options)
	if job.List, err = s.lists().ExportList(ctx, e.ListID); err != nil {
		return job, true, err
	}
	if s.owners != nil {
		if job.ctx, err = s.owners.AsAccount(ctx, job.List.AccountID); err != nil {
			return job, true, err
		}
	}
	return job, true, nil
}

// ExportTaxIDs are the tax ids a job exports: the list's items, or its
// search run now up to its limit (priced as the search's pages, as the
// account) and kept as its items from then on.
func (s *Service) ExportTaxIDs(job ExportJob) ([]string, error) {
	l := job.List
	if l.Query == nil || len(l.Items) > 0 {
		return l.Items, nil
	}
	var filters map[string][]string
	if err := json.Unmarshal(l.Query, &filters); err != nil {
		return nil, fmt.Errorf("service: the list's query: %w", err)
	}
	limit := int(l.Limit.Int32)
	var ids []string
	// Pages of up to 1,000, the first sized to the limit; a token's page
	// has its first page's size, so the last one may overshoot the limit.
	size := min(s.exportPageSize, limit)
	req := SearchRequest{Filters: filters, Limit: &size}
	for len(ids) < limit {
		page, err := s.SearchOffices(loaders.WithLazy(job.ctx, s.store, 0), req)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Records {
			ids = append(ids, o.TaxID)
		}
		if page.Next == "" || len(page.Records) == 0 {
			break
		}
		req = SearchRequest{Token: page.Next}
	}
	ids = ids[:min(len(ids), limit)]
	if err := s.lists().SetListItems(job.ctx, l.ID, ids, s.now().UTC()); err != nil {
		return nil, err
	}
	return ids, nil
}

// ExportOffice is the office lookup of one tax id of a job, as the
// account, with the job's options.
func (s *Service) ExportOffice(job ExportJob, id string) (model.Office, error) {
	return s.Office(loaders.WithLazy(job.ctx, s.store, 0), job.Options.officeQuery(cnpj.CNPJ(id)))
}

// SettleExport records what a job cost its account in the usage ledger,
// one row an export, with the status of its failure (err) or 200.
func (s *Service) SettleExport(job ExportJob, err error) {
	if s.owners == nil || job.ctx == nil {
		return
	}
	status := 200
	if err != nil {
		status = fault.Classify(err).Kind.Status()
	}
	s.owners.Record(job.ctx, ExportRoute, status)
}

// wakeExports tells this instance's exporter a new export is queued.
func (s *Service) wakeExports() {
	select {
	case s.exportsQueued <- struct{}{}:
	default:
	}
}

// ExportsQueued receives when this instance queued an export.
func (s *Service) ExportsQueued() <-chan struct{} { return s.exportsQueued }

// ExportFile finds a completed export's file of the caller's: its type
// and size, its parts then read by Lists().FilePart.
func (s *Service) ExportFile(ctx context.Context, listID, exportID, name string) (typ string, size int64, err error) {
	if err := s.meter.Admit(ctx, ReadList); err != nil {
		return "", 0, err
	}
	if err := validListID("listId", listID); err != nil {
		return "", 0, err
	}
	if err := validListID("exportId", exportID); err != nil {
		return "", 0, err
	}
	e, err := s.lists().Export(ctx, s.owner(ctx), listID, exportID)
	if err != nil {
		return "", 0, listErr(err)
	}
	typ = ExportFileType(name)
	if typ == "" || e.Status != "COMPLETED" || !slices.Contains(e.Files, typ) {
		return "", 0, fault.E(fault.NotFound, "file not found", nil)
	}
	size, _, err = s.lists().FileSize(ctx, exportID, typ)
	return typ, size, err
}

// JSONKind names the JSON a Go type reads, for a sentence about a request
// body ("title must be a JSON string").
func JSONKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a JSON string"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(JSONKind(t.Elem()), "a "), "an ") + "s"
	case reflect.Map, reflect.Struct:
		return "a JSON object"
	}
	return "of the documented type"
}
