package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/cnpjgraph/cnpjgraph/download"
)

func init() { commands["sync"] = runSync }

func runSync(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sync", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: cnpjgraph sync [flags]

Imports the newest month of the Receita Federal's share when it is newer
than the live snapshot: downloads it into DIR/YYYY-MM (see 'cnpjgraph
download'), imports it beside the served snapshot and swaps it in, then
removes older month folders. Otherwise prints "up to date". Safe to run
from cron while 'cnpjgraph serve' runs.
Exit status: 0 imported or up to date, 1 failed (the served data is
untouched), 2 usage, 3 another sync, download or import is running.

Flags:
`)
		fs.PrintDefaults()
	}
	dir := fs.String("dir", "", "download folder (default $RFB_DIR, else .data/rfb)")
	month := fs.String("month", "latest", "month to consider, YYYY-MM, or latest")
	keep := fs.Bool("keep", false, "keep the month folders older than the imported one")
	jobs := fs.Int("jobs", 4, "files downloaded at once")
	streams := fs.Int("streams", 2, "the import's concurrent COPY streams and index builds")
	fs.Bool("word-tables", false, "build the word tables, or not (=false); default: as the live snapshot (see cnpjgraph import -h)")
	fs.Bool("office-lookups", false, officeLookupsUsage)
	allowShrink := fs.Bool("allow-shrink", false, allowShrinkUsage)
	_ = fs.Parse(args)
	if fs.NArg() > 0 {
		fs.Usage()
		os.Exit(2)
	}
	exitOnBadFlags(fs, "sync", flagsAtLeastOne(fs, "jobs", "streams"))
	cfg := loadConfig().Download
	d, err := openMigrated(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	res, err := download.Sync(ctx, d, download.SyncOptions{
		Options:       download.Options{Config: cfg, Dir: *dir, Month: *month, Jobs: *jobs, Progress: os.Stderr},
		Keep:          *keep,
		Logger:        slog.New(slog.NewTextHandler(os.Stderr, nil)),
		Streams:       *streams,
		WordTables:    choiceFlag(fs, "word-tables"),
		OfficeLookups: choiceFlag(fs, "office-lookups"),
		AllowShrink:   *allowShrink,
	})
	exitIfBusy("sync", err)
	if err != nil {
		return err
	}
	if !res.Imported {
		fmt.Printf("up to date: live dump %s, the share's newest is %s\n", res.Live, res.Month)
		return nil
	}
	fmt.Printf("snapshot #%d is live: dump %s (was %s)\n", res.Snapshot.ID, res.Snapshot.DumpMonth, orNone(res.Live))
	return nil
}

func orNone(month string) string {
	if month == "" {
		return "none"
	}
	return month
}
