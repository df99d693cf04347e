package service

import (
	"sync/atomic"

	"github.com/cnpjgraph/cnpjgraph/internal/lru"
)

// fetchLogBytes bounds the answers fetchLog keeps: the last few thousand
// online answers, far more than end within one request's lifetime.
const fetchLogBytes = 4 << 20

// fetchLog remembers the latest online answers by portal and tax id, each
// numbered in the order the fetches ended. A request marks the log before
// it reads the overlay; a fetch numbered after its mark ended after that
// read, so the request may take its answer instead of asking the source
// again (see fetch).
type fetchLog struct {
	ended   atomic.Uint64 // fetches ended so far
	answers *lru.Cache[string, fetchEnd]
}

type fetchEnd struct {
	n    uint64 // the fetch's number, in the order fetches ended
	body []byte
}

func newFetchLog() fetchLog {
	return fetchLog{answers: lru.New[string, fetchEnd](fetchLogBytes)}
}

// mark is the number of fetches ended so far.
func (l *fetchLog) mark() uint64 { return l.ended.Load() }

// add records a fetch that ended, after its answer was kept in the overlay.
func (l *fetchLog) add(key string, body []byte) {
	l.answers.Add(key, fetchEnd{n: l.ended.Add(1), body: body}, len(body))
}

// since returns the answer of the last fetch of key when it ended after
// mark.
func (l *fetchLog) since(key string, mark uint64) ([]byte, bool) {
	e, ok := l.answers.Get(key)
	if !ok || e.n <= mark {
		return nil, false
	}
	return e.body, true
}
