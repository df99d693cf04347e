package auth

import (
	"sync"
	"time"
)

// ttlCache remembers resolved credentials for a short time so that a request
// does not cost a SQL round trip. Sharded to keep lock contention low, and
// bounded: a full shard first forgets expired entries, then arbitrary ones.
type ttlCache[K comparable] struct {
	ttl    time.Duration
	now    func() time.Time
	hash   func(K) uint64
	shards [cacheShards]cacheShard[K]
}

const (
	cacheShards   = 32
	cacheShardCap = 2048
)

type cacheShard[K comparable] struct {
	mu sync.RWMutex
	m  map[K]cacheEntry
}

type cacheEntry struct {
	id      identity
	expires int64 // unix nanoseconds
}

func newTTLCache[K comparable](ttl time.Duration, now func() time.Time, hash func(K) uint64) *ttlCache[K] {
	c := &ttlCache[K]{ttl: ttl, now: now, hash: hash}
	for i := range c.shards {
		c.shards[i].m = make(map[K]cacheEntry)
	}
	return c
}

func (c *ttlCache[K]) get(k K) (identity, bool) {
	if c.ttl <= 0 {
		return identity{}, false
	}
	sh := &c.shards[c.hash(k)%cacheShards]
	sh.mu.RLock()
	e, ok := sh.m[k]
	sh.mu.RUnlock()
	if !ok || c.now().UnixNano() >= e.expires {
		return identity{}, false
	}
	return e.id, true
}

func (c *ttlCache[K]) put(k K, id identity) {
	if c.ttl <= 0 {
		return
	}
	now := c.now().UnixNano()
	sh := &c.shards[c.hash(k)%cacheShards]
	sh.mu.Lock()
	if len(sh.m) >= cacheShardCap {
		for key, e := range sh.m {
			if now >= e.expires {
				delete(sh.m, key)
			}
		}
		for key := range sh.m {
			if len(sh.m) < cacheShardCap/2 {
				break
			}
			delete(sh.m, key)
		}
	}
	sh.m[k] = cacheEntry{id: id, expires: now + int64(c.ttl)}
	sh.mu.Unlock()
}
