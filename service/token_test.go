package service

import (
	"testing"
	"time"
)

// TestTokensSortByTime: a page token is 32 hexadecimal characters, the
// later of two sorts after the earlier (a millisecond apart), and two of
// the same millisecond differ.
func TestTokensSortByTime(t *testing.T) {
	at := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
	a, err := newToken(at)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newToken(at.Add(time.Millisecond))
	c, _ := newToken(at.Add(time.Millisecond))
	for _, tok := range []string{a, b, c} {
		if !validToken(tok) {
			t.Fatalf("token %q is not 32 hexadecimal characters", tok)
		}
	}
	if !(a < b && a < c) || b == c {
		t.Fatalf("tokens %s, %s, %s: want the first below the later two, and those two different", a, b, c)
	}
	if a[:12] != "01a210377680" { // 1,795,568,400,000 ms
		t.Fatalf("token %s does not begin with the time in milliseconds", a)
	}
}
