// Package upstream is the online source of records: an HTTP client for a
// CNPJá-compatible API, which may be the commercial service or another
// cnpjgraph instance (an edge in front of a central one). It fetches one
// portal at a time, each with its own timeout and circuit breaker, retries
// only idempotent requests that failed before any answer, and turns every
// failure into the contract's fault: 504 on timeout, 503 when the source is
// down, 404 when the source says the tax id is not registered.
package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/internal/buildinfo"
	"github.com/cnpjgraph/cnpjgraph/model"
	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/cnpjgraph/cnpjgraph/wire"
)

// Portals a source may be used for, by the names UPSTREAM_PORTALS takes.
const (
	PortalRegistry      = service.PortalRegistry
	PortalSimples       = service.PortalSimples
	PortalRegistrations = service.PortalRegistrations
	PortalSuframa       = service.PortalSuframa
)

// AllPortals lists every portal.
var AllPortals = []string{PortalRegistry, PortalSimples, PortalRegistrations, PortalSuframa}

// Defaults of Config.
const (
	DefaultTimeout         = 5 * time.Second
	DefaultBreakerFailures = 5
	DefaultBreakerCooldown = 30 * time.Second
	DefaultRetries         = 2
	DefaultStrategy        = "CACHE_IF_ERROR"
	DefaultMaxAge          = 1
)

// Config describes a source.
type Config struct {
	URL string // base URL, e.g. https://api.example.com or http://central:8080
	Key string // credential, sent raw in Authorization; empty: none

	// Timeouts per portal; a missing or zero entry is DefaultTimeout.
	Timeouts map[string]time.Duration
	// Portals to fetch online; empty: all. For the others the imported
	// snapshot stays authoritative.
	Portals []string

	// BreakerFailures consecutive failures open a portal's breaker for
	// BreakerCooldown. Zero values take the defaults; negative failures
	// disable the breaker.
	BreakerFailures int
	BreakerCooldown time.Duration

	// Retries of a request that failed before any answer (connection
	// error, 502, 503); zero: DefaultRetries, negative: none.
	Retries int

	// Strategy and MaxAge are the cache parameters sent to the source.
	// The default, CACHE_IF_ERROR with maxAge 1, asks for fresh data but
	// lets a source that cannot refresh answer from its own cache: a central
	// cnpjgraph without an upstream of its own answers ONLINE with 503, by
	// contract, yet holds exactly the data an edge wants. ONLINE sends no
	// maxAge.
	Strategy string
	MaxAge   int

	// HTTP is the client used; nil: a dedicated one with pooled connections.
	HTTP *http.Client
	// Now is the breakers' clock; nil: time.Now.
	Now func() time.Time
}

// Client fetches records from a source. It is safe for concurrent use.
type Client struct {
	base     *url.URL
	key      string
	http     *http.Client
	timeouts map[string]time.Duration
	portals  map[string]bool
	breakers map[string]*breaker
	retries  int
	strategy string
	maxAge   int
}

// New returns a client for the source cfg describes.
func New(cfg Config) (*Client, error) {
	base, err := url.Parse(strings.TrimRight(cfg.URL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("upstream URL %q: want http(s)://host[:port][/path]", cfg.URL)
	}
	c := &Client{
		base:     base,
		key:      cfg.Key,
		http:     cfg.HTTP,
		timeouts: make(map[string]time.Duration),
		portals:  make(map[string]bool),
		breakers: make(map[string]*breaker),
		retries:  cfg.Retries,
		strategy: cfg.Strategy,
		maxAge:   cfg.MaxAge,
	}
	if c.http == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		c.http = &http.Client{Transport: t}
	}
	switch {
	case c.retries == 0:
		c.retries = DefaultRetries
	case c.retries < 0:
		c.retries = 0
	}
	if c.strategy == "" {
		c.strategy = DefaultStrategy
	}
	if c.maxAge <= 0 {
		c.maxAge = DefaultMaxAge
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	failures, cooldown := cfg.BreakerFailures, cfg.BreakerCooldown
	if failures == 0 {
		failures = DefaultBreakerFailures
	}
	if cooldown <= 0 {
		cooldown = DefaultBreakerCooldown
	}
	portals := cfg.Portals
	if len(portals) == 0 {
		portals = AllPortals
	}
	for _, p := range portals {
		if !slices.Contains(AllPortals, p) {
			return nil, fmt.Errorf("upstream portal %q: want one of %s", p, strings.Join(AllPortals, ", "))
		}
		c.portals[p] = true
	}
	for _, p := range AllPortals {
		c.timeouts[p] = DefaultTimeout
		if d := cfg.Timeouts[p]; d > 0 {
			c.timeouts[p] = d
		}
		c.breakers[p] = &breaker{failures: failures, cooldown: cooldown, now: now}
	}
	return c, nil
}

// Serves reports whether the client fetches portal online; the service
// treats the other portals as having no upstream.
func (c *Client) Serves(portal string) bool { return c.portals[portal] }

// Registry fetches the federal registry record of an office, with its
// company and members (GET /rfb).
func (c *Client) Registry(ctx context.Context, taxID cnpj.CNPJ) (model.Office, error) {
	var w wire.Registry
	q := url.Values{"taxId": {string(taxID)}}
	if err := c.get(ctx, PortalRegistry, "/rfb", q, &w); err != nil {
		return model.Office{}, err
	}
	if w.TaxID != string(taxID) {
		return model.Office{}, c.offline(PortalRegistry, fmt.Errorf("asked for %s, the source answered %q", taxID, w.TaxID))
	}
	return w.Model(), nil
}

// Simples fetches the Simples Nacional and SIMEI state of an office's
// company, with history (GET /simples).
func (c *Client) Simples(ctx context.Context, taxID cnpj.CNPJ) (model.SimplesRecord, error) {
	var w wire.SimplesLookup
	q := url.Values{"taxId": {string(taxID)}, "history": {"true"}}
	if err := c.get(ctx, PortalSimples, "/simples", q, &w); err != nil {
		return model.SimplesRecord{}, err
	}
	return w.Model(taxID), nil
}

// Registrations fetches the state registrations of an office for the given
// UFs (BR: all) through the office lookup (GET /office/{taxId}).
func (c *Client) Registrations(ctx context.Context, taxID cnpj.CNPJ, states []string) ([]model.Registration, error) {
	var w wire.Office
	q := url.Values{"registrations": {strings.Join(states, ",")}}
	if err := c.get(ctx, PortalRegistrations, "/office/"+url.PathEscape(string(taxID)), q, &w); err != nil {
		return nil, err
	}
	return w.RegistrationList(), nil
}

// errBreakerOpen is the cause of a fast failure.
var errBreakerOpen = errors.New("circuit breaker open: the source failed repeatedly")

// errRetryable marks an attempt that failed before the source answered.
type errRetryable struct{ err error }

func (e errRetryable) Error() string { return e.err.Error() }
func (e errRetryable) Unwrap() error { return e.err }

// get fetches path with the portal's timeout, breaker and retries, and
// decodes a 200 answer into dst.
func (c *Client) get(ctx context.Context, portal, path string, q url.Values, dst any) error {
	if !c.portals[portal] {
		return fault.E(fault.Unavailable, service.OfflineMessage(portal), fmt.Errorf("portal %s is not fetched online", portal))
	}
	b := c.breakers[portal]
	if !b.allow() {
		return c.offline(portal, errBreakerOpen)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeouts[portal])
	defer cancel()
	if _, file := dst.(*pdfFile); !file { // certificates take no cache parameters
		q.Set("strategy", c.strategy)
		if c.strategy != "ONLINE" {
			q.Set("maxAge", strconv.Itoa(c.maxAge))
		}
	}
	u := *c.base
	u.Path += path
	u.RawQuery = q.Encode()

	var err error
	for attempt := 0; ; attempt++ {
		err = c.attempt(ctx, portal, u.String(), dst)
		var r errRetryable
		if err == nil || !errors.As(err, &r) || attempt >= c.retries || !c.backoff(ctx, attempt) {
			break
		}
	}
	// A source that says "not registered" is working: only failures count.
	var f *fault.Error
	b.done(err == nil || errors.As(err, &f) && f.Kind == fault.NotFound)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &f):
		return f
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return fault.E(fault.DeadlineExceeded, fault.MsgTimeout, fmt.Errorf("upstream %s: %w", portal, err))
	}
	return c.offline(portal, err)
}

func (c *Client) offline(portal string, err error) *fault.Error {
	return fault.E(fault.Unavailable, service.OfflineMessage(portal), fmt.Errorf("upstream %s: %w", portal, err))
}

// backoff sleeps before retry attempt+1: 50 ms doubling, with full jitter.
// It reports false, without sleeping, when the wait would reach past the
// deadline, so a retry never outlives the request.
func (c *Client) backoff(ctx context.Context, attempt int) bool {
	d := time.Duration(rand.Int64N(int64(50*time.Millisecond) << attempt))
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// maxBody bounds what is read of an answer: a registry record with
// hundreds of members is well below it.
const maxBody = 8 << 20

// attempt sends one request. Failures before any answer (the connection,
// or a 502/503 from a proxy or a restarting source) are errRetryable.
func (c *Client) attempt(ctx context.Context, portal, u string, dst any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", buildinfo.UserAgent())
	file, isFile := dst.(*pdfFile)
	if isFile {
		req.Header.Set("Accept", "application/pdf")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", c.key)
	}
	res, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errRetryable{err}
	}
	defer func() { _ = res.Body.Close() }()
	switch res.StatusCode {
	case http.StatusOK:
		if isFile {
			return file.read(ctx, res)
		}
		dec := json.NewDecoder(io.LimitReader(res.Body, maxBody))
		if err := dec.Decode(dst); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("decode answer: %w", err)
		}
		return nil
	case http.StatusBadGateway, http.StatusServiceUnavailable:
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		return errRetryable{fmt.Errorf("source answered %s", res.Status)}
	}
	var e wire.Error
	_ = json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&e)
	if res.StatusCode == http.StatusNotFound && e.Message == fault.MsgTaxIDNotFound {
		return fault.E(fault.NotFound, fault.MsgTaxIDNotFound, errors.New("upstream: tax id not registered"))
	}
	if res.StatusCode == http.StatusNotFound && portal == PortalSuframa && notRegistered(e) {
		return fault.E(fault.NotFound, service.MsgSuframaNotFound, errors.New("upstream: not registered at the suframa: "+e.Message))
	}
	if res.StatusCode == http.StatusGatewayTimeout {
		return fault.E(fault.DeadlineExceeded, fault.MsgTimeout, fmt.Errorf("source answered %s", res.Status))
	}
	// Anything else (a bad credential, no credits at the source, a wrong
	// base URL) means the source cannot serve us: offline.
	return fmt.Errorf("source answered %s: %s", res.Status, e.Message)
}
