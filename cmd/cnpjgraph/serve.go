package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/graphqlapi"
	"github.com/cnpjgraph/cnpjgraph/playground"
	"github.com/cnpjgraph/cnpjgraph/resolvers"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/upstream"
)

func init() { commands["serve"] = runServe }

// serveConfig is the server's configuration, from the environment.
type serveConfig struct {
	Addr             string
	CORSOrigins      []string
	RequestTimeout   time.Duration
	StatementTimeout time.Duration
	MaxOpenConns     int
	MaxIdleConns     int
	ConnMaxLifetime  time.Duration
	ConnMaxIdleTime  time.Duration
	ShutdownTimeout  time.Duration
	Upstream         *upstream.Config // nil: no online source
	// PlaygroundAPIKey goes into the playground's Authorization header
	// (make run sets the development key); empty: none.
	PlaygroundAPIKey string
}

func serveConfigFromEnv() serveConfig {
	c := serveConfig{
		Addr:            env("ADDR", ":8080"),
		RequestTimeout:  envDuration("REQUEST_TIMEOUT", 10*time.Second),
		MaxOpenConns:    envInt("DB_MAX_OPEN_CONNS", 32),
		MaxIdleConns:    envInt("DB_MAX_IDLE_CONNS", 32),
		ConnMaxLifetime: envDuration("DB_CONN_MAX_LIFETIME", 30*time.Minute),
		ConnMaxIdleTime: envDuration("DB_CONN_MAX_IDLE_TIME", 5*time.Minute),
		ShutdownTimeout: envDuration("SHUTDOWN_TIMEOUT", 20*time.Second),

		PlaygroundAPIKey: os.Getenv("PLAYGROUND_API_KEY"),
	}
	// The server-side bound defaults just above the request timeout: the
	// context cancels first, and a statement whose cancel got lost still
	// ends on the server.
	c.StatementTimeout = envDuration("DB_STATEMENT_TIMEOUT", c.RequestTimeout+time.Second)
	for _, o := range strings.Split(env("CORS_ORIGINS", ""), ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.CORSOrigins = append(c.CORSOrigins, o)
		}
	}
	c.Upstream = upstreamConfigFromEnv()
	return c
}

// upstreamConfigFromEnv reads the online source; without UPSTREAM_URL there
// is none and the imported snapshot is authoritative.
func upstreamConfigFromEnv() *upstream.Config {
	u := env("UPSTREAM_URL", "")
	if u == "" {
		return nil
	}
	c := &upstream.Config{
		URL: u,
		Key: env("UPSTREAM_KEY", ""),
		Timeouts: map[string]time.Duration{
			upstream.PortalRegistry:      envDuration("UPSTREAM_TIMEOUT_RFB", upstream.DefaultTimeout),
			upstream.PortalSimples:       envDuration("UPSTREAM_TIMEOUT_SIMPLES", upstream.DefaultTimeout),
			upstream.PortalRegistrations: envDuration("UPSTREAM_TIMEOUT_CCC", upstream.DefaultTimeout),
		},
		BreakerFailures: envInt("UPSTREAM_BREAKER_FAILURES", upstream.DefaultBreakerFailures),
		BreakerCooldown: envDuration("UPSTREAM_BREAKER_COOLDOWN", upstream.DefaultBreakerCooldown),
		Retries:         envInt("UPSTREAM_RETRIES", upstream.DefaultRetries),
		Strategy:        env("UPSTREAM_STRATEGY", upstream.DefaultStrategy),
		MaxAge:          envInt("UPSTREAM_MAX_AGE", upstream.DefaultMaxAge),
	}
	if c.Retries == 0 {
		c.Retries = -1 // UPSTREAM_RETRIES=0 means none, not the default
	}
	if c.BreakerFailures == 0 {
		c.BreakerFailures = -1 // likewise: 0 disables the breaker
	}
	for _, p := range strings.Split(env("UPSTREAM_PORTALS", ""), ",") {
		if p = strings.TrimSpace(p); p != "" {
			c.Portals = append(c.Portals, p)
		}
	}
	return c
}

// withSessionSettings adds connection parameters to a URL-form DSN unless
// the operator set them: a statement timeout so no query outlives its
// request by much, and a connect timeout so an unreachable server fails fast.
func withSessionSettings(dsn string, statementTimeout time.Duration) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return dsn
	}
	q := u.Query()
	if q.Get("statement_timeout") == "" && statementTimeout > 0 {
		q.Set("statement_timeout", fmt.Sprint(statementTimeout.Milliseconds()))
	}
	if q.Get("connect_timeout") == "" {
		q.Set("connect_timeout", "5")
	}
	// Every lookup is a key lookup whose best plan never depends on the
	// value: plan once per prepared statement, not on every execution
	// (custom plans cost more than the lookup itself).
	if q.Get("plan_cache_mode") == "" {
		q.Set("plan_cache_mode", "force_generic_plan")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func runServe(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", "", "listen address (default $ADDR or :8080)")
	_ = fs.Parse(args)
	cfg := serveConfigFromEnv()
	if *addr != "" {
		cfg.Addr = *addr
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if os.Getenv("GOGC") == "" {
		// Answers are short-lived garbage; collecting less often bought a
		// third more nested GraphQL queries per second in make bench. The
		// live heap is small, so memory stays modest; GOGC overrides.
		debug.SetGCPercent(400)
	}

	dsn := databaseURL()
	if err := db.EnsureDatabase(ctx, dsn); err != nil {
		return err
	}
	d, err := db.Open(ctx, withSessionSettings(dsn, cfg.StatementTimeout))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := db.Migrate(ctx, d); err != nil {
		return err
	}
	d.SetMaxOpenConns(cfg.MaxOpenConns)
	d.SetMaxIdleConns(cfg.MaxIdleConns)
	d.SetConnMaxLifetime(cfg.ConnMaxLifetime)
	d.SetConnMaxIdleTime(cfg.ConnMaxIdleTime)

	metrics := rest.NewMetrics(d.DB)
	store := db.NewStore(d, db.StoreOptions{OnQuery: metrics.RoundTrip})
	opts := resolvers.Options{Logger: log}
	if cfg.Upstream != nil {
		client, err := upstream.New(*cfg.Upstream)
		if err != nil {
			return err
		}
		opts.Upstream = client
		for p, d := range cfg.Upstream.Timeouts {
			// A CACHE_IF_ERROR fallback to stale data needs time left after
			// the source timed out.
			if d >= cfg.RequestTimeout {
				log.Warn("upstream timeout not below REQUEST_TIMEOUT: a timed-out source fails the request instead of falling back to cached data",
					slog.String("portal", p), slog.Duration("timeout", d), slog.Duration("requestTimeout", cfg.RequestTimeout))
			}
		}
		log.Info("online source", slog.String("url", cfg.Upstream.URL), slog.Any("portals", cfg.Upstream.Portals))
	}
	var (
		authenticate func(http.Handler) http.Handler
		meter        graphqlapi.Meter
		authSvc      *auth.Service
	)
	if env("AUTH_DISABLED", "") == "true" {
		log.Warn("AUTH_DISABLED=true: every lookup is served without a credential, limits or credits")
	} else {
		ac, err := auth.ConfigFromEnv()
		if err != nil {
			return err
		}
		ac.DB, ac.Logger = d, log
		authSvc, err = auth.New(ctx, ac)
		if err != nil {
			return err
		}
		defer func() { _ = authSvc.Close() }() // writes the usage rows still buffered
		authenticate = authSvc.Middleware(auth.PermissionFor, rest.RenderError)
		online := authSvc.Costs().Online
		// Each portal answered online costs its price; cached answers never do.
		opts.Charge = func(ctx context.Context, portals int) error { return auth.Charge(ctx, portals*online) }
		meter = graphqlapi.AuthMeter(opts.Upstream != nil, online)
	}

	svc := resolvers.New(store, opts)
	if snap, err := svc.Ready(ctx); err != nil {
		msg := "no live snapshot yet: lookups answer 503 until an import"
		if cfg.Upstream != nil {
			msg = "no live snapshot: office, registry and Simples lookups come from the upstream and the overlay; company and person lookups answer 503 until an import"
		}
		log.Warn(msg, slog.String("error", err.Error()))
	} else {
		log.Info("serving snapshot", slog.Int64("id", snap.ID), slog.String("month", snap.DumpMonth),
			slog.String("date", snap.ReferenceDate.Format("2006-01-02")))
	}

	deps := rest.Deps{
		Service:        svc,
		Logger:         log,
		Metrics:        metrics,
		RequestTimeout: cfg.RequestTimeout,
		CORSOrigins:    cfg.CORSOrigins,
		Authenticate:   authenticate,
		Mount: graphqlapi.Mount(graphqlapi.Options{
			Service:   svc,
			Logger:    log,
			RequestID: rest.RequestID,
			Meter:     meter,
		}),
		MountPublic: graphqlapi.MountPlayground(playground.Options{
			Endpoint:     "/graphql",
			APIKey:       cfg.PlaygroundAPIKey,
			ExampleQuery: graphqlapi.ExampleQuery(exampleTaxID(ctx, d)),
		}),
	}
	if authSvc != nil {
		c := authSvc.Costs()
		deps.Costs = &rest.Costs{Certificate: c.Certificate, Map: c.Map, Street: c.Street}
		deps.Charge = auth.Charge
		// Links in legacy answers open the file for the account that asked.
		deps.SignURL = func(ctx context.Context, path string, q url.Values, expires time.Time) string {
			p, ok := auth.PrincipalFrom(ctx)
			if !ok {
				return path + "?" + q.Encode()
			}
			return authSvc.SignURL(path, q, strconv.FormatInt(p.AccountID, 10), expires)
		}
	}
	if err := documentProviders(&deps, log); err != nil {
		return err
	}
	srv := &http.Server{
		Addr:              cfg.Addr,
		Handler:           rest.NewRouter(deps),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      cfg.RequestTimeout + 5*time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if a := env("PPROF_ADDR", ""); a != "" {
		// Profiles for operators chasing a slow instance; off unless asked,
		// and on its own listener so it is never exposed with the API.
		go func() {
			log.Info("pprof listening", slog.String("addr", a))
			_ = http.ListenAndServe(a, pprofMux()) //nolint:gosec // operator-only, opt-in
		}()
	}
	errc := make(chan error, 1)
	go func() {
		log.Info("listening", slog.String("addr", cfg.Addr))
		errc <- srv.ListenAndServe()
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Stop accepting, let requests in flight finish.
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
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
