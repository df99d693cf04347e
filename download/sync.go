package download

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/importer"
)

// SyncOptions of a sync: the download's, and how to import.
type SyncOptions struct {
	Options
	Keep    bool         // keep the month folders older than the imported one
	Logger  *slog.Logger // the import's log; nil: none
	Streams int          // the import's COPY streams; 0: its default
	// WordTables: whether the import builds the word tables (default: as
	// the live snapshot; importer.Options).
	WordTables importer.Choice
	// OfficeLookups: whether the import derives office_lookups (default:
	// as the live snapshot; importer.Options).
	OfficeLookups importer.Choice
	// Now is the clock of the live dump's age; nil: time.Now.
	Now func() time.Time
	// AllowShrink imports a month with under half the live snapshot's
	// establishments (importer.Options.AllowShrink).
	AllowShrink bool
}

// StaleAfterDays is the age of the live dump's reference date past which
// a sync that finds nothing newer warns (and `cnpjgraph status`): the
// Receita publishes monthly, so a share that stopped moving, or a share
// URL that no longer points at it, would otherwise hide behind a daily
// "up to date".
const StaleAfterDays = 45

// AgeDays is how old a dump of reference date ref is at now, in whole
// UTC days; 0 for a clock behind it.
func AgeDays(ref, now time.Time) int {
	y, m, d := ref.UTC().Date()
	ny, nm, nd := now.UTC().Date()
	return max(0, int(time.Date(ny, nm, nd, 0, 0, 0, 0, time.UTC).Sub(time.Date(y, m, d, 0, 0, 0, 0, time.UTC))/(24*time.Hour)))
}

// SyncResult tells what a sync did.
type SyncResult struct {
	Month    string      // the share's month considered
	Live     string      // the live snapshot's dump month before the sync; "" if none
	Imported bool        // false: up to date
	Snapshot db.Snapshot // the new live snapshot, when imported
	Download Result
	Removed  []string // older month folders removed
}

// Sync imports the share's newest month (or opts.Month) when it is newer
// than the live snapshot: download, verify, then the importer's
// zero-downtime swap. It holds the folder's lock throughout, so a second
// sync fails fast with ErrBusy; a concurrent `cnpjgraph import` makes it
// fail with importer.ErrImportRunning.
func Sync(ctx context.Context, d *sqlx.DB, opts SyncOptions) (SyncResult, error) {
	var res SyncResult
	if err := opts.Config.Validate(); err != nil {
		return res, err
	}
	say := func(format string, args ...any) {
		w := opts.Progress
		if w == nil {
			w = io.Discard
		}
		_, _ = fmt.Fprintf(w, "sync: "+format+"\n", args...)
	}
	root := opts.dir()
	lock, err := lockDir(root, "sync")
	if err != nil {
		return res, err
	}
	defer lock.unlock()

	live, err := db.LiveSnapshot(ctx, d)
	if err != nil && !errors.Is(err, db.ErrNoSnapshot) {
		return res, fmt.Errorf("read the live snapshot: %w", err)
	}
	res.Live = live.DumpMonth

	out := newProgress(opts.Progress, opts.ProgressInterval)
	c, err := newClientFor(opts.Options, out)
	if err == nil {
		res.Month, err = c.pickMonth(ctx, opts.Month)
	}
	if err != nil || res.Month <= res.Live {
		out.close()
		if err == nil {
			say("up to date: the live snapshot #%d is dump %s; the share's is %s", live.ID, res.Live, res.Month)
			now := time.Now
			if opts.Now != nil {
				now = opts.Now
			}
			if days := AgeDays(live.ReferenceDate, now()); live.ID != 0 && days > StaleAfterDays {
				say("warning: the live dump's reference date, %s, is %d days old, and the share has nothing newer: "+
					"the Receita has not published since, or RFB_SHARE_URL no longer points at its share",
					live.ReferenceDate.Format("2006-01-02"), days)
			}
		}
		return res, err
	}
	if res.Live == "" {
		say("no live snapshot; importing %s", res.Month)
	} else {
		say("the share has %s, newer than the live snapshot's %s (#%d); importing it", res.Month, res.Live, live.ID)
	}
	res.Download, err = fetchMonth(ctx, c, opts.Options, res.Month, out)
	out.close()
	if err != nil {
		return res, err
	}

	dir := res.Download.Dir
	res.Snapshot, err = importer.Import(ctx, d, importer.Options{
		Paths:          []string{dir},
		Municipalities: filepath.Join(dir, TABMUNFile),
		Countries:      filepath.Join(dir, CountriesFile),
		DumpMonth:      res.Month,
		Progress:       opts.Progress,
		Logger:         opts.Logger,
		Streams:        opts.Streams,
		WordTables:     opts.WordTables,
		OfficeLookups:  opts.OfficeLookups,
		AllowShrink:    opts.AllowShrink,
	})
	if err != nil {
		return res, fmt.Errorf("import %s: %w", dir, err)
	}
	res.Imported = true
	say("snapshot #%d is live: dump %s", res.Snapshot.ID, res.Snapshot.DumpMonth)
	if !opts.Keep {
		res.Removed, err = removeOlder(root, res.Month)
		for _, r := range res.Removed {
			say("removed %s", r)
		}
		if err != nil {
			// The import is live; a folder left behind is only disk.
			say("warning: removing old month folders: %v", err)
		}
	}
	return res, nil
}

// removeOlder deletes root's month folders older than month.
func removeOlder(root, month string) ([]string, error) {
	months, err := monthFolders(root)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, m := range months {
		if m >= month {
			continue
		}
		p := filepath.Join(root, m)
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}
