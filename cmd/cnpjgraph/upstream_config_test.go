package main

import (
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/config"
	"github.com/cnpjgraph/cnpjgraph/upstream"
)

func TestUpstreamConfig(t *testing.T) {
	cfg, err := config.Load([]string{
		"UPSTREAM_URL=http://central:8080", "UPSTREAM_KEY=k", "UPSTREAM_TIMEOUT_CCC=20s",
		"UPSTREAM_PORTALS=rfb, ccc", "UPSTREAM_RETRIES=0",
	})
	if err != nil {
		t.Fatal(err)
	}
	c := upstreamConfig(cfg.Upstream)
	if c.URL != "http://central:8080" || c.Key != "k" || c.Retries != -1 ||
		c.Timeouts[upstream.PortalRegistrations] != 20*time.Second || c.Timeouts[upstream.PortalRegistry] != upstream.DefaultTimeout ||
		len(c.Portals) != 2 || c.Portals[1] != "ccc" || c.BreakerFailures != upstream.DefaultBreakerFailures {
		t.Errorf("config %+v", c)
	}
	if _, err := upstream.New(c); err != nil {
		t.Error(err)
	}
}
