package service

import (
	"bytes"
	"errors"
	"sync"
	"testing"
)

// TestAnswerEncoded: an encoding of a kept answer is made once, however
// many requests ask for it at once; a failed one is made again.
func TestAnswerEncoded(t *testing.T) {
	a := &Answer{Body: []byte("plain")}
	var mu sync.Mutex
	made := 0
	upper := func(b []byte) ([]byte, error) {
		mu.Lock()
		made++
		mu.Unlock()
		return bytes.ToUpper(b), nil
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if b, err := a.Encoded("upper", upper); err != nil || string(b) != "PLAIN" {
				t.Errorf("Encoded: %q, %v", b, err)
			}
		})
	}
	wg.Wait()
	if made != 1 {
		t.Errorf("encoded %d times, want once", made)
	}

	failures := 0
	failing := func([]byte) ([]byte, error) { failures++; return nil, errors.New("no") }
	for range 2 {
		if _, err := a.Encoded("failing", failing); err == nil {
			t.Error("a failed encoding was kept")
		}
	}
	if failures != 2 || string(a.Body) != "plain" {
		t.Errorf("%d failures, body %q", failures, a.Body)
	}
}
