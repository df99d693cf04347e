// Package lru is a least-recently-used cache bounded by the total cost of
// its entries (bytes for rendered answers and map tiles, 1 per geocoder
// answer). Safe for concurrent use.
package lru

import (
	"container/list"
	"sync"
)

// Cache maps keys to values, evicting the least recently used entries when
// the total cost passes the limit.
type Cache[K comparable, V any] struct {
	mu      sync.Mutex
	limit   int
	cost    int
	order   *list.List // front: most recently used
	entries map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key   K
	value V
	cost  int
}

// New returns a cache holding at most limit in total cost; a limit of 0
// or less keeps nothing.
func New[K comparable, V any](limit int) *Cache[K, V] {
	return &Cache[K, V]{limit: limit, order: list.New(), entries: map[K]*list.Element{}}
}

// Get returns the value of key and marks it used. A nil cache holds nothing.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	var zero V
	if c == nil {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*entry[K, V]).value, true
	}
	return zero, false
}

// Add stores value, evicting the least recently used entries until the
// total cost is within the limit. An entry costlier than the limit is not
// kept at all.
func (c *Cache[K, V]) Add(key K, value V, cost int) {
	if c == nil || c.limit <= 0 || cost > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		old := e.Value.(*entry[K, V])
		c.cost += cost - old.cost
		old.value, old.cost = value, cost
		c.order.MoveToFront(e)
	} else {
		c.entries[key] = c.order.PushFront(&entry[K, V]{key: key, value: value, cost: cost})
		c.cost += cost
	}
	for c.cost > c.limit {
		e := c.order.Back()
		old := e.Value.(*entry[K, V])
		c.order.Remove(e)
		delete(c.entries, old.key)
		c.cost -= old.cost
	}
}

// Len is the number of entries.
func (c *Cache[K, V]) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// Limit is the cache's bound on the total cost.
func (c *Cache[K, V]) Limit() int {
	if c == nil {
		return 0
	}
	return c.limit
}
