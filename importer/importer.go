// Package importer loads the Receita Federal's CNPJ dump into PostgreSQL: it
// streams the ZIPs through a Latin-1 CSV parser into COPY, builds a complete
// snapshot in a staging schema, and swaps it in with one short transaction,
// so readers never see a half-loaded dump and a failed import changes
// nothing that is served.
package importer

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"golang.org/x/sync/errgroup"

	"github.com/cnpjgraph/cnpjgraph/db"
)

const (
	stagingSchema = "cnpj_staging"
	retiredSchema = "cnpj_retired"
	// lockKey is the session advisory lock that makes imports exclusive.
	lockKey = int64(0x636e706a_696d7074) // "cnpjimpt"
	// appName marks the import's sessions, so the next import can end the
	// orphaned ones of an import that was killed.
	appName = "cnpjgraph import"
	// maxSamples is how many rejected rows are listed in the snapshot.
	maxSamples = 10
)

// ErrImportRunning means another import holds the import lock.
var ErrImportRunning = errors.New("another import is already running on this database (it holds the import lock); wait for it to finish")

// Options of an import.
type Options struct {
	Paths          []string     // folders of ZIPs, ZIPs, or extracted member files
	Municipalities string       // TABMUN.CSV path (required; found beside the ZIPs if not given)
	Countries      string       // RFB->M49 table (paises-m49.csv layout or Comex Stat PAIS.csv); optional
	DumpMonth      string       // "YYYY-MM"; empty: a YYYY-MM path component, else the newest file's month
	ReferenceDate  time.Time    // the data's date; zero: the newest file's modification date
	MaxRejectRatio float64      // per file; 0 means 0.001; negative means no rejected row is tolerated
	Progress       io.Writer    // progress output; bars on a terminal, else a line every few seconds
	Logger         *slog.Logger // nil: no logging
	Streams        int          // concurrent COPY streams and index builds; 0 means 2
	// WordTables: whether to build the word tables (office_words,
	// person_words), which make name searches read a page by index
	// (wordTablesSQL, personWordsSQL); without them name searches use the
	// GIN indexes alone. By default an import does as the live snapshot,
	// so the monthly sync keeps what the operator chose.
	WordTables Choice
	// OfficeLookups: whether to derive office_lookups, each office with its
	// company in one row, which the office reads read (db/officelookup.go).
	// Off, it is a view of the join (db.OfficeLookupsViewSQL): a snapshot
	// about 30 % smaller and an import that skips its biggest statement, where
	// a lookup reads two rows instead of one (docs/benchmarks.md, "A snapshot
	// without office_lookups"). By default an import does as the live snapshot
	// (a view: off; a table, or none: on), so the monthly sync keeps what the
	// operator chose.
	OfficeLookups Choice
	// VisibilityWait: how long the vacuum phase waits for transactions
	// older than the import's rows to end, so VACUUM can mark every page
	// all-visible, before it warns and goes on (run.vacuum); 0 means a
	// minute, negative means no wait.
	VisibilityWait time.Duration
	// AllowShrink imports a dump with fewer than half the live snapshot's
	// establishments, which is refused otherwise (run.checkShrink).
	AllowShrink bool
	// WordTablesAdvisedAt: an import of at least this many establishments
	// without the word tables advises building them (run.adviseWordTables);
	// 0 means DefaultWordTablesAdvisedAt.
	WordTablesAdvisedAt int64
}

// DefaultWordTablesAdvisedAt is where name searches want the word tables:
// on the 1M-establishment bench dump every search meets its bar without
// them; at ten times it a name word with a state took p99 115-128 ms
// without them and 25 ms with them (docs/benchmarks.md, "Ten million
// establishments"), and the registry is some 68 million.
const DefaultWordTablesAdvisedAt = 5_000_000

// Choice is whether an import builds something optional: the word tables
// (Options.WordTables), office_lookups (Options.OfficeLookups).
type Choice uint8

// The choices.
const (
	AsLive Choice = iota // as the live snapshot (none live: each option says)
	On
	Off
)

// Import loads the dump named by opts.Paths and swaps it in as the live
// snapshot. On failure the snapshot row is marked failed, the staging schema
// dropped, and the live snapshot is untouched.
func Import(ctx context.Context, d *sqlx.DB, opts Options) (db.Snapshot, error) {
	if opts.MaxRejectRatio == 0 {
		opts.MaxRejectRatio = 0.001
	}
	if opts.MaxRejectRatio < 0 {
		opts.MaxRejectRatio = 0
	}
	if opts.VisibilityWait == 0 {
		opts.VisibilityWait = time.Minute
	}
	if opts.WordTablesAdvisedAt <= 0 {
		opts.WordTablesAdvisedAt = DefaultWordTablesAdvisedAt
	}
	if opts.Streams <= 0 {
		opts.Streams = 2
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	found, err := discover(opts.Paths)
	if err != nil {
		return db.Snapshot{}, err
	}
	if err := found.complete(); err != nil {
		return db.Snapshot{}, err
	}
	if opts.Municipalities == "" {
		opts.Municipalities = found.municipalities
	}
	if opts.Countries == "" {
		opts.Countries = found.countries
	}
	tabmun, err := readTABMUN(opts.Municipalities)
	if err != nil {
		return db.Snapshot{}, err
	}
	countries, err := readCountries(opts.Countries)
	if err != nil {
		return db.Snapshot{}, err
	}
	month := opts.DumpMonth
	if month == "" {
		month = dumpMonth(opts.Paths)
	}
	if month == "" {
		month = newest(found.sources).Format("2006-01")
	}
	if !monthPattern.MatchString(month) {
		return db.Snapshot{}, fmt.Errorf("dump month %q is not YYYY-MM", month)
	}
	ref := opts.ReferenceDate
	if ref.IsZero() {
		ref = newest(found.sources)
	}
	// The day in UTC, as every updated timestamp of the API; ZIP times may
	// carry the publisher's zone.
	ref = ref.UTC()
	ref = time.Date(ref.Year(), ref.Month(), ref.Day(), 0, 0, 0, 0, time.UTC)

	r := &run{
		d: d, opts: opts, log: opts.Logger, sources: found.sources, tabmun: tabmun, countries: countries,
		counts: map[string]int64{}, special: map[string]struct{}{},
		rejected: Rejects{Files: map[string]int64{}, Samples: []RejectSample{}},
	}
	for _, s := range found.skipped {
		r.log.Warn("not a dump file, skipped", "file", s)
	}
	return r.run(ctx, month, ref)
}

// run is one import in progress.
type run struct {
	d         *sqlx.DB
	opts      Options
	log       *slog.Logger
	prog      *importProgress
	sources   []source
	tabmun    map[string]municipality
	countries map[string]country

	mu       sync.Mutex
	counts   map[string]int64
	special  map[string]struct{}
	rejected Rejects
}

// Rejects is what an import rejected, as its snapshot's rejected_rows
// holds it (cnpjgraph status reads it back): the count, per file, and the
// first rows (maxSamples) with their reasons.
type Rejects struct {
	Total   int64            `json:"total"`
	Files   map[string]int64 `json:"files"`
	Samples []RejectSample   `json:"samples"`
}

// RejectSample is one rejected row: its file, line and why.
type RejectSample struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

func (r *run) run(ctx context.Context, month string, ref time.Time) (db.Snapshot, error) {
	lock, err := r.d.Conn(ctx)
	if err != nil {
		return db.Snapshot{}, err
	}
	defer func() { _ = lock.Close() }()
	var locked bool
	if err := lock.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, lockKey).Scan(&locked); err != nil {
		return db.Snapshot{}, fmt.Errorf("take the import lock: %w", err)
	}
	if !locked {
		return db.Snapshot{}, ErrImportRunning
	}
	defer func() {
		_, _ = lock.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, lockKey)
	}()

	// We hold the lock, so any other import session is an orphan of a
	// killed import (an index build goes on after its client died): end it
	// before dropping what it works on.
	const cleanup = `
		SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = $1 AND pid <> pg_backend_pid() AND datname = current_database()`
	if _, err := lock.ExecContext(ctx, cleanup, appName); err != nil {
		return db.Snapshot{}, fmt.Errorf("end orphaned import sessions: %w", err)
	}
	if _, err := lock.ExecContext(ctx, `UPDATE snapshots SET state = 'failed', finished_at = now(),
		error = 'the import stopped before finishing (process killed or crashed)' WHERE state = 'loading'`); err != nil {
		return db.Snapshot{}, err
	}
	if _, err := lock.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+stagingSchema+` CASCADE; DROP SCHEMA IF EXISTS `+retiredSchema+` CASCADE`); err != nil {
		return db.Snapshot{}, fmt.Errorf("drop the staging schema of an earlier import: %w", err)
	}
	names := make([]string, len(r.sources))
	for i, s := range r.sources {
		names[i] = s.name
	}
	var id int64
	if err := lock.QueryRowContext(ctx, `INSERT INTO snapshots (state, dump_month, reference_date, sources)
		VALUES ('loading', $1, $2, $3) RETURNING id`, month, ref, pq.Array(names)).Scan(&id); err != nil {
		return db.Snapshot{}, fmt.Errorf("record the import: %w", err)
	}
	r.prog = newProgress(r.opts.Progress)
	r.prog.printf("snapshot #%d: dump %s, reference date %s, %d files", id, month, ref.Format("2006-01-02"), len(r.sources))
	start := time.Now()
	snap, err := r.build(ctx, lock, id, ref)
	r.prog.close()
	if err != nil {
		r.fail(ctx, lock, id, err)
		return db.Snapshot{}, err
	}
	r.log.Info("import finished", "snapshot", id, "duration", time.Since(start).Round(time.Millisecond))
	return snap, nil
}

// fail records the error and drops the staging schema; the live snapshot
// was never touched.
func (r *run) fail(ctx context.Context, lock *sql.Conn, id int64, cause error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if _, err := lock.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+stagingSchema+` CASCADE`); err != nil {
		r.log.Error("drop staging schema", "err", err)
	}
	rej, _ := json.Marshal(r.rejected)
	if _, err := lock.ExecContext(ctx, `UPDATE snapshots SET state = 'failed', finished_at = now(), error = $2,
		rejected_rows = $3 WHERE id = $1`, id, cause.Error(), string(rej)); err != nil {
		r.log.Error("record failed import", "err", err)
	}
}

// build loads, derives, indexes and swaps; it returns the live snapshot.
func (r *run) build(ctx context.Context, lock *sql.Conn, id int64, ref time.Time) (db.Snapshot, error) {
	if _, err := lock.ExecContext(ctx, `CREATE SCHEMA `+stagingSchema); err != nil {
		return db.Snapshot{}, err
	}
	if err := inSchema(ctx, lock, db.SnapshotTables+personRowsDDL+companyRowsDDL); err != nil {
		return db.Snapshot{}, fmt.Errorf("create staging tables: %w", err)
	}
	periods, err := periodsSQL(ctx, lock)
	if err != nil {
		return db.Snapshot{}, err
	}
	// VACUUM as well as ANALYZE: it marks the fresh pages all-visible, so
	// the searches' counts read indexes alone, and sets the rows' hint bits
	// once here rather than on the first reads of each page once live.
	// Every VACUUM before any ANALYZE: an ANALYZE commits (without waiting
	// for the flush, as all the import does), and an unflushed commit of a
	// transaction id near the tables' own kept VACUUM from setting their
	// hint bits, so from marking their pages (PostgreSQL keeps one commit
	// position per 32 transaction ids); see also flushWAL.
	wordTables := r.opts.WordTables == On
	if r.opts.WordTables == AsLive {
		if wordTables, err = db.HasWordTables(ctx, r.d); err != nil {
			return db.Snapshot{}, err
		}
		if wordTables {
			r.prog.printf("building the word tables of name search, as the live snapshot has them")
		}
	}
	officeLookups := r.opts.OfficeLookups != Off
	if r.opts.OfficeLookups == AsLive {
		kind, err := db.OfficeLookupsKind(ctx, r.d)
		if err != nil {
			return db.Snapshot{}, err
		}
		if officeLookups = kind != "view"; !officeLookups {
			r.prog.printf("office_lookups as a view of the join, as the live snapshot has it")
		}
	}
	tables := append(slices.Clone(snapshotTables), "office_signatures")
	if officeLookups {
		tables = append(tables, "office_lookups")
	}
	if wordTables {
		tables = append(tables, "office_words", "person_words")
	}
	var analyze []string
	for _, t := range tables {
		analyze = append(analyze, "ANALYZE "+t)
	}
	indexes, constraints := indexStatements(wordTables)
	phases := []struct {
		name string
		run  func() error
	}{
		{"load", func() error {
			if err := r.loadCodes(ctx); err != nil {
				return err
			}
			if err := r.loadBig(ctx); err != nil {
				return err
			}
			return r.checkShrink(ctx)
		}},
		{"derive and index", func() error {
			return schedule(ctx, r.tasks(periods, indexes, wordTables, officeLookups), r.opts.Streams)
		}},
		{"primary keys", func() error { return r.exec(ctx, constraints...) }},
		{"vacuum and analyze", func() error {
			if err := r.vacuum(ctx, lock, id, tables); err != nil {
				return err
			}
			return r.parallel(ctx, nil, analyze)
		}},
		{"swap", func() error { return r.swap(ctx, lock, id, ref) }},
	}
	for _, p := range phases {
		r.prog.printf("phase %s", p.name)
		t := time.Now()
		if err := p.run(); err != nil {
			return db.Snapshot{}, err
		}
		r.prog.printf("phase %s done in %s", p.name, time.Since(t).Round(time.Millisecond))
	}
	snap, err := db.LiveSnapshot(ctx, r.d)
	if err != nil {
		return snap, err
	}
	r.prog.printf("snapshot #%d is live", id)
	if !wordTables {
		r.adviseWordTables()
	}
	return snap, nil
}

// adviseWordTables says, after an import without the word tables of a
// registry large enough to want them, that name searches slow as it grows
// and how to build them: an operator's first import of the registry has
// them off (Options.WordTables), and its searches would show it first.
func (r *run) adviseWordTables() {
	offices := r.count("offices")
	if offices < r.opts.WordTablesAdvisedAt {
		return
	}
	r.prog.printf("note: %d establishments and no word tables: name searches slow as the registry grows (at 10 "+
		"million, p99 115-128 ms for a name word with a state, 25 ms with the tables); import --word-tables builds "+
		"them, for some 45 %% more import time and disk, and later imports keep them (README, --word-tables)", offices)
	r.log.Info("no word tables on a large registry: name searches slow as it grows; import --word-tables builds them",
		"establishments", offices)
}

// checkShrink refuses a dump with fewer than half the live snapshot's
// establishments, once they are loaded: the registry grows month by month,
// so such a dump is partial or broken (parts missing, files truncated by a
// copy), and its snapshot would replace the served registry with part of
// it. Options.AllowShrink imports it all the same.
func (r *run) checkShrink(ctx context.Context) error {
	if r.opts.AllowShrink {
		return nil
	}
	live, err := db.LiveSnapshot(ctx, r.d)
	if errors.Is(err, db.ErrNoSnapshot) {
		return nil
	}
	if err != nil {
		return err
	}
	// A snapshot without counts (null) leaves counts empty: nothing to
	// compare with.
	var counts map[string]int64
	_ = json.Unmarshal(live.RowCounts, &counts)
	offices := r.count("offices")
	if was := counts["offices"]; offices < was/2 {
		return fmt.Errorf("the dump has %d establishments, under half of the live snapshot's %d (#%d, dump %s): "+
			"a partial or broken month would replace the served registry; check the folder (cnpjgraph download "+
			"verifies each file against the share), or import it anyway with --allow-shrink", offices, was, live.ID, live.DumpMonth)
	}
	return nil
}

// snapshotTables are the tables of db/snapshot/tables.sql.
var snapshotTables = []string{"companies", "offices", "persons", "members", "simples", "simples_periods",
	"activities", "natures", "reasons", "roles", "countries", "municipalities"}

// personRowsDDL is the load table of persons: one row per appearance,
// deduplicated by personsSQL once every file is in.
const personRowsDDL = `
CREATE UNLOGGED TABLE person_rows (id text COLLATE "C", type text, tax_id text, name text, age text, country text, name_words text[] COLLATE "C");`

// companyRowsDDL is the load table of companies: the fold (db.CompanyFoldSQL)
// writes the companies from it, with their Simples and members, so it is
// not logged (the companies are, once).
const companyRowsDDL = `
CREATE UNLOGGED TABLE company_rows (root text COLLATE "C" NOT NULL, name text NOT NULL, nature text,
	responsible_role text, equity numeric, size text, jurisdiction text, name_words text[] COLLATE "C",
	name_sig bigint NOT NULL DEFAULT 0);`

// personsSQL keeps one row per person id. The id covers type, tax id and
// name; of the remaining attributes the known age band wins, and the sort
// makes the choice deterministic.
const personsSQL = `
INSERT INTO persons (id, type, tax_id, name, age, country, name_words)
SELECT DISTINCT ON (id) id, type, tax_id, name, age, country, name_words FROM person_rows
ORDER BY id, age DESC NULLS LAST, country NULLS LAST`

// The word tables (Options.WordTables). office_words: one row per office
// and distinct word of its company's name or its alias, with the office's
// state, indexed by (word, tax id); person_words (below), the persons'.
// GIN answers "which rows hold this word" as a set, to be read whole and
// sorted; this b-tree gives a word's offices in key order, so a name
// search reads its page, and counts, by index alone, a state filtered in
// the index ("jose" in MG: 12,441 entries read for 451 matches, 2.4 ms,
// where the companies' words merged with the state's 32,808 offices took
// 9 ms).
//
// wordStatistics: the words' statistics target (ANALYZE samples 300,000
// rows, not 30,000). With the default, every word outside the 100 most
// common was estimated at ~580 companies, "jose" (10,132) among them, so a
// search counted a word of 10,000 matches, reading 1,001 offices to learn
// "more than 1,000". With 1,000, words of a thousand rows or more are
// estimated within ~10 %: they are not counted, and their count is the
// estimate, not 1,001.
const wordStatistics = "1000"

var (
	// An office without an alias has its company's words, already
	// distinct; one with an alias the distinct words of both.
	wordTablesSQL = []string{
		`CREATE TABLE office_words AS
SELECT w COLLATE "C" AS word, o.tax_id, o.state
FROM offices o LEFT JOIN companies c ON c.root = o.root,
	unnest(CASE WHEN o.alias_words IS NULL THEN c.name_words
		ELSE ARRAY(SELECT DISTINCT x FROM unnest(coalesce(c.name_words, '{}') || o.alias_words) x) END) w;
ALTER TABLE office_words ALTER COLUMN word SET STATISTICS ` + wordStatistics,
	}
	// The persons' names, the same way: a name word's persons in id order
	// (through the GIN index a page walked the persons in id order, 7,585
	// read for a word's first 11). After the persons are derived.
	personWordsSQL = `CREATE TABLE person_words AS SELECT w COLLATE "C" AS word, id FROM persons, unnest(name_words) w;
ALTER TABLE person_words ALTER COLUMN word SET STATISTICS ` + wordStatistics
	wordIndexesSQL = []string{
		`CREATE INDEX office_words_word ON office_words (word, tax_id) INCLUDE (state) WITH (fillfactor = 100)`,
		`CREATE INDEX person_words_word ON person_words (word, id) WITH (fillfactor = 100)`,
	}
)

// vacuum VACUUMs the tables, so their pages are all-visible. A page is
// left unmarked while a transaction older than its rows is open in the
// database (an idle session in a transaction, a long report, autovacuum's
// ANALYZE of a table the import just wrote), or while a commit near the
// rows' own is not yet flushed (below). Such tables are vacuumed again once
// those transactions end, waiting up to Options.VisibilityWait, and any
// still unmarked is warned of: until VACUUM runs again, a count or a page
// read by index alone also reads the table's rows (office_words left a
// third unmarked: a word and a state took 9.6 ms instead of 2.4), and
// autovacuum will not come, the table being unchanged.
func (r *run) vacuum(ctx context.Context, lock *sql.Conn, id int64, tables []string) error {
	xid, err := flushWAL(ctx, lock, id)
	if err != nil {
		return err
	}
	vacuumAll := func(tables []string) error {
		stmts := make([]string, len(tables))
		for i, t := range tables {
			stmts[i] = "VACUUM " + t
		}
		return r.parallel(ctx, nil, stmts)
	}
	if err := vacuumAll(tables); err != nil {
		return err
	}
	unmarked, err := r.unmarked(ctx, lock, tables)
	if err != nil || len(unmarked) == 0 {
		return err
	}
	if r.opts.VisibilityWait > 0 {
		deadline := time.Now().Add(r.opts.VisibilityWait)
		said := false
		for len(unmarked) > 0 {
			names := make([]string, len(unmarked))
			for i, t := range unmarked {
				names[i] = t.name
			}
			if err := r.waitOlder(ctx, lock, xid, names, deadline, &said); err != nil {
				return err
			}
			// Flushing again flushes other sessions' unflushed commits too.
			if _, err := flushWAL(ctx, lock, id); err != nil {
				return err
			}
			if err := vacuumAll(names); err != nil {
				return err
			}
			if unmarked, err = r.unmarked(ctx, lock, names); err != nil {
				return err
			}
			// Another session's commit after that flush, of a transaction
			// id near the rows' own, can leave their hint bits unset until
			// the WAL writer flushes it (200 ms by default): a test's
			// table stayed unmarked once in many runs with no older
			// transaction open. Vacuumed again until the wait is over.
			if len(unmarked) == 0 || time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
	r.warnUnmarked(unmarked)
	return nil
}

// flushWAL (of the import's snapshot id) commits a write that waits for
// the WAL flush, and so flushes the commits before it, and returns its
// transaction id, later than every row of the import. The import commits
// without waiting (synchronous_commit off), and VACUUM marks a page
// all-visible only once its rows' hint bits are set, which waits for their
// commit to be flushed, and that of every transaction id near theirs
// (PostgreSQL keeps one commit position per 32 ids): tables derived just
// before the vacuum were left unmarked (all their pages, in tests). A
// transaction that writes nothing commits without flushing, whatever
// synchronous_commit says.
func flushWAL(ctx context.Context, c *sql.Conn, id int64) (string, error) {
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("flush the WAL: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var xid string
	if _, err = tx.ExecContext(ctx, `SET LOCAL synchronous_commit = on`); err == nil {
		err = tx.QueryRowContext(ctx, `UPDATE snapshots SET state = state WHERE id = $1 RETURNING xmin::text`, id).Scan(&xid)
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return "", fmt.Errorf("flush the WAL: %w", err)
	}
	return xid, nil
}

// unmarkedTable is a table with pages VACUUM did not mark all-visible.
type unmarkedTable struct {
	name           string
	pages, visible int64
}

// unmarked returns the tables (of the staging schema) with pages VACUUM
// did not mark all-visible.
func (r *run) unmarked(ctx context.Context, c *sql.Conn, tables []string) ([]unmarkedTable, error) {
	var unmarked []unmarkedTable
	rows, err := c.QueryContext(ctx, `SELECT relname, relpages, relallvisible FROM pg_class
		WHERE relnamespace = $1::regnamespace AND relname = ANY($2) AND relallvisible < relpages ORDER BY relname`,
		stagingSchema, pq.Array(tables))
	if err != nil {
		return nil, fmt.Errorf("check visibility: %w", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var t unmarkedTable
		if err := rows.Scan(&t.name, &t.pages, &t.visible); err != nil {
			return nil, fmt.Errorf("check visibility: %w", err)
		}
		unmarked = append(unmarked, t)
	}
	return unmarked, rows.Err()
}

// waitOlder waits, until deadline, until no session of the database holds
// a transaction or snapshot older than xid; it says so once (said).
func (r *run) waitOlder(ctx context.Context, c *sql.Conn, xid string, tables []string, deadline time.Time, said *bool) error {
	const older = `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()
		AND (age(backend_xmin) > age($1::text::xid) OR age(backend_xid) > age($1::text::xid))`
	for {
		var n int
		if err := c.QueryRowContext(ctx, older, xid).Scan(&n); err != nil {
			return fmt.Errorf("look for older transactions: %w", err)
		}
		if n == 0 || time.Now().After(deadline) {
			return nil
		}
		if !*said {
			*said = true
			r.prog.printf("waiting up to %s for %d transactions older than this import to end, to vacuum %s again",
				r.opts.VisibilityWait, n, strings.Join(tables, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// warnUnmarked warns of each table with pages VACUUM left unmarked.
func (r *run) warnUnmarked(tables []unmarkedTable) {
	for _, t := range tables {
		r.prog.printf("warning: VACUUM marked %d of %d pages of %s all-visible: a transaction older than this import "+
			"was still open; searches read the table's rows until 'VACUUM %s.%s' runs", t.visible, t.pages, t.name, db.LiveSchema, t.name)
		r.log.Warn("pages left unmarked by VACUUM", "table", t.name, "pages", t.pages, "all_visible", t.visible)
	}
}

// inSchema runs statements with the staging schema as search path.
func inSchema(ctx context.Context, c *sql.Conn, stmts string) error {
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SET LOCAL search_path TO `+stagingSchema); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, stmts); err != nil {
		return err
	}
	return tx.Commit()
}

// indexStatements splits db.SnapshotIndexes into its index builds (with the
// word tables, wordIndexesSQL too) and the primary keys made of them.
func indexStatements(wordTables bool) (indexes, constraints []string) {
	var lines []string
	for _, l := range strings.Split(db.SnapshotIndexes, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "--") {
			lines = append(lines, l)
		}
	}
	for _, s := range strings.Split(strings.Join(lines, "\n"), ";") {
		switch s = strings.TrimSpace(s); {
		case s == "":
		case strings.HasPrefix(s, "ALTER TABLE"):
			constraints = append(constraints, s)
		default:
			indexes = append(indexes, s)
		}
	}
	if wordTables {
		indexes = append(indexes, wordIndexesSQL...)
	}
	return indexes, constraints
}

// buildCosts are the seconds of each build on the 1M-establishment bench
// dump, alone (import -v): the scheduler starts the longest chains first,
// so that the workers end together rather than one building the biggest
// index alone at the end.
var buildCosts = map[string]float64{
	"persons":                    1.2,
	"periods":                    1.2,
	"fold":                       3.6, // its companies_pkey included
	"office signatures":          1.5,
	"office lookups":             1.9,
	"office lookups view":        0,
	"office words":               3.0,
	"companies_pkey":             0.4,
	"offices_pkey":               0.31,
	"simples_pkey":               0.24,
	"persons_pkey":               0.13,
	"simples_periods_pkey":       0.12,
	"office_words_word":          6.4,
	"person_words_word":          2.2,
	"offices_state":              2.0,
	"office_signatures_state":    0.5,
	"office_lookups_pkey":        0.6,
	"office_lookups_activity":    1.0,
	"office_lookups_alias_facts": 0.3,
	"companies_name_words":       2.0,
	"offices_root":               1.1,
	"offices_walk":               1.5,
	"offices_municipality":       1.9,
	"offices_activity":           2.0,
	"offices_side_activities":    0.6,
	"offices_email_domain":       0.85,
	"offices_zip":                0.79,
	"offices_alias_words":        0.64,
	"persons_name_words":         0.63,
	"members_person":             0.31,
	"members_agent":              0.06,
	"offices_email_domain_stats": 0,
	"offices_email":              0.9,
	"offices_email_stats":        0,
	"offices_phone1":             0.8,
	"offices_phone2":             0.2,
	"offices_phone1_stats":       0,
	"offices_phone2_stats":       0,
	"offices_founded":            0.45,
	"offices_status_date":        0.43,
	"offices_special_date":       0.05,
	"companies_equity":           0.63,
	"companies_nature":           1.0,
	"simples_since":              0.2,
	"simei_since":                0.1,
	"persons_country":            0.05,
	"persons_country_stats":      0,
}

// builtName is the name of what an index statement builds: the index or
// statistics it creates.
func builtName(stmt string) string {
	f := strings.Fields(stmt)
	switch {
	case len(f) >= 4 && f[0] == "CREATE" && f[1] == "UNIQUE":
		return f[3]
	case len(f) >= 3 && f[0] == "CREATE":
		return f[2]
	}
	return ""
}

// builtOn is the table an index statement builds on: the word after ON,
// or after FROM for statistics (CREATE STATISTICS name ON (expr) FROM t).
func builtOn(stmt string) string {
	f := strings.Fields(stmt)
	on := "ON"
	if len(f) > 1 && f[1] == "STATISTICS" {
		on = "FROM"
	}
	for i := 0; i+1 < len(f); i++ {
		if f[i] == on {
			return f[i+1]
		}
	}
	return ""
}

// tasks are the work after the load: the derived tables and the index
// builds, each needing the task that writes its table.
func (r *run) tasks(periods string, indexes []string, wordTables, officeLookups bool) []task {
	personsStmts := []string{personsSQL, "DROP TABLE person_rows"}
	if wordTables {
		personsStmts = append(personsStmts, personWordsSQL)
	}
	sql := func(name string, needs []string, stmts ...string) task {
		return task{name: name, needs: needs, cost: buildCosts[name],
			run: func(ctx context.Context) error { return r.exec(ctx, stmts...) }}
	}
	tasks := []task{
		sql("persons", nil, personsStmts...),
		sql("periods", nil, periods),
		// The Simples rows' primary key first: it drops their duplicates.
		{name: "fold", needs: []string{"persons", "simples_pkey"}, cost: buildCosts["fold"], run: r.fold},
		// After the offices' key too: a dump's duplicated establishment is
		// dropped when that key is built, and the signatures' is unique.
		sql("office signatures", []string{"fold", "offices_pkey"}, db.OfficeSignaturesSQL),
	}
	derived := []string{db.OfficeSignaturesIndexSQL}
	if officeLookups {
		tasks = append(tasks, sql("office lookups", []string{"fold", "offices_pkey"}, db.OfficeLookupsSQL))
		derived = append(derived, db.OfficeLookupsIndexSQL, db.OfficeLookupsActivitySQL, db.OfficeLookupsAliasFactsSQL)
	} else {
		tasks = append(tasks, sql("office lookups view", nil, db.OfficeLookupsViewSQL))
	}
	if wordTables {
		tasks = append(tasks, sql("office words", []string{"fold"}, wordTablesSQL...))
	}
	// The tables the load does not write, by the task that does.
	writer := map[string]string{"companies": "fold", "persons": "persons", "person_words": "persons",
		"simples_periods": "periods", "office_signatures": "office signatures", "office_words": "office words",
		"office_lookups": "office lookups"}
	for _, s := range append(indexes, derived...) {
		name := builtName(s)
		if name == "companies_pkey" {
			continue // built by the fold, which may have to fold again
		}
		var needs []string
		if w := writer[builtOn(s)]; w != "" {
			needs = []string{w}
		}
		tasks = append(tasks, sql(name, needs, s))
	}
	return tasks
}

// fold writes the companies with their Simples and members
// (db.CompanyFoldSQL) and builds their primary key. When the dump repeats
// a company, the key fails: the loaded rows keep the last of each root in
// dump order (COPY order is ctid order, which the fold's joins do not
// keep), and the companies are folded again.
func (r *run) fold(ctx context.Context) error {
	c, err := r.conn(ctx)
	if err != nil {
		return err
	}
	defer r.release(c)
	pkey := companiesKey()
	// Its tables have no statistics yet: the planner takes each join for
	// many to many and sorts for merge joins, where hashing is twice as
	// fast (the released session resets this).
	if _, err := c.ExecContext(ctx, `SET enable_mergejoin = off`); err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		t := time.Now()
		if _, err := c.ExecContext(ctx, db.CompanyFoldSQL); err != nil {
			return fmt.Errorf("fold the companies: %w", err)
		}
		r.log.Debug("statement done", "sql", firstLine(db.CompanyFoldSQL), "duration", time.Since(t).Round(time.Millisecond))
		t = time.Now()
		_, err := c.ExecContext(ctx, pkey)
		if err == nil {
			r.log.Debug("statement done", "sql", pkey, "duration", time.Since(t).Round(time.Millisecond))
			break
		}
		if !db.IsUniqueViolation(err) || attempt > 1 {
			return fmt.Errorf("%s: %w", pkey, err)
		}
		if err := r.dedupe(ctx, c, "company_rows", "root", "companies"); err != nil {
			return err
		}
		if _, err := c.ExecContext(ctx, `TRUNCATE companies`); err != nil {
			return err
		}
	}
	_, err = c.ExecContext(ctx, `DROP TABLE company_rows`)
	return err
}

// companiesKey is the companies' primary key build of db.SnapshotIndexes.
func companiesKey() string {
	indexes, _ := indexStatements(false)
	for _, s := range indexes {
		if builtName(s) == "companies_pkey" {
			return s
		}
	}
	panic("db.SnapshotIndexes builds no companies_pkey")
}

// conn is a dedicated session for loading or index builds.
func (r *run) conn(ctx context.Context) (*sql.Conn, error) {
	c, err := r.d.Conn(ctx)
	if err != nil {
		return nil, err
	}
	// synchronous_commit off: a crash mid-import loses the import anyway.
	// jit off: the derive statements read fresh tables without statistics,
	// which the planner prices in the billions, and compiling them took
	// longer than running them. No parallel workers: the import already
	// runs a statement per core (Options.Streams), and an index build's
	// workers only added their coordination to the cores' work (bare
	// imports of the bench dump, alternated: medians 14.3 -> 13.8 s).
	const setup = `SET application_name = '` + appName + `'; SET synchronous_commit = off;
		SET search_path TO ` + stagingSchema + `; SET maintenance_work_mem = '256MB'; SET work_mem = '128MB';
		SET jit = off; SET max_parallel_maintenance_workers = 0; SET max_parallel_workers_per_gather = 0`
	if _, err := c.ExecContext(ctx, setup); err != nil {
		_ = c.Close()
		return nil, err
	}
	// PostgreSQL 14+: notice a dead client during a long index build instead
	// of finishing it for nobody.
	_, _ = c.ExecContext(ctx, `SET client_connection_check_interval = '1s'`)
	return c, nil
}

func (r *run) release(c *sql.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = c.ExecContext(ctx, `RESET ALL`)
	_ = c.Close()
}

// parallel runs the sequence seq on one session and each of stmts on a pool
// of sessions, all at once.
func (r *run) parallel(ctx context.Context, seq []string, stmts []string) error {
	g, ctx := errgroup.WithContext(ctx)
	work := make(chan string)
	workers := r.opts.Streams
	if len(seq) > 0 {
		g.Go(func() error { return r.exec(ctx, seq...) })
	}
	for range min(workers, len(stmts)) {
		g.Go(func() error {
			for s := range work {
				if err := r.exec(ctx, s); err != nil {
					return err
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		defer close(work)
		for _, s := range stmts {
			select {
			case work <- s:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	return g.Wait()
}

func (r *run) exec(ctx context.Context, stmts ...string) error {
	c, err := r.conn(ctx)
	if err != nil {
		return err
	}
	defer r.release(c)
	for _, s := range stmts {
		t := time.Now()
		res, err := c.ExecContext(ctx, s)
		if m := primaryKey.FindStringSubmatch(s); m != nil && db.IsUniqueViolation(err) {
			// The registry has shipped duplicated rows: keep the last one
			// in dump order (COPY order is ctid order) and try again.
			if err = r.dedupe(ctx, c, m[1], m[2], m[1]); err == nil {
				res, err = c.ExecContext(ctx, s)
			}
		}
		if err != nil {
			// The detail names e.g. the duplicated key of a failed primary key.
			var pqErr *pq.Error
			if errors.As(err, &pqErr) && pqErr.Detail != "" {
				return fmt.Errorf("%s: %w (%s)", firstLine(s), err, pqErr.Detail)
			}
			return fmt.Errorf("%s: %w", firstLine(s), err)
		}
		if f := strings.Fields(s); len(f) > 2 && f[0] == "INSERT" {
			n, _ := res.RowsAffected()
			r.addCount(f[2], n)
		}
		r.log.Debug("statement done", "sql", firstLine(s), "duration", time.Since(t).Round(time.Millisecond))
	}
	return nil
}

var primaryKey = regexp.MustCompile(`^CREATE UNIQUE INDEX \w+ ON (\w+) \(([\w, ]+)\)(?: INCLUDE \([\w, ]+\))?(?: WITH \([\w =]+\))?$`)

// dedupe deletes all but the last row of each duplicated key and records
// how many went, as rejected rows of the table named as.
func (r *run) dedupe(ctx context.Context, c *sql.Conn, table, key, as string) error {
	var join []string
	for _, k := range strings.Split(key, ",") {
		k = strings.TrimSpace(k)
		join = append(join, "a."+k+" = b."+k)
	}
	res, err := c.ExecContext(ctx, `DELETE FROM `+table+` a USING `+table+` b WHERE `+strings.Join(join, " AND ")+` AND a.ctid < b.ctid`)
	if err != nil {
		return fmt.Errorf("remove duplicated %s rows: %w", table, err)
	}
	n, _ := res.RowsAffected()
	r.mu.Lock()
	r.counts[as] -= n
	r.rejected.Total += n
	r.rejected.Files[as] += n
	if len(r.rejected.Samples) < maxSamples {
		r.rejected.Samples = append(r.rejected.Samples, RejectSample{File: as,
			Reason: fmt.Sprintf("%d rows with a duplicated %s removed, the last one kept", n, key)})
	}
	r.mu.Unlock()
	r.log.Warn("duplicated rows removed", "table", as, "key", key, "rows", n)
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func (r *run) addCount(table string, n int64) {
	r.mu.Lock()
	r.counts[table] += n
	r.mu.Unlock()
}

// count is a table's rows loaded so far.
func (r *run) count(table string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[table]
}

// periodsSQL fills simples_periods: the live snapshot's periods plus the
// closed ones this dump shows, one per (root, regime, since), this dump's
// end date winning.
func periodsSQL(ctx context.Context, lock *sql.Conn) (string, error) {
	var live bool
	if err := lock.QueryRowContext(ctx, `SELECT to_regclass('`+db.LiveSchema+`.simples_periods') IS NOT NULL`).Scan(&live); err != nil {
		return "", err
	}
	previous := ""
	if live {
		previous = `UNION ALL SELECT root, regime, since, until, 1 FROM ` + db.LiveSchema + `.simples_periods`
	}
	return `INSERT INTO simples_periods (root, regime, since, until)
		SELECT DISTINCT ON (root, regime, since) root, regime, since, until FROM (
			SELECT root, 'SIMPLES' AS regime, simples_since AS since, simples_until AS until, 0 AS pri FROM simples
				WHERE simples_since IS NOT NULL AND simples_until IS NOT NULL
			UNION ALL SELECT root, 'SIMEI', simei_since, simei_until, 0 FROM simples
				WHERE simei_since IS NOT NULL AND simei_until IS NOT NULL
			` + previous + `
		) p ORDER BY root, regime, since, pri`, nil
}

// swap makes the staging schema the live one in one transaction, retrying
// while readers hold locks on the old tables.
func (r *run) swap(ctx context.Context, lock *sql.Conn, id int64, ref time.Time) error {
	r.mu.Lock()
	counts, _ := json.Marshal(r.counts)
	rejected, _ := json.Marshal(r.rejected)
	special := make([]string, 0, len(r.special))
	for s := range r.special {
		special = append(special, s)
	}
	r.mu.Unlock()
	sort.Strings(special) // ids of new texts are assigned in a stable order
	for attempt := 1; ; attempt++ {
		err := swapOnce(ctx, lock, id, ref, string(counts), string(rejected), special)
		var pqErr *pq.Error
		if err != nil && errors.As(err, &pqErr) && (pqErr.Code == "55P03" || pqErr.Code == "40P01") && attempt < 60 {
			r.log.Warn("swap waits for readers' locks; retrying", "attempt", attempt, "err", err)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("swap: %w", err)
		}
		r.dropRetired(ctx, lock)
		return nil
	}
}

// dropRetired drops the previous snapshot, now renamed out of the way. Its
// tables' locks are taken with the same short timeout as the swap's, and
// retried while readers that began before the swap finish with them; if
// some never do, the next import drops it.
func (r *run) dropRetired(ctx context.Context, lock *sql.Conn) {
	for attempt := 1; attempt <= 60; attempt++ {
		err := func() error {
			tx, err := lock.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer func() { _ = tx.Rollback() }()
			if _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = '200ms'`); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+retiredSchema+` CASCADE`); err != nil {
				return err
			}
			return tx.Commit()
		}()
		var pqErr *pq.Error
		if err == nil || !errors.As(err, &pqErr) || (pqErr.Code != "55P03" && pqErr.Code != "40P01") {
			if err != nil {
				r.log.Warn("the previous snapshot was not dropped; the next import drops it", "err", err)
			}
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
	r.log.Warn("readers kept the previous snapshot busy; the next import drops it")
}

func swapOnce(ctx context.Context, lock *sql.Conn, id int64, ref time.Time, counts, rejected string, special []string) error {
	tx, err := lock.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	var live bool
	steps := []func() error{
		// Below deadlock_timeout (1s): when a reader's statement holds one
		// of the old tables and waits for another the swap holds, the swap
		// gives up and retries before PostgreSQL would pick the reader as a
		// deadlock's victim. Readers never fail for an import.
		func() error { _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = '200ms'`); return err },
		func() error {
			return tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, db.LiveSchema).Scan(&live)
		},
		func() error {
			if !live {
				return nil
			}
			_, err := tx.ExecContext(ctx, `ALTER SCHEMA `+db.LiveSchema+` RENAME TO `+retiredSchema)
			return err
		},
		func() error {
			_, err := tx.ExecContext(ctx, `ALTER SCHEMA `+stagingSchema+` RENAME TO `+db.LiveSchema)
			return err
		},
		func() error {
			_, err := tx.ExecContext(ctx, `INSERT INTO special_statuses (text) SELECT unnest($1::text[]) ON CONFLICT (text) DO NOTHING`, pq.Array(special))
			return err
		},
		func() error {
			// Records fetched online before this dump's date are older than
			// what it brings: the snapshot answers for them now.
			_, err := db.PruneOverlay(ctx, tx, ref)
			return err
		},
		func() error {
			_, err := tx.ExecContext(ctx, `UPDATE snapshots SET state = 'retired' WHERE state = 'live'`)
			return err
		},
		func() error {
			_, err := tx.ExecContext(ctx, `UPDATE snapshots SET state = 'live', finished_at = now(), row_counts = $2,
				rejected_rows = $3, error = NULL WHERE id = $1`, id, counts, rejected)
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return tx.Commit()
}
