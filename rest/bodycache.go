package rest

import (
	"container/list"
	"sync"

	"golang.org/x/sync/singleflight"
)

// bodyCache keeps rendered answers that only change with the snapshot: the
// company lookup of a company with thousands of offices costs milliseconds
// of SQL and JSON, and the same company is asked again and again. Entries
// carry the snapshot id they were rendered from, so an import makes them
// stale at once; the least recently used go when the byte budget is spent.
type bodyCache struct {
	mu     sync.Mutex
	budget int
	used   int
	order  *list.List // of *bodyEntry, most recent first
	byKey  map[string]*list.Element
	fill   singleflight.Group // concurrent misses of one key render once
}

type bodyEntry struct {
	key      string
	snapshot int64
	body     []byte
}

func newBodyCache(budget int) *bodyCache {
	return &bodyCache{budget: budget, order: list.New(), byKey: make(map[string]*list.Element)}
}

// get returns the body cached for key from snapshot, if any.
func (c *bodyCache) get(key string, snapshot int64) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*bodyEntry)
	if e.snapshot != snapshot {
		c.remove(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.body, true
}

// put caches body; bodies larger than an eighth of the budget are not kept.
func (c *bodyCache) put(key string, snapshot int64, body []byte) {
	if c == nil || len(body) > c.budget/8 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.remove(el)
	}
	c.byKey[key] = c.order.PushFront(&bodyEntry{key: key, snapshot: snapshot, body: body})
	c.used += len(body)
	for c.used > c.budget {
		c.remove(c.order.Back())
	}
}

func (c *bodyCache) remove(el *list.Element) {
	e := el.Value.(*bodyEntry)
	c.order.Remove(el)
	delete(c.byKey, e.key)
	c.used -= len(e.body)
}
