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
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/resolvers"
	"github.com/cnpjgraph/cnpjgraph/rest"
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

	url := databaseURL()
	if err := db.EnsureDatabase(ctx, url); err != nil {
		return err
	}
	d, err := db.Open(ctx, withSessionSettings(url, cfg.StatementTimeout))
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
	svc := resolvers.New(store, resolvers.Options{})
	if snap, err := svc.Ready(ctx); err != nil {
		log.Warn("no live snapshot yet: lookups answer 503 until an import", slog.String("error", err.Error()))
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
