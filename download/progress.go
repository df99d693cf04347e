package download

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cnpjgraph/cnpjgraph/internal/progress"
)

// monthProgress reports a month's download: a bar per running file and one
// for the whole on a terminal, else a summary line every interval.
type monthProgress struct {
	board    *progress.Board
	start    time.Time
	total    atomic.Int64    // bytes this run expects to receive
	received atomic.Int64    // bytes received so far, all files
	running  []*fileProgress // guarded by the board (Do)
}

// fileProgress is one file on its way.
type fileProgress struct {
	name     string
	size     int64
	from     int64        // bytes already on disk when it started
	received atomic.Int64 // bytes received since
	start    time.Time
}

func newProgress(w io.Writer, interval time.Duration) *monthProgress {
	p := &monthProgress{start: time.Now()}
	p.board = progress.Start(w, interval, p.status)
	return p
}

// close ends the report; files still running (a failed run) are dropped.
func (p *monthProgress) close() {
	p.board.Do(func() []string { p.running = nil; return nil })
	p.board.Close()
}

// printf writes a line, above the bars on a terminal.
func (p *monthProgress) printf(format string, args ...any) {
	p.board.Printf("download: "+format, args...)
}

func (p *monthProgress) begin(name string, size, from int64) *fileProgress {
	f := &fileProgress{name: name, size: size, from: from, start: time.Now()}
	p.board.Do(func() []string { p.running = append(p.running, f); return nil })
	return f
}

func (p *monthProgress) finish(f *fileProgress) {
	p.board.Do(func() []string {
		p.running = slices.DeleteFunc(p.running, func(r *fileProgress) bool { return r == f })
		return nil
	})
}

// add counts bytes of f as received, for the file and the whole.
func (p *monthProgress) add(f *fileProgress, n int64) {
	f.received.Add(n)
	p.received.Add(n)
}

// status is, on a terminal, a bar per running file and one for the whole;
// in a log, one line: the whole and each running file's share.
func (p *monthProgress) status(tty bool) []string {
	if len(p.running) == 0 {
		return nil
	}
	if !tty {
		var b strings.Builder
		b.WriteString("download: ")
		b.WriteString(p.summary())
		for i, f := range p.running {
			sep := ", "
			if i == 0 {
				sep = "; running: "
			}
			fmt.Fprintf(&b, "%s%s %.0f%%", sep, f.name, 100*progress.Fraction(f.from+f.received.Load(), f.size))
		}
		return []string{b.String()}
	}
	lines := make([]string, 0, len(p.running)+1)
	for _, f := range p.running {
		got := f.from + f.received.Load()
		el := time.Since(f.start)
		lines = append(lines, fmt.Sprintf("%-24s %s %s/%s %s ETA %s", f.name, progress.Bar(progress.Fraction(got, f.size)),
			human(got), human(f.size), rate(f.received.Load(), el), progress.ETA(f.received.Load(), f.size-got, el)))
	}
	return append(lines, fmt.Sprintf("%-24s %s %s", "all", progress.Bar(progress.Fraction(p.received.Load(), p.total.Load())), p.summary()))
}

// summary is the whole run: bytes, share, rate and ETA.
func (p *monthProgress) summary() string {
	got, total := p.received.Load(), p.total.Load()
	el := time.Since(p.start)
	return fmt.Sprintf("%s of %s (%.0f%%), %s, ETA %s", human(got), human(total), 100*progress.Fraction(got, total),
		rate(got, el), progress.ETA(got, total-got, el))
}

func rate(n int64, d time.Duration) string {
	if d <= 0 {
		return "- MB/s"
	}
	return fmt.Sprintf("%.1f MB/s", float64(n)/1e6/d.Seconds())
}
