package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/cnpjgraph/cnpjgraph/config"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/exporter"
	"github.com/cnpjgraph/cnpjgraph/graphqlapi"
	"github.com/cnpjgraph/cnpjgraph/internal/buildinfo"
	"github.com/cnpjgraph/cnpjgraph/internal/logbuf"
	"github.com/cnpjgraph/cnpjgraph/playground"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/cnpjgraph/cnpjgraph/upstream"
)

func init() { commands["serve"] = runServe }

// withSessionSettings adds the serving pool's connection parameters to a
// DSN unless the operator set them.
func withSessionSettings(dsn string, statementTimeout time.Duration) string {
	var pairs []string
	if statementTimeout > 0 {
		// No query outlives its request by much.
		pairs = append(pairs, "statement_timeout", fmt.Sprint(statementTimeout.Milliseconds()))
	}
	return db.WithDefaultParams(dsn, append(pairs,
		// An unreachable server fails fast.
		"connect_timeout", "5",
		// Every lookup is a key lookup whose best plan never depends on
		// the value: plan once per prepared statement, not on every
		// execution (custom plans cost more than the lookup itself).
		"plan_cache_mode", "force_generic_plan",
		// The pool's writes (credit debits, the usage ledger, cached
		// online records, search tokens) need not wait for the WAL flush:
		// a PostgreSQL crash loses at most the last fraction of a second
		// of them, and priced requests no longer queue on their account's
		// row behind each other's flush (docs/api.md).
		"synchronous_commit", "off",
	)...)
}

func runServe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", "", "listen address (default $ADDR or :8080)")
	_ = fs.Parse(args)
	cfg := loadConfig()
	if *addr != "" {
		cfg.Server.Addr = *addr
	}
	return serve(ctx, cfg)
}

// serve serves the API as cfg says, until ctx ends (serve and dev).
func serve(ctx context.Context, cfg config.Config) error {
	// The log's lines are written out every 100 ms, not one write each:
	// an access line per request was about 2 % of a lookup's CPU.
	logOut := logbuf.New(os.Stderr, 100*time.Millisecond, 64<<10)
	defer func() { _ = logOut.Close() }()
	log := slog.New(slog.NewJSONHandler(logOut, &slog.HandlerOptions{Level: cfg.Server.LogLevel}))
	log.Info("cnpjgraph starting", slog.String("build", buildinfo.Read().String()))
	if cfg.Server.GOGC == "" {
		// Answers are short-lived garbage and the live heap is small:
		// collecting rarely buys nested GraphQL queries (+5-11 % against
		// 400, docs/benchmarks.md "The GC target"). GOGC overrides.
		debug.SetGCPercent(1000)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		// That target alone let pages of 1,000 offices take 753 MB; under
		// this soft limit they take 272 MB at the same speed, and lookups
		// (under 100 MB) never reach it. GOMEMLIMIT overrides; the runtime
		// reads it itself, and stops at start on a malformed one.
		debug.SetMemoryLimit(256 << 20)
	}

	if err := db.EnsureDatabase(ctx, cfg.DatabaseURL); err != nil {
		return err
	}
	d, err := db.Open(ctx, withSessionSettings(cfg.DatabaseURL, cfg.Database.StatementTimeout))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := db.Migrate(ctx, d); err != nil {
		return err
	}
	if off, err := db.AutovacuumOff(ctx, d); err != nil {
		return err
	} else if off {
		log.Warn("PostgreSQL's autovacuum is off: the accounts' credit rows bloat with every priced request and slow every authenticated one; " +
			"turn autovacuum on, or VACUUM accounts, api_keys, usage and search_tokens often (README, Accounts and keys)")
	}
	d.SetMaxOpenConns(cfg.Database.MaxOpenConns)
	d.SetMaxIdleConns(cfg.Database.MaxIdleConns)
	d.SetConnMaxLifetime(cfg.Database.ConnMaxLifetime)
	d.SetConnMaxIdleTime(cfg.Database.ConnMaxIdleTime)

	metrics := rest.NewMetrics(d.DB)
	store := db.NewStore(d, db.StoreOptions{OnQuery: metrics.RoundTrip,
		OnSnapshot: func(from, to db.Snapshot) {
			log.Info("serving another snapshot: an import went live", slog.Int64("id", to.ID), slog.String("month", to.DumpMonth),
				slog.String("date", to.ReferenceDate.Format("2006-01-02")), slog.Int64("previous", from.ID))
		}})
	opts := service.Options{Logger: log, Prices: &cfg.Prices, Search: &cfg.Search,
		LookupConcurrency: cfg.Server.LookupConcurrency}
	if cfg.Upstream.URL != "" {
		client, err := upstream.New(upstreamConfig(cfg.Upstream))
		if err != nil {
			return err
		}
		opts.Source = client
		for p, d := range cfg.Upstream.Timeouts() {
			// A CACHE_IF_ERROR fallback to stale data needs time left after
			// the source timed out.
			if d >= cfg.Server.RequestTimeout {
				log.Warn("upstream timeout not below REQUEST_TIMEOUT: a timed-out source fails the request instead of falling back to cached data",
					slog.String("portal", p), slog.Duration("timeout", d), slog.Duration("requestTimeout", cfg.Server.RequestTimeout))
			}
		}
		log.Info("online source", slog.String("url", config.Redact(cfg.Upstream.URL)), slog.Any("portals", cfg.Upstream.Portals))
	}
	pictures, err := imageryProvider(cfg.Images, log)
	if err != nil {
		return err
	}
	opts.Imagery = pictures
	if pictures.Locator != nil && pictures.Locator.Geocoder != nil {
		opts.Geocoder = pictures.Locator.Geocoder
	}

	var (
		authenticate func(http.Handler) http.Handler
		authSvc      *auth.Service
	)
	if cfg.Server.AuthDisabled {
		log.Warn("AUTH_DISABLED=true: every lookup is served without a credential, limits or credits")
	} else {
		authSvc, err = auth.New(ctx, authConfig(cfg.Auth, d, log))
		if err != nil {
			return err
		}
		defer func() { _ = authSvc.Close() }() // writes the usage rows still buffered
		authenticate = authSvc.Middleware(auth.DoorPermission, rest.RenderError)
		opts.Meter = authSvc.Meter()
		if cfg.Auth.RedisURL != "" {
			log.Info("per-minute limits shared through redis", slog.String("url", config.Redact(cfg.Auth.RedisURL)),
				slog.Duration("timeout", cfg.Auth.RedisTimeout))
			metrics.GaugeFunc("cnpjgraph_rate_limits_shared",
				"1 while the per-minute limits are shared through Redis; 0 while Redis is unreachable and this instance limits on its own.",
				func() float64 {
					if authSvc.SharedLimits() {
						return 1
					}
					return 0
				})
		}
		opts.SignLink = authSvc.SignLink
		opts.Owners = authSvc
	}

	svc := service.New(store, opts)
	metrics.LiveSnapshot(svc)
	metrics.ListExports(svc)
	if snap, err := svc.Ready(ctx); err != nil {
		msg := "no live snapshot yet: lookups answer 503 until an import"
		if cfg.Upstream.URL != "" {
			msg = "no live snapshot: office, registry and Simples lookups come from the upstream and the overlay; company and person lookups answer 503 until an import"
		}
		log.Warn(msg, slog.String("error", err.Error()))
	} else {
		log.Info("serving snapshot", slog.Int64("id", snap.ID), slog.String("month", snap.DumpMonth),
			slog.String("date", snap.ReferenceDate.Format("2006-01-02")))
	}

	deps := rest.Deps{
		Service:          svc,
		Logger:           log,
		Metrics:          metrics,
		RequestTimeout:   cfg.Server.RequestTimeout,
		MaxBodyBytes:     int64(cfg.Server.MaxBodyBytes),
		MetricsElsewhere: cfg.Server.MetricsAddr != "",
		CORSOrigins:      cfg.Server.CORSOrigins,
		TrustedProxies:   cfg.Server.TrustedProxyPrefixes(),
		Authenticate:     authenticate,
		Mount: graphqlapi.Mount(graphqlapi.Options{
			Service:   svc,
			Logger:    log,
			RequestID: rest.RequestID,
		}),
		MountPublic: graphqlapi.MountPlayground(playground.Options{
			Endpoint: "/graphql",
			Base:     publicPath(cfg.Server.PublicURL),
			APIKey:   playgroundKey(cfg.Server, log),
			Examples: []string{graphqlapi.ExampleQuery(exampleTaxID(ctx, d)), graphqlapi.ExampleSearch},
		}),
		PublicURL: cfg.Server.PublicURL,
	}
	if pictures.Locator != nil {
		deps.Seats = pictures.Locator.Seats
	}
	if authSvc != nil {
		deps.Degraded = authSvc.Degraded
	}
	srv := &http.Server{
		Addr:              cfg.Server.Addr,
		Handler:           rest.NewRouter(deps),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      cfg.Server.RequestTimeout + 5*time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if a := cfg.Server.PprofAddr; a != "" {
		// Profiles for operators chasing a slow instance; off unless asked,
		// and on its own listener so it is never exposed with the API.
		go func() {
			log.Info("pprof listening", slog.String("addr", a))
			_ = http.ListenAndServe(a, pprofMux()) //nolint:gosec // operator-only, opt-in
		}()
	}
	// Lists' exports run beside the API, on whichever instance claims each;
	// one stopped mid-export leaves it to be taken over.
	// At shutdown the running export stops and removes its temporary
	// files (gigabytes for a big list) before the process exits.
	exports, stopExports := context.WithCancel(ctx)
	defer stopExports()
	exportsDone := make(chan struct{})
	go func() {
		defer close(exportsDone)
		exporter.Run(exports, svc, exporter.Options{Logger: log,
			Retention: time.Duration(cfg.Server.ExportRetentionDays) * 24 * time.Hour})
	}()
	servers := []*http.Server{srv}
	if a := cfg.Server.MetricsAddr; a != "" {
		// Metrics on a listener of their own, for a scraper on a private
		// network; the API's listener no longer answers /metrics.
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", metrics.Handler())
		servers = append(servers, &http.Server{Addr: a, Handler: mux, ReadHeaderTimeout: 5 * time.Second,
			WriteTimeout: 30 * time.Second, ErrorLog: srv.ErrorLog})
	}
	err = listen(ctx, log, servers, cfg.Server.ShutdownTimeout)
	stopExports()
	select {
	case <-exportsDone:
	case <-time.After(cfg.Server.ShutdownTimeout):
		log.Warn("shutdown: the running export did not stop in time; its temporary files may remain")
	}
	return err
}

// listen serves on each server until ctx ends or one fails, then shuts
// them all down, letting requests in flight finish within grace. Every
// address is bound before any is served, so an address in use fails at
// once, named, and no "listening" line is logged for it.
func listen(ctx context.Context, log *slog.Logger, servers []*http.Server, grace time.Duration) error {
	listeners := make([]net.Listener, 0, len(servers))
	for _, s := range servers {
		ln, err := bind(s.Addr)
		if err != nil {
			for _, l := range listeners {
				_ = l.Close()
			}
			return err
		}
		listeners = append(listeners, ln)
	}
	errc := make(chan error, len(servers))
	for i, s := range servers {
		go func() {
			log.Info("listening", slog.String("addr", s.Addr))
			errc <- s.Serve(listeners[i])
		}()
	}
	var failed error // the first listener that failed (an address in use)
	pending := len(servers)
	select {
	case failed = <-errc:
		pending--
	case <-ctx.Done():
		log.Info("shutting down")
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	errs := []error{failed}
	for _, s := range servers {
		if err := s.Shutdown(sctx); err != nil {
			errs = append(errs, fmt.Errorf("shutdown: %w", err))
		}
	}
	for range pending {
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// bind listens on addr (host:port), saying so when another process
// holds it.
func bind(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("listen on %s: the address is in use by another process (another `cnpjgraph serve` or `make run`?): stop it, or listen elsewhere with ADDR", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// publicPath is the path of PUBLIC_URL ("/cnpj" of https://example.com/cnpj/):
// the prefix a proxy strips before the API sees a request, under which the
// playground page must ask for its scripts and the endpoint.
func publicPath(publicURL string) string {
	u, err := url.Parse(publicURL)
	if err != nil {
		return ""
	}
	return strings.TrimRight(u.Path, "/")
}

// playgroundKey is the key the open /playground page embeds:
// PLAYGROUND_API_KEY (dev: the development key), only while the API listens
// on loopback, since the page hands it to whoever reaches the listener.
func playgroundKey(s config.Server, log *slog.Logger) string {
	if s.PlaygroundAPIKey == "" {
		return ""
	}
	if !loopback(s.Addr) {
		log.Warn("PLAYGROUND_API_KEY ignored: the playground embeds a key only when the API listens on loopback (say ADDR=127.0.0.1:8080)",
			slog.String("addr", s.Addr))
		return ""
	}
	return s.PlaygroundAPIKey
}

// loopback reports whether a listen address is reachable from this
// machine only: 127.0.0.0/8, ::1 or localhost (not ":8080", every interface).
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// upstreamConfig is the online source of the configuration.
func upstreamConfig(u config.Upstream) upstream.Config {
	c := upstream.Config{
		URL:             u.URL,
		Key:             u.Key,
		Timeouts:        u.Timeouts(),
		Portals:         u.Portals,
		BreakerFailures: u.BreakerFailures,
		BreakerCooldown: u.BreakerCooldown,
		Retries:         u.Retries,
		Strategy:        u.Strategy,
		MaxAge:          u.MaxAge,
	}
	if c.Retries == 0 {
		c.Retries = -1 // UPSTREAM_RETRIES=0 means none, not the default
	}
	if c.BreakerFailures == 0 {
		c.BreakerFailures = -1 // likewise: 0 disables the breaker
	}
	return c
}

// authConfig is the auth service of the configuration.
func authConfig(a config.Auth, d *sqlx.DB, log *slog.Logger) auth.Config {
	return auth.Config{
		DB:           d,
		JWTSecret:    []byte(a.JWTSecret),
		SigningKey:   []byte(a.SigningKey),
		RedisURL:     a.RedisURL,
		RedisPrefix:  "cnpjgraph:",
		RedisTimeout: a.RedisTimeout,
		KeyCacheTTL:  a.KeyCacheTTL,
		// Days of 24 hours: the bound moves with the clock, not the calendar.
		UsageRetention: time.Duration(a.UsageRetentionDays) * 24 * time.Hour,
		Logger:         log,
	}
}

// exampleTaxID picks the playground's example office from the served data:
// the SERPRO branch of the RFB's published sample when present, else a
// head office whose company has members (a generated sample), so the
// example query shows the whole graph. Without data it is the SERPRO
// branch anyway: the query then shows a NOT_FOUND error, which is honest.
func exampleTaxID(ctx context.Context, d *sqlx.DB) string {
	const serproBranch = "33683111000280"
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var taxID string
	err := d.GetContext(ctx, &taxID, `SELECT tax_id FROM (
		(SELECT o.tax_id, 0 AS pick FROM `+db.LiveSchema+`.offices o WHERE o.tax_id = $1)
		UNION ALL
		(SELECT o.tax_id, 1 FROM `+db.LiveSchema+`.offices o
		 WHERE o.head AND EXISTS (SELECT 1 FROM `+db.LiveSchema+`.members m WHERE m.root = o.root)
		 ORDER BY o.tax_id LIMIT 1)) picks ORDER BY pick LIMIT 1`, serproBranch)
	if err != nil {
		return serproBranch
	}
	return taxID
}
