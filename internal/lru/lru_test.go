package lru

import "testing"

func TestEvictsByCost(t *testing.T) {
	c := New[string, string](10)
	c.Add("a", "A", 4)
	c.Add("b", "B", 4)
	c.Get("a") // a is now the most recently used
	c.Add("c", "C", 4)
	if _, ok := c.Get("b"); ok {
		t.Error("b should have been evicted")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("%s evicted", k)
		}
	}
	c.Add("huge", "H", 11) // costlier than the whole cache: not kept
	if _, ok := c.Get("huge"); ok || c.Len() != 2 {
		t.Errorf("len %d after an oversized entry", c.Len())
	}
	c.Add("a", "AA", 9) // replacing an entry counts its new cost
	if v, ok := c.Get("a"); !ok || v != "AA" || c.Len() != 1 || c.cost != 9 {
		t.Errorf("after replacing a: %q %v len %d cost %d", v, ok, c.Len(), c.cost)
	}
}

func TestNilAndEmpty(t *testing.T) {
	var c *Cache[string, int]
	c.Add("a", 1, 1)
	if _, ok := c.Get("a"); ok || c.Len() != 0 {
		t.Error("a nil cache holds nothing")
	}
	z := New[string, int](0)
	z.Add("a", 1, 1)
	if _, ok := z.Get("a"); ok {
		t.Error("a cache without budget holds nothing")
	}
}
