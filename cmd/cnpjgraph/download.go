package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/cnpjgraph/cnpjgraph/download"
	"github.com/cnpjgraph/cnpjgraph/importer"
)

func init() { commands["download"] = runDownload }

// exitBusy is the exit status of a download or sync that found another one
// (or an import) running: nothing was done, and the next run will retry.
const exitBusy = 3

func runDownload(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("download", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: cnpjgraph download [flags] DIR

Downloads a month of the Receita Federal's CNPJ dump from its share
(RFB_SHARE_URL) into DIR/YYYY-MM: the 37 ZIPs, verified (size and CRC),
plus TABMUN.CSV and PAIS.csv (TABMUN_URL, COUNTRIES_URL) unless present.
Interrupted files resume; a complete folder is not fetched again.
Exit status: 0 done, 1 failed, 2 usage, 3 another download or sync is
running in DIR.

Flags:
`)
		fs.PrintDefaults()
	}
	month := fs.String("month", "latest", "month to fetch, YYYY-MM, or latest")
	jobs := fs.Int("jobs", 4, "files downloaded at once")
	_ = fs.Parse(args)
	if fs.NArg() != 1 {
		fs.Usage()
		os.Exit(2)
	}
	exitOnBadFlags(fs, "download", flagsAtLeastOne(fs, "jobs"))
	cfg := loadConfig().Download
	res, err := download.Download(ctx, download.Options{
		Config: cfg, Dir: fs.Arg(0), Month: *month, Jobs: *jobs, Progress: os.Stderr,
	})
	exitIfBusy("download", err)
	if err != nil {
		return err
	}
	fmt.Printf("%s is complete in %s: %d files fetched, %d already there, %.1f MiB received\n",
		res.Month, res.Dir, res.Downloaded, res.Skipped, float64(res.Received)/(1<<20))
	return nil
}

// exitIfBusy ends the process with exitBusy when err says another download,
// sync or import holds the lock, so a scheduler can tell "skipped" from
// "failed".
func exitIfBusy(command string, err error) {
	if errors.Is(err, download.ErrBusy) || errors.Is(err, importer.ErrImportRunning) {
		fmt.Fprintf(os.Stderr, "cnpjgraph: %s: %v\n", command, err)
		os.Exit(exitBusy)
	}
}
