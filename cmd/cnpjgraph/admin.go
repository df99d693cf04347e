package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/download"
	"github.com/cnpjgraph/cnpjgraph/importer"
)

// openMigrated connects to DATABASE_URL, creating the database if needed, and
// applies pending migrations.
func openMigrated(ctx context.Context) (*sqlx.DB, error) {
	url := databaseURL()
	if err := db.EnsureDatabase(ctx, url); err != nil {
		return nil, err
	}
	d, err := db.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx, d); err != nil {
		_ = d.Close()
		return nil, err
	}
	return d, nil
}

func runMigrate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("migrate", flag.ExitOnError)
	_ = fs.Parse(args)
	d, err := openMigrated(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	fmt.Println("migrations applied")
	return nil
}

func runStatus(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("status", flag.ExitOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	_ = fs.Parse(args)
	d, err := db.Open(ctx, databaseURL())
	if err != nil {
		return err
	}
	defer d.Close()
	live, liveErr := db.LiveSnapshot(ctx, d)
	if liveErr != nil && !errors.Is(liveErr, db.ErrNoSnapshot) {
		return liveErr
	}
	recent, err := db.RecentSnapshots(ctx, d, 5)
	if err != nil {
		return err
	}
	var words, lookups bool // the live snapshot has the word tables of name search, office_lookups' table
	if live.ID != 0 {
		if words, err = db.HasWordTables(ctx, d); err != nil {
			return err
		}
		kind, err := db.OfficeLookupsKind(ctx, d)
		if err != nil {
			return err
		}
		lookups = kind == "table"
	}
	if *asJSON {
		out := map[string]any{"recent": recent}
		if live.ID != 0 {
			out["live"], out["wordTables"], out["officeLookups"] = live, words, lookups
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	var missing *db.MissingTablesError
	switch {
	case errors.As(liveErr, &missing):
		fmt.Println("live snapshot: none: " + missing.Error())
	case live.ID == 0:
		fmt.Println("live snapshot: none (run 'cnpjgraph import PATH...')")
	default:
		days, age := dumpAge(live.ReferenceDate, time.Now())
		fmt.Printf("live snapshot: #%d, dump %s, reference date %s (%s)\n", live.ID, live.DumpMonth, live.ReferenceDate.Format("2006-01-02"), age)
		if days > download.StaleAfterDays { // imports stopped: the README's alert says the same
			fmt.Printf("  warning: the dump is %d days old, and the Receita publishes one a month: "+
				"'cnpjgraph sync' fetches and imports the newest (README, \"Keeping the registry current\")\n", days)
		}
		if live.FinishedAt != nil {
			fmt.Printf("  imported %s in %s\n", live.FinishedAt.UTC().Format("2006-01-02 15:04:05 MST"), live.FinishedAt.Sub(live.StartedAt).Round(1e9))
		}
		fmt.Printf("  rows:     %s\n", rowCountsText(live.RowCounts))
		fmt.Printf("  rejected: %s\n", rejectedText(live.RejectedRows))
		if words {
			fmt.Println("  word tables: yes (imports keep them; import --word-tables=false drops them)")
		} else {
			fmt.Println("  word tables: no (import --word-tables builds them: faster name searches)")
		}
		if lookups {
			fmt.Println("  office lookups: yes (an office with its company in one row; imports keep it; import --office-lookups=false: a smaller snapshot)")
		} else {
			fmt.Println("  office lookups: no (reads join each office to its company; imports keep that; import --office-lookups derives the table)")
		}
	}
	if len(recent) > 0 {
		fmt.Println("recent imports:")
		w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(w, "  id\tstate\tdump\tstarted\terror")
		for _, s := range recent {
			e := ""
			if s.Error != nil {
				e = *s.Error
			}
			fmt.Fprintf(w, "  %d\t%s\t%s\t%s\t%s\n", s.ID, s.State, s.DumpMonth, s.StartedAt.UTC().Format("2006-01-02 15:04:05"), e)
		}
		_ = w.Flush()
	}
	return nil
}

// registryTables are the snapshot's tables of rows, in the order status
// lists them; the code tables follow, by name.
var registryTables = []string{"companies", "offices", "members", "persons", "simples", "simples_periods"}

// dumpAge is how old the dump of reference date ref is at now, in whole
// UTC days (download.AgeDays), and those days in words.
func dumpAge(ref, now time.Time) (days int, age string) {
	days = download.AgeDays(ref, now)
	switch days {
	case 0:
		return 0, "today"
	case 1:
		return 1, "1 day ago"
	}
	return days, fmt.Sprintf("%d days ago", days)
}

// rowCountsText is a snapshot's row counts for a reader: the registry's
// tables, then the code tables ("-json" prints them as stored).
func rowCountsText(raw json.RawMessage) string {
	var counts map[string]int64
	if err := json.Unmarshal(raw, &counts); err != nil || len(counts) == 0 {
		return string(raw)
	}
	var main, codes []string
	for _, t := range registryTables {
		if n, ok := counts[t]; ok {
			main = append(main, t+" "+thousands(n))
			delete(counts, t)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(counts)) {
		codes = append(codes, t+" "+thousands(counts[t]))
	}
	text := strings.Join(main, ", ")
	if len(codes) > 0 {
		text += "\n            code tables: " + strings.Join(codes, ", ")
	}
	return text
}

// rejectedText is what an import rejected, for a reader: the count, per
// file, and the first rejected row.
func rejectedText(raw json.RawMessage) string {
	var r importer.Rejects
	if err := json.Unmarshal(raw, &r); err != nil {
		return string(raw)
	}
	if r.Total == 0 {
		return "none"
	}
	var files []string
	for _, f := range slices.Sorted(maps.Keys(r.Files)) {
		files = append(files, f+" "+thousands(r.Files[f]))
	}
	text := thousands(r.Total) + " rows (" + strings.Join(files, ", ") + ")"
	if len(r.Samples) > 0 {
		s := r.Samples[0]
		text += fmt.Sprintf("; the first: %s line %d: %s", s.File, s.Line, s.Reason)
	}
	return text + " (status -json lists up to 10)"
}

// thousands is n with its thousands separated by commas: 1,000,083.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	start := 0
	if n < 0 {
		start = 1
	}
	for i := len(s) - 3; i > start; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
