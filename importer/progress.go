package importer

import (
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/cnpjgraph/cnpjgraph/internal/progress"
)

// fileProgress counts one file's bytes (decompressed) and rows as they go.
type fileProgress struct {
	name  string
	total int64
	bytes atomic.Int64
	rows  atomic.Int64
	start time.Time
}

// importProgress reports what the import is doing: a bar per running file
// on a terminal, else a line per running file every few seconds.
type importProgress struct {
	board   *progress.Board
	running []*fileProgress // guarded by the board (Do)
}

func newProgress(w io.Writer) *importProgress {
	p := &importProgress{}
	p.board = progress.Start(w, 0, func(tty bool) []string {
		lines := make([]string, 0, len(p.running))
		for _, f := range p.running {
			lines = append(lines, f.status(tty))
		}
		return lines
	})
	return p
}

func (p *importProgress) close() { p.board.Close() }

// printf writes a line, above the bars on a terminal.
func (p *importProgress) printf(format string, args ...any) {
	p.board.Printf("import: "+format, args...)
}

func (p *importProgress) begin(name string, total int64) *fileProgress {
	f := &fileProgress{name: name, total: total, start: time.Now()}
	p.board.Do(func() []string {
		p.running = append(p.running, f)
		if p.board.TTY() {
			return nil
		}
		return []string{fmt.Sprintf("import: loading %s (%s)", name, mib(total))}
	})
	return f
}

func (p *importProgress) finish(f *fileProgress) {
	d := time.Since(f.start)
	p.board.Do(func() []string {
		p.running = slices.DeleteFunc(p.running, func(r *fileProgress) bool { return r == f })
		return []string{fmt.Sprintf("import: loaded %s: %d rows in %s (%s rows/s)", f.name, f.rows.Load(), d.Round(time.Millisecond), rate(f.rows.Load(), d))}
	})
}

// status is one line about a running file: bytes, rows, rate and ETA; on a
// terminal with its bar, in a log with its prefix.
func (f *fileProgress) status(tty bool) string {
	done, rows := f.bytes.Load(), f.rows.Load()
	el := time.Since(f.start)
	frac := progress.Fraction(done, f.total)
	head := "import: " + f.name
	if tty {
		head = fmt.Sprintf("%-24s %s", f.name, progress.Bar(frac))
	}
	return fmt.Sprintf("%s %3.0f%% %s/%s %d rows %s rows/s ETA %s", head, frac*100, mib(done), mib(f.total), rows,
		rate(rows, el), progress.ETA(done, f.total-done, el))
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func rate(rows int64, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(rows)/d.Seconds())
}
