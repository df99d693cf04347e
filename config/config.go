// Package config is the one configuration of cnpjgraph: every setting is an
// environment variable, declared once in Config with its default, parsed
// and validated in one place (Load), and documented in README.md's
// configuration table, which a test keeps equal to this struct.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/cnpjgraph/cnpjgraph/download"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// Config is every setting.
type Config struct {
	DatabaseURL string `env:"DATABASE_URL" envDefault:"postgres://postgres@127.0.0.1:5432/cnpjgraph?sslmode=disable"`

	Server   Server
	Database Pool
	Auth     Auth
	Prices   service.Prices
	Search   service.SearchSettings
	Upstream Upstream
	Images   Images
	Download download.Config // the RFB share and the mapping tables (download, sync)
	Dev      Dev

	addrSet bool // ADDR was given: dev listens there too
}

// Dev is what `cnpjgraph dev` (make run) generates and imports.
type Dev struct {
	SampleDir       string `env:"SAMPLE_DIR" envDefault:".data/sample"`
	SampleCompanies int    `env:"SAMPLE_COMPANIES" envDefault:"2000"`
}

// Server is how `serve` listens and bounds requests.
type Server struct {
	// Addr is serve's listen address; dev listens on DevAddr unless ADDR is set.
	Addr            string        `env:"ADDR" envDefault:":8080"`
	MetricsAddr     string        `env:"METRICS_ADDR"`
	MaxBodyBytes    int           `env:"MAX_BODY_BYTES" envDefault:"1048576"`
	RequestTimeout  time.Duration `env:"REQUEST_TIMEOUT" envDefault:"10s"`
	ShutdownTimeout time.Duration `env:"SHUTDOWN_TIMEOUT" envDefault:"20s"`
	CORSOrigins     []string      `env:"CORS_ORIGINS"`
	// TrustedProxies are the addresses (IPs or CIDRs) of the proxies in
	// front of serve, whose X-Forwarded-For names the client in the access
	// log (TrustedProxyPrefixes).
	TrustedProxies []string `env:"TRUSTED_PROXIES"`
	PublicURL      string   `env:"PUBLIC_URL"`
	PprofAddr      string   `env:"PPROF_ADDR"`
	GOGC           string   `env:"GOGC"` // read by the Go runtime itself; serve sets 1000 when unset
	// PlaygroundAPIKey goes into the playground's Authorization header.
	PlaygroundAPIKey string `env:"PLAYGROUND_API_KEY"`
	AuthDisabled     bool   `env:"AUTH_DISABLED"`
	// LookupConcurrency: lookup requests run at once (service.LookupTurn);
	// unset: the pool's size, Database.MaxOpenConns (see Load).
	LookupConcurrency int `env:"LOOKUP_CONCURRENCY"`
	// LogLevel: the least level logged; warn drops the access line of
	// every request answered below 500, one line a request at any traffic.
	LogLevel slog.Level `env:"LOG_LEVEL" envDefault:"info"`
	// ExportRetentionDays: the files of list exports older than this are
	// deleted hourly; 0 keeps them forever.
	ExportRetentionDays int `env:"LIST_EXPORT_RETENTION_DAYS" envDefault:"30"`
}

// Pool is the database connection pool of `serve`.
type Pool struct {
	// StatementTimeout defaults to RequestTimeout + 1s (see Load).
	StatementTimeout time.Duration `env:"DB_STATEMENT_TIMEOUT"`
	MaxOpenConns     int           `env:"DB_MAX_OPEN_CONNS"` // unset: DefaultMaxOpenConns
	MaxIdleConns     int           `env:"DB_MAX_IDLE_CONNS" envDefault:"32"`
	ConnMaxLifetime  time.Duration `env:"DB_CONN_MAX_LIFETIME" envDefault:"30m"`
	ConnMaxIdleTime  time.Duration `env:"DB_CONN_MAX_IDLE_TIME" envDefault:"5m"`
}

// Auth is how credentials are checked and limits shared.
type Auth struct {
	JWTSecret    string        `env:"JWT_SECRET"`
	SigningKey   string        `env:"SIGNING_KEY"`
	RedisURL     string        `env:"REDIS_URL"`
	RedisTimeout time.Duration `env:"REDIS_TIMEOUT" envDefault:"50ms"`
	KeyCacheTTL  time.Duration `env:"AUTH_KEY_CACHE_TTL" envDefault:"2s"`
	// UsageRetentionDays: usage rows older than this are deleted hourly;
	// 0 keeps them forever.
	UsageRetentionDays int `env:"USAGE_RETENTION_DAYS" envDefault:"400"`
}

// Upstream is the optional online source.
type Upstream struct {
	URL             string        `env:"UPSTREAM_URL"`
	Key             string        `env:"UPSTREAM_KEY"`
	Portals         []string      `env:"UPSTREAM_PORTALS" envDefault:"rfb,simples,ccc,suframa"`
	TimeoutRFB      time.Duration `env:"UPSTREAM_TIMEOUT_RFB" envDefault:"5s"`
	TimeoutSimples  time.Duration `env:"UPSTREAM_TIMEOUT_SIMPLES" envDefault:"5s"`
	TimeoutCCC      time.Duration `env:"UPSTREAM_TIMEOUT_CCC" envDefault:"5s"`
	TimeoutSuframa  time.Duration `env:"UPSTREAM_TIMEOUT_SUFRAMA" envDefault:"5s"`
	Retries         int           `env:"UPSTREAM_RETRIES" envDefault:"2"`
	BreakerFailures int           `env:"UPSTREAM_BREAKER_FAILURES" envDefault:"5"`
	BreakerCooldown time.Duration `env:"UPSTREAM_BREAKER_COOLDOWN" envDefault:"30s"`
	Strategy        string        `env:"UPSTREAM_STRATEGY" envDefault:"CACHE_IF_ERROR"`
	MaxAge          int           `env:"UPSTREAM_MAX_AGE" envDefault:"1"`
}

// Images are the map, street and geocoding providers.
type Images struct {
	MapTileURL              string        `env:"MAP_TILE_URL"`
	MapTileURLRoadmap       string        `env:"MAP_TILE_URL_ROADMAP"`
	MapTileURLTerrain       string        `env:"MAP_TILE_URL_TERRAIN"`
	MapTileURLSatellite     string        `env:"MAP_TILE_URL_SATELLITE"`
	MapTileURLHybrid        string        `env:"MAP_TILE_URL_HYBRID"`
	MapMaxZoom              int           `env:"MAP_MAX_ZOOM" envDefault:"19"`
	MapTimeout              time.Duration `env:"MAP_TIMEOUT" envDefault:"5s"`
	MapTileCacheMB          int           `env:"MAP_TILE_CACHE_MB" envDefault:"64"`
	GeocoderURL             string        `env:"GEOCODER_URL"`
	GeocoderTimeout         time.Duration `env:"GEOCODER_TIMEOUT" envDefault:"5s"`
	GeocoderCache           int           `env:"GEOCODER_CACHE" envDefault:"10000"`
	MunicipalityCoordinates string        `env:"MUNICIPALITY_COORDINATES"`
	StreetImageURL          string        `env:"STREET_IMAGE_URL"`
	StreetTimeout           time.Duration `env:"STREET_TIMEOUT" envDefault:"5s"`
}

// DevAddr is where `cnpjgraph dev` (make run) listens when ADDR is not
// set: this machine only, since it serves the development key.
const DevAddr = "127.0.0.1:8080"

// DevListenAddr is where dev listens: ADDR when set, else DevAddr.
func (c Config) DevListenAddr() string {
	if c.addrSet {
		return c.Server.Addr
	}
	return DevAddr
}

// Load reads the configuration from environ (os.Environ's form; nil: the
// process environment) and validates it. An error names the variable.
func Load(environ []string) (Config, error) {
	if environ == nil {
		environ = os.Environ()
	}
	values := env.ToMap(environ)
	var c Config
	if err := env.ParseWithOptions(&c, env.Options{Environment: values}); err != nil {
		return c, named(err, values)
	}
	c.addrSet = values["ADDR"] != ""
	c.Server.CORSOrigins = trimmed(c.Server.CORSOrigins)
	c.Upstream.Portals = trimmed(c.Upstream.Portals)
	if values["DB_MAX_OPEN_CONNS"] == "" {
		c.Database.MaxOpenConns = DefaultMaxOpenConns()
	}
	if values["LOOKUP_CONCURRENCY"] == "" {
		// A place for each connection: a lookup holds one at a time, so
		// more at once would mostly wait for one, and the pool hands a
		// freed one to a random waiter, not the oldest.
		c.Server.LookupConcurrency = c.Database.MaxOpenConns
	}
	if c.Database.StatementTimeout == 0 {
		// Just above the request timeout: the context cancels first, and a
		// statement whose cancel got lost still ends on the server.
		c.Database.StatementTimeout = c.Server.RequestTimeout + time.Second
	}
	return c, c.validate()
}

// DefaultMaxOpenConns is serve's connection pool when DB_MAX_OPEN_CONNS is
// unset: four connections per core the server may use, and at least 8 (32
// on 8 cores, as the fixed default was). A lookup holds its connection for
// a fraction of a millisecond, so a small pool serves thousands a second;
// a large one on a small box lets as many PostgreSQL backends run at once
// as requests arrive, and they take turns on the cores. On 2 cores shared
// with PostgreSQL, 8 instead of 32, interleaved at 32 connections: office
// lookups +10 % (p99 by wrk 15 -> 9 ms), the nested GraphQL query +24 %,
// searches at 8 connections unchanged (docs/benchmarks.md).
func DefaultMaxOpenConns() int { return max(8, 4*runtime.GOMAXPROCS(0)) }

// trimmed drops the spaces around comma-separated items, and empty items.
func trimmed(items []string) []string {
	out := items[:0]
	for _, s := range items {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// named rewrites env's parse errors, which name struct fields, into
// sentences that name the environment variable and what it must be.
func named(err error, values map[string]string) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return err
	}
	want := map[reflect.Kind]string{
		reflect.Int: "an integer", reflect.Bool: "true or false", reflect.Int64: "a duration (say 5s, 250ms)",
	}
	var out []error
	for _, e := range agg.Errors {
		var pe env.ParseError
		if !errors.As(e, &pe) {
			out = append(out, e)
			continue
		}
		// Field names may repeat across the nested structs; the variable
		// that failed is one that is set (defaults parse).
		for _, v := range Variables() {
			if v.Field == pe.Name && values[v.Name] != "" {
				what := want[v.Kind]
				if v.Type == reflect.TypeFor[slog.Level]() {
					what = "a log level (debug, info, warn or error)"
				}
				out = append(out, fmt.Errorf("%s: %q is not %s", v.Name, values[v.Name], what))
			}
		}
	}
	return errors.Join(out...)
}

// Variable is one setting: its environment variable, default and field.
type Variable struct {
	Name    string
	Default string
	Field   string
	Kind    reflect.Kind
	Type    reflect.Type
}

// Variables lists every setting of Config, in declaration order.
func Variables() []Variable {
	var out []Variable
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			if name, ok := f.Tag.Lookup("env"); ok {
				out = append(out, Variable{Name: name, Default: f.Tag.Get("envDefault"), Field: f.Name, Kind: f.Type.Kind(), Type: f.Type})
				continue
			}
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type)
			}
		}
	}
	walk(reflect.TypeFor[Config]())
	return out
}

// minKeyBytes is the shortest JWT_SECRET and SIGNING_KEY accepted.
const minKeyBytes = 32

// validate checks what parsing cannot: ranges, URLs and names.
func (c Config) validate() error {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
	}
	if u, err := url.Parse(c.DatabaseURL); strings.Contains(c.DatabaseURL, "://") && (err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql")) {
		bad("DATABASE_URL", "%q is not a postgres:// URL", Redact(c.DatabaseURL))
	}
	positive := map[string]time.Duration{
		"REQUEST_TIMEOUT": c.Server.RequestTimeout, "SHUTDOWN_TIMEOUT": c.Server.ShutdownTimeout,
		"DB_STATEMENT_TIMEOUT": c.Database.StatementTimeout, "DB_CONN_MAX_LIFETIME": c.Database.ConnMaxLifetime,
		"DB_CONN_MAX_IDLE_TIME": c.Database.ConnMaxIdleTime, "UPSTREAM_TIMEOUT_RFB": c.Upstream.TimeoutRFB,
		"UPSTREAM_TIMEOUT_SIMPLES": c.Upstream.TimeoutSimples, "UPSTREAM_TIMEOUT_CCC": c.Upstream.TimeoutCCC,
		"UPSTREAM_TIMEOUT_SUFRAMA":  c.Upstream.TimeoutSuframa,
		"UPSTREAM_BREAKER_COOLDOWN": c.Upstream.BreakerCooldown, "MAP_TIMEOUT": c.Images.MapTimeout,
		"GEOCODER_TIMEOUT": c.Images.GeocoderTimeout, "STREET_TIMEOUT": c.Images.StreetTimeout,
	}
	for name, d := range positive {
		if d <= 0 {
			bad(name, "%s must be a positive duration (say 5s)", d)
		}
	}
	// A limiter call that may take seconds would make every request wait
	// that long whenever Redis is unreachable.
	if c.Auth.RedisTimeout <= 0 || c.Auth.RedisTimeout > time.Second {
		bad("REDIS_TIMEOUT", "%s must be between 1ms and 1s (say 50ms)", c.Auth.RedisTimeout)
	}
	if c.Search.CountBudget < time.Millisecond {
		bad("SEARCH_COUNT_BUDGET", "%s must be at least 1ms", c.Search.CountBudget)
	}
	if c.Search.WalkBudget < 0 {
		bad("SEARCH_WALK_BUDGET", "%s must not be negative (0: walks run to their end)", c.Search.WalkBudget)
	}
	if c.Search.TokenTTL < time.Minute {
		bad("SEARCH_TOKEN_TTL", "%s must be at least 1m", c.Search.TokenTTL)
	}
	if c.Auth.KeyCacheTTL < 0 {
		bad("AUTH_KEY_CACHE_TTL", "%s must not be negative (0 disables the cache)", c.Auth.KeyCacheTTL)
	}
	atLeast := []struct {
		name string
		v    int
		min  int
	}{
		{"DB_MAX_OPEN_CONNS", c.Database.MaxOpenConns, 1}, {"DB_MAX_IDLE_CONNS", c.Database.MaxIdleConns, 0},
		{"COST_ONLINE", c.Prices.Online, 0}, {"COST_CERTIFICATE", c.Prices.Certificate, 0},
		{"COST_MAP", c.Prices.Map, 0}, {"COST_STREET", c.Prices.Street, 0}, {"COST_SEARCH", c.Prices.Search, 0},
		{"SEARCH_COUNT_LIMIT", c.Search.CountLimit, 1}, {"SEARCH_COLLECT_BELOW", c.Search.CollectBelow, 0},
		{"SEARCH_CONCURRENCY", c.Search.Concurrency, 0}, {"LOOKUP_CONCURRENCY", c.Server.LookupConcurrency, 1},
		{"UPSTREAM_RETRIES", c.Upstream.Retries, 0}, {"UPSTREAM_BREAKER_FAILURES", c.Upstream.BreakerFailures, 0},
		{"UPSTREAM_MAX_AGE", c.Upstream.MaxAge, 1}, {"MAP_MAX_ZOOM", c.Images.MapMaxZoom, 1},
		{"MAP_TILE_CACHE_MB", c.Images.MapTileCacheMB, 0}, {"GEOCODER_CACHE", c.Images.GeocoderCache, 0},
		{"SAMPLE_COMPANIES", c.Dev.SampleCompanies, 1}, {"MAX_BODY_BYTES", c.Server.MaxBodyBytes, 1024},
		{"USAGE_RETENTION_DAYS", c.Auth.UsageRetentionDays, 0}, {"LIST_EXPORT_RETENTION_DAYS", c.Server.ExportRetentionDays, 0},
	}
	for _, n := range atLeast {
		if n.v < n.min {
			bad(n.name, "%d must be at least %d", n.v, n.min)
		}
	}
	for name, u := range map[string]string{
		"UPSTREAM_URL": c.Upstream.URL, "PUBLIC_URL": c.Server.PublicURL, "GEOCODER_URL": c.Images.GeocoderURL,
		"REDIS_URL": c.Auth.RedisURL, "MAP_TILE_URL": c.Images.MapTileURL,
		"MAP_TILE_URL_ROADMAP": c.Images.MapTileURLRoadmap, "MAP_TILE_URL_TERRAIN": c.Images.MapTileURLTerrain,
		"MAP_TILE_URL_SATELLITE": c.Images.MapTileURLSatellite, "MAP_TILE_URL_HYBRID": c.Images.MapTileURLHybrid,
		"STREET_IMAGE_URL": c.Images.StreetImageURL,
	} {
		if u == "" {
			continue
		}
		schemes := []string{"http", "https"}
		if name == "REDIS_URL" {
			schemes = []string{"redis", "rediss", "unix"}
		}
		if p, err := url.Parse(u); err != nil || !slices.Contains(schemes, p.Scheme) || (p.Host == "" && p.Scheme != "unix") {
			bad(name, "%q is not a URL (want %s://host...)", Redact(u), strings.Join(schemes, "|"))
		}
	}
	for _, p := range c.Upstream.Portals {
		if !slices.Contains([]string{service.PortalRegistry, service.PortalSimples, service.PortalRegistrations, service.PortalSuframa}, p) {
			bad("UPSTREAM_PORTALS", "%q is not a portal (want rfb, simples, ccc, suframa)", p)
		}
	}
	if !slices.Contains(service.Strategies, service.Strategy(c.Upstream.Strategy)) {
		bad("UPSTREAM_STRATEGY", "%q is not a strategy (want CACHE, CACHE_IF_FRESH, CACHE_IF_ERROR, ONLINE)", c.Upstream.Strategy)
	}
	for _, a := range []struct{ name, v string }{{"ADDR", c.Server.Addr}, {"PPROF_ADDR", c.Server.PprofAddr}, {"METRICS_ADDR", c.Server.MetricsAddr}} {
		if a.v != "" && !strings.Contains(a.v, ":") {
			bad(a.name, "%q is not a listen address (say :8080 or 127.0.0.1:8080)", a.v)
		}
	}
	if c.Server.GOGC != "" && c.Server.GOGC != "off" && strings.Trim(c.Server.GOGC, "0123456789") != "" {
		bad("GOGC", "%q is not a percentage or off", c.Server.GOGC)
	}
	for _, p := range c.Server.TrustedProxies {
		if _, err := parsePrefix(p); err != nil {
			bad("TRUSTED_PROXIES", "%q is not an IP address or CIDR (say 10.0.0.5 or 10.0.0.0/8)", p)
		}
	}
	for _, o := range c.Server.CORSOrigins {
		if u, err := url.Parse(o); o != "*" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "") {
			bad("CORS_ORIGINS", "%q is not an origin (want * or scheme://host[:port])", o)
		}
	}
	// HMAC keys shorter than the hash are guessable by brute force.
	for _, k := range []struct{ name, v string }{{"JWT_SECRET", c.Auth.JWTSecret}, {"SIGNING_KEY", c.Auth.SigningKey}} {
		if k.v != "" && len(k.v) < minKeyBytes {
			bad(k.name, "%d bytes is too short: use at least %d random bytes (openssl rand -base64 32)", len(k.v), minKeyBytes)
		}
	}
	if p := c.Images.MunicipalityCoordinates; p != "" {
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			bad("MUNICIPALITY_COORDINATES", "%q is not a readable file", p)
		}
	}
	if err := c.Download.Validate(); err != nil {
		errs = append(errs, err)
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// Timeouts are the upstream's timeouts by portal.
func (u Upstream) Timeouts() map[string]time.Duration {
	return map[string]time.Duration{
		service.PortalRegistry:      u.TimeoutRFB,
		service.PortalSimples:       u.TimeoutSimples,
		service.PortalRegistrations: u.TimeoutCCC,
		service.PortalSuframa:       u.TimeoutSuframa,
	}
}

// TrustedProxyPrefixes are TRUSTED_PROXIES as address ranges, an address
// alone as a range of one; Load has refused any other value.
func (s Server) TrustedProxyPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range s.TrustedProxies {
		if pre, err := parsePrefix(p); err == nil {
			out = append(out, pre)
		}
	}
	return out
}

func parsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	if p.Addr().Is4In6() {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}
