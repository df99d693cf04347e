package importer

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// fileProgress counts one file's bytes (decompressed) and rows as they go.
type fileProgress struct {
	name  string
	total int64
	bytes atomic.Int64
	rows  atomic.Int64
	start time.Time
	end   time.Time
}

// progress reports what the import is doing: on a terminal a bar per
// running file, redrawn in place; otherwise a line per running file every
// few seconds, so a long import never looks hung in a log.
type progress struct {
	w        io.Writer
	tty      bool
	interval time.Duration

	mu       sync.Mutex
	running  []*fileProgress
	finished []*fileProgress // not yet printed
	drawn    int             // bar lines on screen below the log
	stop     chan struct{}
	done     chan struct{}
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, interval: 5 * time.Second, stop: make(chan struct{}), done: make(chan struct{})}
	if w == nil {
		p.w = io.Discard
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty, p.interval = true, 200*time.Millisecond
	}
	go p.loop()
	return p
}

func (p *progress) loop() {
	defer close(p.done)
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.tick()
		}
	}
}

func (p *progress) close() {
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw(nil)
}

// printf writes a line, above the bars on a terminal.
func (p *progress) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw([]byte(fmt.Sprintf("import: "+format+"\n", args...)))
}

func (p *progress) begin(name string, total int64) *fileProgress {
	f := &fileProgress{name: name, total: total, start: time.Now()}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = append(p.running, f)
	if !p.tty {
		_, _ = fmt.Fprintf(p.w, "import: loading %s (%s)\n", name, mib(total))
	}
	return f
}

func (p *progress) finish(f *fileProgress) {
	f.end = time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, r := range p.running {
		if r == f {
			p.running = append(p.running[:i], p.running[i+1:]...)
			break
		}
	}
	p.finished = append(p.finished, f)
	p.draw(nil)
}

func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		p.draw(nil)
		return
	}
	for _, f := range p.running {
		_, _ = fmt.Fprintf(p.w, "import: %s\n", f.status(false))
	}
}

// draw prints line (if any) and the finished files' lines, then the bars of
// the running files on a terminal. Callers hold mu.
func (p *progress) draw(line []byte) {
	var b bytes.Buffer
	if p.tty && p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", p.drawn)
	}
	b.Write(line)
	for _, f := range p.finished {
		d := f.end.Sub(f.start)
		fmt.Fprintf(&b, "import: loaded %s: %d rows in %s (%s rows/s)\n", f.name, f.rows.Load(), d.Round(time.Millisecond), rate(f.rows.Load(), d))
	}
	p.finished = p.finished[:0]
	p.drawn = 0
	if p.tty {
		for _, f := range p.running {
			b.WriteString(f.status(true))
			b.WriteByte('\n')
			p.drawn++
		}
	}
	_, _ = p.w.Write(b.Bytes())
}

// status is one line about a running file: bytes, rows, rate and ETA.
func (f *fileProgress) status(bar bool) string {
	done, rows := f.bytes.Load(), f.rows.Load()
	el := time.Since(f.start)
	frac := 0.0
	if f.total > 0 {
		frac = min(float64(done)/float64(f.total), 1)
	}
	eta := "?"
	if frac > 0.001 {
		eta = (time.Duration(float64(el)/frac) - el).Round(time.Second).String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s ", f.name)
	if bar {
		const width = 30
		n := int(frac * width)
		b.WriteByte('[')
		b.WriteString(strings.Repeat("=", n))
		b.WriteString(strings.Repeat(" ", width-n))
		b.WriteString("] ")
	}
	fmt.Fprintf(&b, "%3.0f%% %s/%s %d rows %s rows/s ETA %s", frac*100, mib(done), mib(f.total), rows, rate(rows, el), eta)
	return b.String()
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func rate(rows int64, d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(rows)/d.Seconds())
}
