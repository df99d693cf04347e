package upstream

import (
	"sync"
	"time"
)

// breaker is a circuit breaker for one portal. After failures consecutive
// failures it opens: calls fail fast for cooldown, so a dead source costs
// requests nothing and gets no traffic. Then it is half-open: one probe goes
// through; its success closes the breaker, its failure opens it again.
type breaker struct {
	failures int           // consecutive failures that open it; 0: never opens
	cooldown time.Duration // how long it stays open
	now      func() time.Time

	mu        sync.Mutex
	failed    int       // consecutive failures so far
	openUntil time.Time // zero: closed
	probing   bool      // a half-open probe is in flight
}

// allow reports whether a call may go out now. A call that is allowed must
// report its outcome with done.
func (b *breaker) allow() bool {
	if b.failures <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openUntil.IsZero() {
		return true
	}
	if b.now().Before(b.openUntil) || b.probing {
		return false
	}
	b.probing = true
	return true
}

// done records the outcome of an allowed call.
func (b *breaker) done(ok bool) {
	if b.failures <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probing = false
	if ok {
		b.failed = 0
		b.openUntil = time.Time{}
		return
	}
	b.failed++
	if b.failed >= b.failures || !b.openUntil.IsZero() {
		b.openUntil = b.now().Add(b.cooldown)
	}
}
