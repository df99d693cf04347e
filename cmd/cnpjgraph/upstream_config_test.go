package main

import (
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/upstream"
)

func TestUpstreamConfigFromEnv(t *testing.T) {
	t.Setenv("UPSTREAM_URL", "")
	if c := upstreamConfigFromEnv(); c != nil {
		t.Fatalf("no UPSTREAM_URL: %+v", c)
	}
	t.Setenv("UPSTREAM_URL", "http://central:8080")
	t.Setenv("UPSTREAM_KEY", "k")
	t.Setenv("UPSTREAM_TIMEOUT_CCC", "20s")
	t.Setenv("UPSTREAM_PORTALS", "rfb, ccc")
	t.Setenv("UPSTREAM_RETRIES", "0")
	c := upstreamConfigFromEnv()
	if c.URL != "http://central:8080" || c.Key != "k" || c.Retries != -1 ||
		c.Timeouts[upstream.PortalRegistrations] != 20*time.Second || c.Timeouts[upstream.PortalRegistry] != upstream.DefaultTimeout ||
		len(c.Portals) != 2 || c.Portals[1] != "ccc" || c.BreakerFailures != upstream.DefaultBreakerFailures {
		t.Errorf("config %+v", c)
	}
	if _, err := upstream.New(*c); err != nil {
		t.Error(err)
	}
}
