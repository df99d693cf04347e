package rest

import "testing"

func TestBodyCache(t *testing.T) {
	c := newBodyCache(80)
	c.put("a", 1, []byte("0123456789"))
	if b, ok := c.get("a", 1); !ok || string(b) != "0123456789" {
		t.Fatalf("get a = %q, %v", b, ok)
	}
	if _, ok := c.get("a", 2); ok {
		t.Fatal("an answer of another snapshot must not be served")
	}
	if _, ok := c.get("a", 1); ok {
		t.Fatal("a stale entry is dropped when found")
	}
	c.put("big", 1, make([]byte, 11)) // over an eighth of the budget
	if _, ok := c.get("big", 1); ok {
		t.Fatal("bodies over an eighth of the budget are not kept")
	}
	for _, k := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"} {
		c.put(k, 1, []byte("0123456789"))
	}
	if _, ok := c.get("1", 1); ok {
		t.Fatal("the least recently used entry goes when the budget is spent")
	}
	if _, ok := c.get("9", 1); !ok || c.used > c.budget {
		t.Fatalf("recent entry missing or budget exceeded: used %d", c.used)
	}
}
