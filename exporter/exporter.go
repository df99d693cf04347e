// Package exporter runs the exports of lists in the background of `serve`:
// it claims a queued export (any instance may; one runs each), looks up its
// offices as the list's account, writes the EXCEL and JSON_ZIP files to
// temporary files and stores them in the database with the export.
package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/listfile"
	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/cnpjgraph/cnpjgraph/wire"
)

// Options tunes the exporter.
type Options struct {
	// Poll is how often the queue is checked for exports other instances
	// queued (this instance's own wake it at once); 0: 2 s.
	Poll time.Duration
	// Beat is how often a running export records its progress (its
	// heartbeat); 0: 5 s. It must stay well under service.ExportStale.
	Beat time.Duration
	// Retention is how long a completed export's files are kept
	// (LIST_EXPORT_RETENTION_DAYS); 0: forever. They are dropped hourly.
	Retention time.Duration
	Logger    *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.Beat <= 0 {
		o.Beat = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Run runs exports until ctx ends.
func Run(ctx context.Context, svc *service.Service, o Options) {
	o = o.withDefaults()
	tick := time.NewTicker(o.Poll)
	defer tick.Stop()
	var dropped time.Time
	for {
		for ctx.Err() == nil && RunOne(ctx, svc, o) {
		}
		if o.Retention > 0 && time.Since(dropped) >= time.Hour {
			dropped = time.Now()
			DropOldFiles(ctx, svc, o.Retention, o.Logger)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-svc.ExportsQueued():
		}
	}
}

// DropOldFiles deletes the files of exports completed more than retention
// ago.
func DropOldFiles(ctx context.Context, svc *service.Service, retention time.Duration, log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n, err := svc.Lists().DropOldFiles(ctx, time.Now().Add(-retention))
	switch {
	case err != nil && ctx.Err() == nil:
		log.ErrorContext(ctx, "export: dropping old files failed", "err", err)
	case n > 0:
		log.InfoContext(ctx, "export: old files dropped", "parts", n, "retention_days", retention.Hours()/24)
	}
}

// RunOne runs the next queued export, if any, and reports whether there
// was one.
func RunOne(ctx context.Context, svc *service.Service, o Options) bool {
	o = o.withDefaults()
	log := o.Logger
	job, ok, err := svc.ClaimExport(ctx)
	if !ok {
		if err != nil && ctx.Err() == nil {
			log.ErrorContext(ctx, "export: claim failed", "err", err)
		}
		return false
	}
	started := time.Now()
	lists := svc.Lists()
	n := 0
	if err == nil { // else claimed, but its account may not run it
		n, err = run(ctx, svc, job, o.Beat)
		if ctx.Err() == nil {
			svc.SettleExport(job, err)
		}
	}
	switch {
	case ctx.Err() != nil:
		// Stopping: the export's heartbeat goes stale and an instance
		// takes it over from the start.
		log.InfoContext(ctx, "export: interrupted, left to be taken over", "export", job.Export.ID)
	case errors.Is(err, db.ErrExportGone):
		log.InfoContext(ctx, "export: its list was deleted while it ran", "export", job.Export.ID)
	case err != nil:
		reason := failure(err)
		log.WarnContext(ctx, "export: failed", "export", job.Export.ID, "list", job.List.ID, "reason", reason, "err", err)
		if ferr := lists.FailExport(context.WithoutCancel(ctx), job.Export.ID, reason); ferr != nil {
			log.ErrorContext(ctx, "export: recording the failure failed", "export", job.Export.ID, "err", ferr)
		}
	default:
		log.InfoContext(ctx, "export: completed", "export", job.Export.ID, "list", job.List.ID,
			"offices", n, "seconds", time.Since(started).Seconds())
	}
	return true
}

// failure is the reason an export's owner reads: the public message of
// the fault, never an internal error's text.
func failure(err error) string {
	f := fault.Classify(err)
	msg := f.Message
	if f.Kind == fault.ResourceExhausted && f.Required != nil && f.Remaining != nil {
		msg += fmt.Sprintf(": %d required, %d remaining", *f.Required, *f.Remaining)
	}
	if len(f.Constraints) > 0 {
		msg += ": " + strings.Join(f.Constraints, "; ")
	}
	if f.Permission != "" {
		msg += ": the list's account lacks " + f.Permission
	}
	return msg
}

// run exports job, returning how many offices the files hold.
func run(ctx context.Context, svc *service.Service, job service.ExportJob, beat time.Duration) (int, error) {
	lists := svc.Lists()
	id := job.Export.ID
	ids, err := svc.ExportTaxIDs(job)
	if err != nil {
		return 0, err
	}
	excelFile, err := os.CreateTemp("", "cnpjgraph-export-*.xlsx")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.Remove(excelFile.Name()); _ = excelFile.Close() }()
	zipFile, err := os.CreateTemp("", "cnpjgraph-export-*.zip")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.Remove(zipFile.Name()); _ = zipFile.Close() }()

	excel, err := listfile.NewExcel(excelFile)
	if err != nil {
		return 0, err
	}
	// Its sheets' temporary files go only with Close: on a failure too
	// (a second Close, after the one below, does nothing).
	defer func() { _ = excel.Close() }()
	zip := listfile.NewJSONZip(zipFile)
	last := time.Now()
	written := 0
	var body []byte
	for i, taxID := range ids {
		if ctx.Err() != nil {
			return written, ctx.Err()
		}
		if time.Since(last) >= beat {
			if err := lists.MarkExport(ctx, id, "PROCESSING", 0.9*float64(i)/float64(len(ids))); err != nil {
				return written, err
			}
			last = time.Now()
		}
		o, err := svc.ExportOffice(job, taxID)
		if err != nil && fault.Classify(err).Kind == fault.NotFound {
			continue // no longer in the registry: left out of the files
		}
		if err != nil {
			return written, err
		}
		if body, err = wire.MarshalOffice(body[:0], o); err != nil {
			return written, err
		}
		if err := excel.Add(wire.OfficeOf(o)); err != nil {
			return written, err
		}
		if err := zip.Add(taxID, body); err != nil {
			return written, err
		}
		written++
	}
	if err := lists.MarkExport(ctx, id, "EXPORTING", 0.9); err != nil {
		return written, err
	}
	if err := excel.Close(); err != nil {
		return written, err
	}
	if err := zip.Close(); err != nil {
		return written, err
	}
	var files []db.ExportFile
	for _, f := range []struct {
		typ  string
		file *os.File
	}{{service.FileExcel, excelFile}, {service.FileJSONZip, zipFile}} {
		if _, err := f.file.Seek(0, 0); err != nil {
			return written, err
		}
		files = append(files, db.ExportFile{Type: f.typ, Body: f.file})
	}
	return written, lists.CompleteExport(ctx, id, files)
}
