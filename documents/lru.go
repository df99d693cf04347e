package documents

import (
	"container/list"
	"sync"
)

// lru is a least-recently-used cache bounded by the total cost of its
// entries (bytes for tiles, 1 per geocoder answer). Safe for concurrent use.
type lru[V any] struct {
	mu      sync.Mutex
	limit   int
	cost    int
	order   *list.List // front: most recently used
	entries map[string]*list.Element
}

type lruEntry[V any] struct {
	key   string
	value V
	cost  int
}

func newLRU[V any](limit int) *lru[V] {
	return &lru[V]{limit: limit, order: list.New(), entries: map[string]*list.Element{}}
}

func (c *lru[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruEntry[V]).value, true
	}
	var zero V
	return zero, false
}

// add stores value, evicting the least recently used entries until the
// total cost is within the limit. An entry costlier than the limit is not
// kept at all.
func (c *lru[V]) add(key string, value V, cost int) {
	if c.limit <= 0 || cost > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		old := e.Value.(*lruEntry[V])
		c.cost += cost - old.cost
		old.value, old.cost = value, cost
		c.order.MoveToFront(e)
	} else {
		c.entries[key] = c.order.PushFront(&lruEntry[V]{key: key, value: value, cost: cost})
		c.cost += cost
	}
	for c.cost > c.limit {
		e := c.order.Back()
		old := e.Value.(*lruEntry[V])
		c.order.Remove(e)
		delete(c.entries, old.key)
		c.cost -= old.cost
	}
}

func (c *lru[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
