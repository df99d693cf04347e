package main

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/lib/pq"
)

// TestSessionSettings opens the serving pool's connection as serve does
// and reads the settings back from PostgreSQL: the defaults apply, and a
// setting the operator put in DATABASE_URL wins; URL and key=value forms.
func TestSessionSettings(t *testing.T) {
	url := dbtest.NewURL(t)
	show := func(dsn string) map[string]string {
		t.Helper()
		d, err := db.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = d.Close() }()
		got := map[string]string{}
		for _, name := range []string{"statement_timeout", "plan_cache_mode", "synchronous_commit"} {
			var v string
			if err := d.Get(&v, "SELECT current_setting($1)", name); err != nil {
				t.Fatal(err)
			}
			got[name] = v
		}
		return got
	}
	want := map[string]string{"statement_timeout": "11s", "plan_cache_mode": "force_generic_plan", "synchronous_commit": "off"}
	if got := show(withSessionSettings(url, 11*time.Second)); !maps.Equal(got, want) {
		t.Errorf("defaults: %v, want %v", got, want)
	}
	kv, err := pq.ParseURL(url) // the key=value form of the same DSN
	if err != nil {
		t.Fatal(err)
	}
	if got := show(withSessionSettings(kv, 11*time.Second)); !maps.Equal(got, want) {
		t.Errorf("defaults, key=value DSN: %v, want %v", got, want)
	}
	want = map[string]string{"statement_timeout": "2s", "plan_cache_mode": "auto", "synchronous_commit": "local"}
	given := url + "&statement_timeout=2000&plan_cache_mode=auto&synchronous_commit=local"
	if got := show(withSessionSettings(given, 11*time.Second)); !maps.Equal(got, want) {
		t.Errorf("operator's settings: %v, want %v", got, want)
	}
}
