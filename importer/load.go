package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"golang.org/x/sync/errgroup"
)

// loadCodes reads the dump's code tables into memory, joins the mapping
// tables, and COPYs them; they are small, so one session does it all.
func (r *run) loadCodes(ctx context.Context) error {
	codes := codeTables{}
	for _, k := range []kind{kindActivities, kindNatures, kindReasons, kindRoles, kindCountries, kindMunicipalities} {
		codes[k] = map[string]string{}
	}
	for _, s := range r.sources {
		if !s.kind.codeTable() {
			continue
		}
		fp := r.prog.begin(s.name, s.size)
		rc, err := s.open(&fp.bytes)
		if err != nil {
			r.prog.finish(fp)
			return fmt.Errorf("%s: %w", s.name, err)
		}
		rows, rejected, err := readCodes(rc, codes[s.kind])
		_ = rc.Close()
		fp.rows.Store(int64(rows))
		r.prog.finish(fp)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		for range rejected {
			r.reject(s.name, 0, "expected 2 columns (code;description)")
		}
		if err := r.checkThreshold(s.name, int64(rows), int64(rejected)); err != nil {
			return err
		}
	}
	c, err := r.conn(ctx)
	if err != nil {
		return err
	}
	defer r.release(c)
	for _, k := range []kind{kindActivities, kindNatures, kindReasons, kindRoles, kindCountries, kindMunicipalities} {
		table, cols, _ := codeTable(k)
		n, err := withCopy(ctx, c, table, cols, writeCodes(k, codes[k], r.tabmun, r.countries))
		if err != nil {
			return fmt.Errorf("load %s: %w", table, err)
		}
		r.addCount(table, n)
	}
	return nil
}

// loadBig streams the big files: one COPY per table (COPY FREEZE needs the
// table emptied in the same transaction), several tables at once, the
// largest first so the streams finish together.
func (r *run) loadBig(ctx context.Context) error {
	groups := map[kind][]source{}
	size := map[kind]int64{}
	var kinds []kind
	for _, s := range r.sources {
		if s.kind.codeTable() {
			continue
		}
		if groups[s.kind] == nil {
			kinds = append(kinds, s.kind)
		}
		groups[s.kind] = append(groups[s.kind], s)
		size[s.kind] += s.size
	}
	sort.SliceStable(kinds, func(i, j int) bool { return size[kinds[i]] > size[kinds[j]] })
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(r.opts.Streams)
	for _, k := range kinds {
		g.Go(func() error { return r.loadTable(ctx, k, groups[k]) })
	}
	return g.Wait()
}

// loadTable COPYs every file of one kind; members files feed two tables at
// once, over two sessions.
func (r *run) loadTable(ctx context.Context, k kind, files []source) error {
	c, err := r.conn(ctx)
	if err != nil {
		return err
	}
	defer r.release(c)
	// each runs write over every record of every file.
	each := func(write func(f *fileLoad, rec [][]byte) error, ws ...*copyWriter) error {
		for _, s := range files {
			if err := r.loadFile(s, func(f *fileLoad) error {
				return f.each(func(rec [][]byte) error { return write(f, rec) }, ws...)
			}); err != nil {
				return err
			}
		}
		return nil
	}
	var n int64
	switch k {
	case kindCompanies:
		n, err = withCopy(ctx, c, "company_rows", companyColumns, func(w *copyWriter) error {
			return each(func(_ *fileLoad, rec [][]byte) error { return company(rec, w) }, w)
		})
		r.addCount("companies", n)
	case kindOffices:
		o := &officeRow{special: map[string]struct{}{}}
		n, err = withCopy(ctx, c, "offices", officeColumns, func(w *copyWriter) error {
			return each(func(_ *fileLoad, rec [][]byte) error { return o.write(rec, w) }, w)
		})
		r.addCount("offices", n)
		r.mu.Lock()
		for t := range o.special {
			r.special[t] = struct{}{}
		}
		r.mu.Unlock()
	case kindSimples:
		n, err = withCopy(ctx, c, "simples", simplesColumns, func(w *copyWriter) error {
			return each(func(_ *fileLoad, rec [][]byte) error { return simplesRow(rec, w) }, w)
		})
		r.addCount("simples", n)
	case kindMembers:
		pc, cerr := r.conn(ctx)
		if cerr != nil {
			return cerr
		}
		defer r.release(pc)
		n, err = withCopy(ctx, c, "members", memberColumns, func(mw *copyWriter) error {
			_, err := withCopy(ctx, pc, "person_rows", personRowColumns, func(pw *copyWriter) error {
				return each(func(f *fileLoad, rec [][]byte) error { return memberRow(rec, f.rr.Line(), mw, pw) }, mw, pw)
			})
			return err
		})
		r.addCount("members", n)
	}
	return err
}

// loadFile opens one file, runs body over it, and checks its rejects.
func (r *run) loadFile(s source, body func(*fileLoad) error) error {
	fp := r.prog.begin(s.name, s.size)
	defer r.prog.finish(fp)
	rc, err := s.open(&fp.bytes)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	defer func() { _ = rc.Close() }()
	f := &fileLoad{run: r, src: s, rr: newRecordReader(rc), prog: fp}
	if err := body(f); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	return r.checkThreshold(s.name, f.total, f.rejected)
}

// fileLoad walks one file's records.
type fileLoad struct {
	run      *run
	src      source
	rr       *recordReader
	prog     *fileProgress
	total    int64
	rejected int64
}

// each calls write for every record; the first writer gets the row's end,
// the others (if any) have ended their own rows inside write. Rejected rows
// are dropped from the first writer and counted.
func (f *fileLoad) each(write func([][]byte) error, ws ...*copyWriter) error {
	cols := f.src.kind.columns()
	w := ws[0]
	for {
		rec, err := f.rr.Next()
		if errors.Is(err, io.EOF) {
			f.prog.rows.Store(f.total)
			return nil
		}
		if err != nil {
			return err
		}
		f.total++
		if f.total&1023 == 0 {
			f.prog.rows.Store(f.total)
		}
		if len(rec) != cols {
			f.rejected++
			f.run.reject(f.src.name, f.rr.Line(), fmt.Sprintf("expected %d columns, got %d", cols, len(rec)))
			continue
		}
		if err := write(rec); err != nil {
			var re rowError
			if errors.As(err, &re) {
				w.discard()
				f.rejected++
				f.run.reject(f.src.name, f.rr.Line(), re.Error())
				continue
			}
			return err
		}
		if err := w.end(); err != nil {
			return err
		}
		if f.total&4095 == 0 && w.ctx.Err() != nil {
			return w.ctx.Err()
		}
	}
}

func (r *run) reject(file string, line int, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejected.Total++
	r.rejected.Files[file]++
	if len(r.rejected.Samples) < maxSamples {
		r.rejected.Samples = append(r.rejected.Samples, RejectSample{File: file, Line: line, Reason: reason})
	}
	r.log.Debug("row rejected", "file", file, "line", line, "reason", reason)
}

// checkThreshold fails the import when a file rejected too many rows.
func (r *run) checkThreshold(file string, total, rejected int64) error {
	if rejected == 0 {
		return nil
	}
	ratio := float64(rejected) / float64(total)
	if ratio <= r.opts.MaxRejectRatio {
		return nil
	}
	first := ""
	r.mu.Lock()
	for _, s := range r.rejected.Samples {
		if s.File == file {
			first = fmt.Sprintf("; first: line %d: %s", s.Line, s.Reason)
			break
		}
	}
	r.mu.Unlock()
	return fmt.Errorf("%s: %d of %d rows rejected (%.3f%%), above the limit of %.3f%% (--max-rejected %g)%s",
		file, rejected, total, ratio*100, r.opts.MaxRejectRatio*100, r.opts.MaxRejectRatio, first)
}
