package logbuf

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder counts the writes it gets.
type recorder struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes++
	return r.buf.Write(p)
}

func (r *recorder) state() (string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String(), r.writes
}

// TestBuffersLines: lines are held until the interval, the buffer filling
// or Close; none is split or lost; a line larger than the buffer is
// written whole.
func TestBuffersLines(t *testing.T) {
	r := &recorder{}
	w := New(r, time.Hour, 64)
	for i := 0; i < 3; i++ {
		_, _ = w.Write([]byte("line of twenty bytes\n"))
	}
	if s, n := r.state(); n != 0 || s != "" {
		t.Fatalf("written before the buffer filled: %q in %d writes", s, n)
	}
	_, _ = w.Write([]byte("the fourth line\n")) // 63 + 16 > 64: the three go out first
	if s, n := r.state(); n != 1 || strings.Count(s, "\n") != 3 {
		t.Fatalf("after overflow: %q in %d writes", s, n)
	}
	long := strings.Repeat("x", 100) + "\n"
	_, _ = w.Write([]byte(long))
	if s, n := r.state(); n != 3 || !strings.HasSuffix(s, "the fourth line\n"+long) {
		t.Fatalf("a long line: %q in %d writes", s, n)
	}
	_, _ = w.Write([]byte("last\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if s, _ := r.state(); !strings.HasSuffix(s, "last\n") {
		t.Fatalf("Close lost the last line: %q", s)
	}
	_, _ = w.Write([]byte("after close\n"))
	if s, _ := r.state(); !strings.HasSuffix(s, "after close\n") {
		t.Fatalf("a write after Close was held: %q", s)
	}
}

// TestFlushesEveryInterval: a quiet log still reaches the writer.
func TestFlushesEveryInterval(t *testing.T) {
	r := &recorder{}
	w := New(r, 10*time.Millisecond, 1<<16)
	defer w.Close()
	_, _ = w.Write([]byte("one line\n"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		if s, _ := r.state(); s == "one line\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the line was not written within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestConcurrentWrites: lines written at once arrive whole (run with -race).
func TestConcurrentWrites(t *testing.T) {
	r := &recorder{}
	w := New(r, time.Millisecond, 256)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				_, _ = w.Write([]byte("0123456789abcdef\n"))
			}
		}()
	}
	wg.Wait()
	_ = w.Close()
	s, _ := r.state()
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if l != "0123456789abcdef" {
			t.Fatalf("a split or mixed line: %q", l)
		}
	}
	if n := strings.Count(s, "\n"); n != 1600 {
		t.Fatalf("%d lines, want 1600", n)
	}
}
