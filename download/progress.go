package download

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

// progress reports a month's download: on a terminal a bar per running file
// and one for the whole, redrawn in place; otherwise a summary line every
// interval, so a long download never looks hung in a log.
type progress struct {
	w        io.Writer
	tty      bool
	interval time.Duration
	start    time.Time
	total    atomic.Int64 // bytes this run expects to receive
	received atomic.Int64 // bytes received so far, all files

	mu      sync.Mutex
	running []*fileProgress
	drawn   int // bar lines on screen
	stop    chan struct{}
	done    chan struct{}
}

// fileProgress is one file on its way.
type fileProgress struct {
	name     string
	size     int64
	from     int64        // bytes already on disk when it started
	received atomic.Int64 // bytes received since
	start    time.Time
}

func newProgress(w io.Writer, interval time.Duration) *progress {
	if w == nil {
		w = io.Discard
	}
	if interval <= 0 {
		interval = 5 * time.Second
	}
	p := &progress{w: w, interval: interval, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
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
	p.running = nil
	p.draw(nil)
}

// printf writes a line, above the bars on a terminal.
func (p *progress) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw([]byte(fmt.Sprintf("download: "+format+"\n", args...)))
}

func (p *progress) begin(name string, size, from int64) *fileProgress {
	f := &fileProgress{name: name, size: size, from: from, start: time.Now()}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = append(p.running, f)
	return f
}

func (p *progress) finish(f *fileProgress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, r := range p.running {
		if r == f {
			p.running = append(p.running[:i], p.running[i+1:]...)
			break
		}
	}
	p.draw(nil)
}

// add counts bytes of f as received, for the file and the whole.
func (p *progress) add(f *fileProgress, n int64) {
	f.received.Add(n)
	p.received.Add(n)
}

func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		p.draw(nil)
		return
	}
	if len(p.running) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("download: ")
	b.WriteString(p.summary())
	for i, f := range p.running {
		sep := ", "
		if i == 0 {
			sep = "; running: "
		}
		fmt.Fprintf(&b, "%s%s %.0f%%", sep, f.name, 100*fraction(f.from+f.received.Load(), f.size))
	}
	b.WriteByte('\n')
	_, _ = io.WriteString(p.w, b.String())
}

// summary is the whole run: bytes, share, rate and ETA.
func (p *progress) summary() string {
	got, total := p.received.Load(), p.total.Load()
	el := time.Since(p.start)
	return fmt.Sprintf("%s of %s (%.0f%%), %s, ETA %s", human(got), human(total), 100*fraction(got, total), rate(got, el), eta(got, total-got, el))
}

// draw prints line (if any), then on a terminal the bars. Callers hold mu.
func (p *progress) draw(line []byte) {
	var b bytes.Buffer
	if p.tty && p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", p.drawn)
	}
	b.Write(line)
	p.drawn = 0
	if p.tty && len(p.running) > 0 {
		for _, f := range p.running {
			got := f.from + f.received.Load()
			el := time.Since(f.start)
			fmt.Fprintf(&b, "%-24s %s %s/%s %s ETA %s\n", f.name, bar(fraction(got, f.size)), human(got), human(f.size),
				rate(f.received.Load(), el), eta(f.received.Load(), f.size-got, el))
			p.drawn++
		}
		fmt.Fprintf(&b, "%-24s %s %s\n", "all", bar(fraction(p.received.Load(), p.total.Load())), p.summary())
		p.drawn++
	}
	_, _ = p.w.Write(b.Bytes())
}

func fraction(done, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return min(float64(done)/float64(total), 1)
}

func bar(frac float64) string {
	const width = 30
	n := int(frac * width)
	return "[" + strings.Repeat("=", n) + strings.Repeat(" ", width-n) + "]"
}

func rate(n int64, d time.Duration) string {
	if d <= 0 {
		return "- MB/s"
	}
	return fmt.Sprintf("%.1f MB/s", float64(n)/1e6/d.Seconds())
}

// eta is when remaining bytes are in at the rate of received ones so far.
func eta(received, remaining int64, el time.Duration) string {
	if received <= 0 || remaining <= 0 {
		return "-"
	}
	return (time.Duration(float64(el) * float64(remaining) / float64(received))).Round(time.Second).String()
}
