// Package progress shows long work as it goes, for the import and the
// download alike: on a terminal, live bars kept below the log lines and
// redrawn in place; elsewhere (a log file, a journal) status lines every
// interval, so long work never looks hung.
package progress

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Status returns the lines that show where the work is: the bars when tty
// is true, else the lines a log gets every interval (none: nothing to
// say). The Board calls it with its lock held.
type Status func(tty bool) []string

// Board writes lines to w and keeps the status under them.
type Board struct {
	w        io.Writer
	tty      bool
	interval time.Duration
	status   Status

	mu    sync.Mutex
	drawn int // bar lines on screen below the log
	stop  chan struct{}
	done  chan struct{}
}

// Start returns a Board over w (nil: nothing is written) that shows status
// every interval (0: 5s) in a log, five times a second on a terminal.
func Start(w io.Writer, interval time.Duration, status Status) *Board {
	if w == nil {
		w = io.Discard
	}
	if interval <= 0 {
		interval = 5 * time.Second
	}
	f, ok := w.(*os.File)
	return start(w, interval, status, ok && term.IsTerminal(int(f.Fd())))
}

func start(w io.Writer, interval time.Duration, status Status, tty bool) *Board {
	b := &Board{w: w, interval: interval, status: status, tty: tty, stop: make(chan struct{}), done: make(chan struct{})}
	if tty {
		b.interval = 200 * time.Millisecond
	}
	go b.loop()
	return b
}

// TTY says whether the board draws bars (w is a terminal).
func (b *Board) TTY() bool { return b.tty }

func (b *Board) loop() {
	defer close(b.done)
	t := time.NewTicker(b.interval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.tick()
		}
	}
}

func (b *Board) tick() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tty {
		b.draw(nil)
		return
	}
	var out bytes.Buffer
	for _, l := range b.status(false) {
		out.WriteString(l)
		out.WriteByte('\n')
	}
	_, _ = b.w.Write(out.Bytes())
}

// Do runs change with the board's lock held (where the status reads what
// it changes), writes the lines it returns and redraws the bars.
func (b *Board) Do(change func() []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.draw(change())
}

// Printf writes a line, above the bars on a terminal.
func (b *Board) Printf(format string, args ...any) {
	b.Do(func() []string { return []string{fmt.Sprintf(format, args...)} })
}

// Close stops the status and takes the bars off the screen.
func (b *Board) Close() {
	close(b.stop)
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clear(&bytes.Buffer{}, true)
}

// draw writes lines, then on a terminal the bars in place of the last ones.
// Callers hold mu.
func (b *Board) draw(lines []string) {
	var out bytes.Buffer
	b.clear(&out, false)
	for _, l := range lines {
		out.WriteString(l)
		out.WriteByte('\n')
	}
	if b.tty {
		for _, l := range b.status(true) {
			out.WriteString(l)
			out.WriteByte('\n')
			b.drawn++
		}
	}
	_, _ = b.w.Write(out.Bytes())
}

// clear moves the cursor up over the bars drawn last and erases them
// (written at once when flush).
func (b *Board) clear(out *bytes.Buffer, flush bool) {
	if b.tty && b.drawn > 0 {
		fmt.Fprintf(out, "\x1b[%dA\x1b[J", b.drawn)
	}
	b.drawn = 0
	if flush && out.Len() > 0 {
		_, _ = b.w.Write(out.Bytes())
	}
}

// Fraction is done of total, within [0, 1]; 0 when total is unknown.
func Fraction(done, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return min(float64(done)/float64(total), 1)
}

// Bar draws a fraction as a bar 30 characters wide between brackets.
func Bar(frac float64) string {
	const width = 30
	n := int(min(max(frac, 0), 1) * width)
	return "[" + strings.Repeat("=", n) + strings.Repeat(" ", width-n) + "]"
}

// ETA is how long the rest takes at the pace so far: done of done+left in
// elapsed. "-" when nothing is done yet or nothing is left.
func ETA(done, left int64, elapsed time.Duration) string {
	if done <= 0 || left <= 0 {
		return "-"
	}
	return time.Duration(float64(elapsed) * float64(left) / float64(done)).Round(time.Second).String()
}
