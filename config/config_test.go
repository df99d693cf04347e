package config

import (
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	c, err := Load([]string{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.Addr != ":8080" || c.Server.RequestTimeout != 10*time.Second || c.Database.StatementTimeout != 11*time.Second ||
		c.Prices.Street != 10 || !slices.Equal(c.Upstream.Portals, []string{"rfb", "simples", "ccc", "suframa"}) || c.Images.GeocoderCache != 10000 {
		t.Errorf("defaults: %+v", c)
	}
	if c.DevListenAddr() != "127.0.0.1:8080" || c.Server.MaxBodyBytes != 1<<20 || c.Auth.RedisTimeout != 50*time.Millisecond || c.Server.MetricsAddr != "" {
		t.Errorf("dev address %q, body limit %d, Redis timeout %s", c.DevListenAddr(), c.Server.MaxBodyBytes, c.Auth.RedisTimeout)
	}
	// dev listens where ADDR says, when it says.
	if c, err := Load([]string{"ADDR=:9000"}); err != nil || c.DevListenAddr() != ":9000" || c.Server.Addr != ":9000" {
		t.Errorf("ADDR=:9000: dev listens on %q (%v)", c.DevListenAddr(), err)
	}
	// Seconds of Redis timeout would make an outage cost every request that much.
	if _, err := Load([]string{"REDIS_TIMEOUT=3s"}); err == nil || !strings.HasPrefix(err.Error(), "REDIS_TIMEOUT: ") {
		t.Errorf("REDIS_TIMEOUT=3s: %v", err)
	}
	c, err = Load([]string{"CORS_ORIGINS=https://a.example.com, *", "UPSTREAM_PORTALS= rfb ,", "REQUEST_TIMEOUT=3s", "COST_STREET=7"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Server.CORSOrigins, []string{"https://a.example.com", "*"}) || !slices.Equal(c.Upstream.Portals, []string{"rfb"}) ||
		c.Database.StatementTimeout != 4*time.Second || c.Prices.Street != 7 {
		t.Errorf("set: %+v", c)
	}
}

// TestPoolSize: the pool is four connections per core the server may use,
// at least 8, unless DB_MAX_OPEN_CONNS says; 0 is refused.
func TestPoolSize(t *testing.T) {
	want := max(8, 4*runtime.GOMAXPROCS(0))
	if c, err := Load([]string{}); err != nil || c.Database.MaxOpenConns != want {
		t.Errorf("unset: %d, want %d (%v)", c.Database.MaxOpenConns, want, err)
	}
	if c, err := Load([]string{"DB_MAX_OPEN_CONNS=5"}); err != nil || c.Database.MaxOpenConns != 5 {
		t.Errorf("5: %d (%v)", c.Database.MaxOpenConns, err)
	}
	if _, err := Load([]string{"DB_MAX_OPEN_CONNS=0"}); err == nil || !strings.HasPrefix(err.Error(), "DB_MAX_OPEN_CONNS: ") {
		t.Errorf("0: %v", err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if DefaultMaxOpenConns() != 8 {
		t.Errorf("one core: %d, want 8", DefaultMaxOpenConns())
	}
	runtime.GOMAXPROCS(3)
	if DefaultMaxOpenConns() != 12 {
		t.Errorf("three cores: %d, want 12", DefaultMaxOpenConns())
	}
}

// TestLookupConcurrency: lookups take as many places as the pool has
// connections, unless LOOKUP_CONCURRENCY says; 0 is refused.
func TestLookupConcurrency(t *testing.T) {
	for _, c := range []struct {
		environ []string
		want    int
	}{
		{nil, max(8, 4*runtime.GOMAXPROCS(0))},
		{[]string{"DB_MAX_OPEN_CONNS=20"}, 20},
		{[]string{"DB_MAX_OPEN_CONNS=20", "LOOKUP_CONCURRENCY=3"}, 3},
	} {
		if got, err := Load(append([]string{}, c.environ...)); err != nil || got.Server.LookupConcurrency != c.want {
			t.Errorf("%v: %d, want %d (%v)", c.environ, got.Server.LookupConcurrency, c.want, err)
		}
	}
	if _, err := Load([]string{"LOOKUP_CONCURRENCY=0"}); err == nil || !strings.HasPrefix(err.Error(), "LOOKUP_CONCURRENCY: ") {
		t.Errorf("0: %v", err)
	}
}

// TestREADMETable: the README's configuration tables name exactly the
// variables of Config, with their defaults.
func TestREADMETable(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| (`[A-Z][A-Z0-9_]*`(?:, `[A-Z][A-Z0-9_]*`)*) \\| ([^|]*) \\|")
	code := regexp.MustCompile("`([^`]*)`")
	documented := map[string]string{} // variable → its default cell
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		names := code.FindAllStringSubmatch(m[1], -1)
		defaults := code.FindAllStringSubmatch(m[2], -1)
		for i, n := range names {
			cell := strings.TrimSpace(m[2])
			if len(names) > 1 && len(defaults) == len(names) {
				cell = "`" + defaults[i][1] + "`" // one default per name, in order
			}
			documented[n[1]] = cell
		}
	}
	for _, v := range Variables() {
		cell, ok := documented[v.Name]
		if !ok {
			t.Errorf("%s is not in README.md's configuration table", v.Name)
			continue
		}
		delete(documented, v.Name)
		if v.Default != "" && !strings.Contains(cell, "`"+v.Default+"`") {
			t.Errorf("%s: README says default %s, Config says %q", v.Name, cell, v.Default)
		}
	}
	for name := range documented {
		t.Errorf("README.md documents %s, which Config does not have", name)
	}
}

// TestTrustedProxies: addresses and ranges, an address alone as a range of
// one, IPv4 written in IPv6 as IPv4; anything else refused by name.
func TestTrustedProxies(t *testing.T) {
	c, err := Load([]string{"TRUSTED_PROXIES=10.0.0.5, 192.168.7.0/16,::ffff:10.1.2.3,2001:db8::/32"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range c.Server.TrustedProxyPrefixes() {
		got = append(got, p.String())
	}
	if want := []string{"10.0.0.5/32", "192.168.0.0/16", "10.1.2.3/32", "2001:db8::/32"}; !slices.Equal(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	if _, err := Load([]string{"TRUSTED_PROXIES=10.0.0.5,proxy.internal"}); err == nil || !strings.Contains(err.Error(), `TRUSTED_PROXIES: "proxy.internal" is not an IP address or CIDR`) {
		t.Errorf("a host name: %v", err)
	}
}
