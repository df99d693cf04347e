package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/cnpjgraph/cnpjgraph/importer"
)

func init() { commands["import"] = runImport }

func runImport(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("import", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: cnpjgraph import [flags] PATH...

Imports a Receita Federal CNPJ dump: a folder of its ZIPs, ZIP files, or the
extracted member files. The data is loaded beside the served snapshot and
swapped in at the end; the service keeps answering meanwhile.

Flags:
`)
		fs.PrintDefaults()
	}
	municipalities := fs.String("municipalities", "", "TABMUN.CSV (Tesouro Nacional SIAFI table) mapping RFB municipality codes to IBGE; default: one found beside the ZIPs")
	countries := fs.String("countries", "", "RFB->M49 country table (paises-m49.csv layout or Comex Stat PAIS.csv); default: one found beside the ZIPs, else only Brasil is mapped")
	month := fs.String("month", "", "dump month YYYY-MM; default: a YYYY-MM folder in PATH, else the newest file's month")
	maxRejected := fs.Float64("max-rejected", 0.001, "largest tolerated share of rejected rows per file (0.001 = 0.1%)")
	streams := fs.Int("streams", 2, "concurrent COPY streams and index builds")
	fs.Bool("word-tables", false, "build the word tables: name searches read a page and their count by index (3.5-4x their throughput), at about 70% more import time and 55% more disk (docs/api.md); =false: without them; default: as the live snapshot")
	fs.Bool("office-lookups", false, officeLookupsUsage)
	allowShrink := fs.Bool("allow-shrink", false, allowShrinkUsage)
	verbose := fs.Bool("v", false, "log every statement")
	_ = fs.Parse(args)
	if fs.NArg() == 0 {
		fs.Usage()
		os.Exit(2)
	}
	bad := flagsAtLeastOne(fs, "streams")
	if *maxRejected < 0 || *maxRejected > 1 {
		bad = append(bad, fmt.Sprintf("--max-rejected is a share of a file's rows, from 0 to 1 (given %g; 0.001 is 0.1%%)", *maxRejected))
	}
	exitOnBadFlags(fs, "import", bad)
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	ratio := *maxRejected
	if ratio == 0 {
		ratio = -1 // the flag's 0 means none tolerated; the API's zero means the default
	}
	d, err := openMigrated(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	start := time.Now()
	snap, err := importer.Import(ctx, d, importer.Options{
		Paths:          fs.Args(),
		Municipalities: *municipalities,
		Countries:      *countries,
		DumpMonth:      *month,
		MaxRejectRatio: ratio,
		Progress:       os.Stderr,
		Logger:         logger,
		Streams:        *streams,
		WordTables:     choiceFlag(fs, "word-tables"),
		OfficeLookups:  choiceFlag(fs, "office-lookups"),
		AllowShrink:    *allowShrink,
	})
	if err != nil {
		return err
	}
	took := time.Since(start)
	var counts map[string]int64
	_ = json.Unmarshal(snap.RowCounts, &counts)
	var rejected struct {
		Total   int64 `json:"total"`
		Samples []struct {
			File   string `json:"file"`
			Line   int    `json:"line"`
			Reason string `json:"reason"`
		} `json:"samples"`
	}
	_ = json.Unmarshal(snap.RejectedRows, &rejected)
	fmt.Printf("snapshot #%d is live: dump %s, reference date %s\n", snap.ID, snap.DumpMonth, snap.ReferenceDate.Format("2006-01-02"))
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	tables := make([]string, 0, len(counts))
	for t := range counts {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		fmt.Fprintf(w, "  %s\t%d\t\n", t, counts[t])
	}
	_ = w.Flush()
	// Input rows: the four big files, which is what the throughput is about.
	input := counts["companies"] + counts["offices"] + counts["members"] + counts["simples"] + rejected.Total
	fmt.Printf("rejected rows: %d\n", rejected.Total)
	for _, s := range rejected.Samples {
		fmt.Printf("  %s line %d: %s\n", s.File, s.Line, s.Reason)
	}
	fmt.Printf("duration: %s, %d input rows, %.0f rows/s\n", took.Round(time.Millisecond), input, float64(input)/took.Seconds())
	return nil
}

// allowShrinkUsage is the -allow-shrink flag's help, of import and sync.
const allowShrinkUsage = "import a dump with under half the live snapshot's establishments, refused otherwise (a partial or broken month)"

// officeLookupsUsage is the -office-lookups flag's help, of import and sync.
const officeLookupsUsage = "derive office_lookups, an office with its company in one row, which office lookups and search pages read; " +
	"=false: a view of the join instead, for a snapshot about 30% smaller and a faster import (README, \"Importing the real dump\"); " +
	"default: as the live snapshot (none: on)"

// choiceFlag is the import's choice from the boolean flag name of fs
// (-word-tables, -office-lookups): on, off (=false), or as the live
// snapshot when the flag is not given.
func choiceFlag(fs *flag.FlagSet, name string) importer.Choice {
	choice := importer.AsLive
	fs.Visit(func(f *flag.Flag) {
		if f.Name != name {
			return
		}
		choice = importer.Off
		if f.Value.String() == "true" {
			choice = importer.On
		}
	})
	return choice
}
