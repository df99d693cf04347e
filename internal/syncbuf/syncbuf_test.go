package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestWriteWhileReading: writers and a reader at once (go test -race
// checks the locking); every write lands whole.
func TestWriteWhileReading(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("line\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if n := strings.Count(b.String(), "line\n"); n != 400 || len(b.String()) != 400*len("line\n") {
		t.Fatalf("%d lines, %d bytes: want 400 whole lines", n, len(b.String()))
	}
}
