package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/importer"
	"github.com/cnpjgraph/cnpjgraph/importer/generator"
)

func init() { commands["dev"] = runDev }

// runDev is `make run`: the embedded default on a fresh machine. It migrates,
// generates a sample dump (once), imports it when nothing is served yet,
// creates a development account, prints its key, and serves on
// 127.0.0.1:8080 (config.DevAddr) unless ADDR says otherwise.
func runDev(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("dev", flag.ExitOnError)
	providers, err := devProviders(ctx) // before the configuration is read: it fills unset providers
	if err != nil {
		return err
	}
	cfg := loadConfig()
	// A second `make run` beside the first stops here, before it imports
	// or prints a key for a server that could not start.
	ln, err := bind(cfg.DevListenAddr())
	if err != nil {
		return err
	}
	_ = ln.Close()
	dir := fs.String("sample", cfg.Dev.SampleDir, "where the generated sample dump lives")
	companies := fs.Int("companies", cfg.Dev.SampleCompanies, "companies in the generated sample")
	reimport := fs.Bool("reimport", false, "import the sample even when a snapshot is already served")
	_ = fs.Parse(args)

	d, err := openMigrated(ctx)
	if err != nil {
		return err
	}
	defer d.Close()

	if _, err := os.Stat(filepath.Join(*dir, "Estabelecimentos0.zip")); err != nil {
		fmt.Printf("dev: generating a sample dump of %d companies in %s\n", *companies, *dir)
		if _, err := generator.Generate(generator.Options{Companies: *companies, Out: *dir, Seed: 1}); err != nil {
			return fmt.Errorf("generate sample: %w", err)
		}
	}
	_, err = db.LiveSnapshot(ctx, d)
	switch {
	case errors.Is(err, db.ErrNoSnapshot) || (err == nil && *reimport):
		fmt.Printf("dev: importing %s\n", *dir)
		start := time.Now()
		snap, err := importer.Import(ctx, d, importer.Options{
			Paths:    []string{*dir},
			Progress: os.Stderr,
			// A small sample: the word tables cost little here and make
			// the playground's name searches take the production path.
			WordTables: importer.On,
			Logger:     slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			// --reimport asks for the sample over whatever is served.
			AllowShrink: true,
		})
		if err != nil {
			return fmt.Errorf("import sample: %w", err)
		}
		fmt.Printf("dev: snapshot #%d imported in %s\n", snap.ID, time.Since(start).Round(time.Millisecond))
	case err != nil:
		return err
	default:
		fmt.Println("dev: a snapshot is already served (use --reimport to import the sample again)")
	}
	key, err := auth.EnsureDevAccount(ctx, d)
	if err != nil {
		return fmt.Errorf("development account: %w", err)
	}
	// This machine only, unless ADDR says otherwise; the playground opens
	// with the key in its Authorization header, on loopback only.
	cfg.Server.Addr = cfg.DevListenAddr()
	cfg.Server.PlaygroundAPIKey = key
	base := "http://" + cfg.Server.Addr
	if strings.HasPrefix(base, "http://:") { // a port alone: every interface
		base = "http://localhost" + strings.TrimPrefix(base, "http://")
	}
	playgroundNote := "the key is already in its Authorization header"
	if !loopback(cfg.Server.Addr) {
		playgroundNote = "paste the key into its Authorization header: it is embedded only when listening on loopback"
	}
	example := "33683111000280"
	// A head office with members makes a telling first request.
	_ = d.GetContext(ctx, &example, `SELECT o.tax_id FROM cnpj.offices o
		WHERE o.head AND o.status = '02' AND EXISTS (SELECT 1 FROM cnpj.members m WHERE m.root = o.root)
		ORDER BY o.tax_id LIMIT 1`)
	fmt.Printf(`
dev: the development API key (send it raw in the Authorization header):

    %s

    curl -H 'Authorization: %s' '%s/office/%s?simples=true'
    playground: %s/playground (%s)

`, key, key, base, example, base, playgroundNote)
	printDevFeatures(ctx, d, providers, key, base, example)
	return serve(ctx, cfg)
}
