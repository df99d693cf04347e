package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Codes is what the server holds in memory for one live snapshot: the
// snapshot row and the small code tables, so that no lookup joins them.
type Codes struct {
	Snapshot       Snapshot
	activities     map[string]string
	natures        map[string]string
	reasons        map[string]string
	roles          map[string]string
	countries      map[string]countryCode
	municipalities map[string]municipalityCode
	// wordTables, personWords: the snapshot has office_words and
	// person_words (imported with --word-tables); name searches of one
	// value read them.
	wordTables, personWords bool
	// signatures: the snapshot has office_signatures (every import since
	// they were added has); a name with one state walks them.
	// signaturePairs: they are keyed by (state, tax_id), as imported
	// before 2026-11-28, not by state_tax_id (stateSignatures).
	signatures, signaturePairs bool
	// officeLookups: the snapshot has office_lookups (every import since
	// they were added has: a table, or a view of the join with
	// --office-lookups=false); the office reads read it (officeReads).
	officeLookups bool
	// activityFacts: office_lookups has its index of each office's main
	// activity with its company's facts (office_lookups_activity), which
	// a search of both probes (probeRanges).
	activityFacts bool
	// aliasFacts: office_lookups has its index of each office's alias
	// words with its company's facts (office_lookups_alias_facts), which
	// a name with a company's fact reads for the aliases.
	aliasFacts bool
	// companySignatures: the companies' primary key includes their
	// signatures, so a walk of the companies by root reads them from the
	// index alone; a name alone walks them so.
	companySignatures bool
	// companyWords: PostgreSQL's statistics of the companies' name words,
	// for RareCompanyWords and StateWalkWords; nil when the table has none.
	companyWords *wordStats
	// aliasWords: the same of the offices' alias words, for
	// CommonAliasWords; nil when the column has none.
	aliasWords *wordStats
	// personNameWords: the same of the persons' name words, for
	// PersonNamesEstimate; nil when the table has none.
	personNameWords *wordStats
	// sideActivities: the same of the offices' side activities, for
	// UnlistedSideActivities; nil when the snapshot has no index of them
	// (imported before it existed) or the column no statistics.
	sideActivities *wordStats
	// boundIndexes: the snapshot has the bounded columns' indexes
	// (offices_founded and the others, built together); without them a
	// probe of a bound's range (probeRanges) would sort the whole table.
	boundIndexes bool
	// walkIndex: the snapshot has offices_walk, from which a name's walk
	// of the aliases reads their signatures; without it the walk reads
	// the aliases themselves, as it did (the signatures from the rows
	// would cost their reads and a probe more per match).
	walkIndex bool
	// officesPerCompany and stateShare (each state's share of the
	// offices), from the same statistics, for NamesEstimate.
	officesPerCompany float64
	stateShare        map[string]float64
}

// wordStats are a words column's statistics as ANALYZE left them: its most
// common words and their frequencies (a word not listed is rarer than the
// least of them) and the rows that have words, to which the frequencies
// are relative.
type wordStats struct {
	freq  map[string]float64
	least float64
	rows  float64
}

// RareCompanyWords reports whether every value of a names.in (a list of
// words each) is held by so few companies that the company names' branch
// is cheaper collected (read whole through the GIN index and sorted) than
// walked in key order. A walk reads about 11/n of the companies for a page
// of a word of n, at ~0.3 µs each on the bench dump; a collect ~3 µs for
// each of the n: they cross at n = sqrt(1.1 rows), 940 of 806,000
// companies. PostgreSQL prices the walk far lower (the companies lie in
// key order, read as in sequence) and walked 28,700 companies for a page
// of "palmital" (309: 9 ms, collected 2.2 ms).
func (c *Codes) RareCompanyWords(values [][]string) bool {
	return c.companyWordsUnder(values, 1.1)
}

// StateWalkWords reports whether a names.in with one state should walk the
// state's offices in key order, checking each office's alias and its
// company's name (see SearchOffices), rather than collect the matches
// through the GIN indexes: some value's words are each held by at least
// sqrt(10 rows) companies (2,840 of 806,000). A walk reads about 11/n of
// the state's offices for a word of n companies, at ~3.3 µs each (the
// office from its index and its company by root, from anywhere in the
// table); a collect reads the n companies and their offices in the state,
// ~2.5 µs each. On the bench dump, with GO and SP: a word of 416 companies
// walked 80–107 ms and collected 3–5; one of 3,054, 10–12 against 10–21;
// one of 10,821, 2.3–2.6 against 23–41.
func (c *Codes) StateWalkWords(values [][]string) bool {
	return !c.companyWordsUnder(values, 10)
}

// stateWalkLength is how many offices of a state a page walks before it
// reads the matches after them through the branches' indexes: about 1.6
// times what a page of ten needs for a word at the bound of
// StateWalkWords, 11 × rows / sqrt(10 rows) offices, so it grows with the
// square root of the companies: 5,000 for the bench dump's 806,000, 15,800
// for 8 million, 45,600 for the registry's 67 million. A fixed 5,000 on a
// dump of 10 million establishments left words a little above the bound
// (16,000 companies; a page needs 5,550 offices) without a page at the
// walk's end, and the matches after it were collected and sorted: first
// pages of a name word with a state 44 a second at 8 connections, p99
// 486 ms (docs/benchmarks.md, "Ten million establishments").
func (c *Codes) stateWalkLength() int {
	const perRootOfRows = 5000 / 897.8 // 5,000 at sqrt(806,000)
	n := minStateWalk
	if c.companyWords != nil {
		n = max(n, int(perRootOfRows*math.Sqrt(c.companyWords.rows)))
	}
	return n
}

// minStateWalk is stateWalkLength without statistics, or for fewer
// companies than the bench dump's.
const minStateWalk = 5000

// FewCompanyWords reports whether every value has a word held by fewer
// than n companies, by the statistics (a word they do not list, by the
// least they do); false without them.
func (c *Codes) FewCompanyWords(values [][]string, n float64) bool {
	s := c.companyWords
	if s == nil {
		return false
	}
	return c.companyWordsUnder(values, n*n/s.rows)
}

// companyWordsUnder reports whether every value has a word held by fewer
// than sqrt(ratio × rows) companies, by the statistics; false without
// them.
func (c *Codes) companyWordsUnder(values [][]string, ratio float64) bool {
	s := c.companyWords
	if s == nil || len(values) == 0 {
		return false
	}
	bound := math.Sqrt(ratio * s.rows)
	for _, words := range values {
		n := math.Inf(1) // the rarest word's companies bound the value's
		for _, word := range words {
			f, ok := s.freq[word]
			if !ok {
				f = s.least
			}
			n = min(n, f*s.rows)
		}
		if n >= bound {
			return false
		}
	}
	return true
}

// CommonAliasWords reports whether some value of a names.in has every word
// among the offices' most common alias words, by the statistics: each held
// by at least the least of them (2,100 aliases on the bench dump). Only
// then does names.in alone walk the offices for aliases (walkPage); other
// words' aliases are collected, at most collectCap (cappedPage). Half the
// bench mix's words are in no alias: the walk read 500 offices for none,
// and a second statement after it.
func (c *Codes) CommonAliasWords(values [][]string) bool {
	s := c.aliasWords
	if s == nil {
		return false
	}
	for _, words := range values {
		listed := true
		for _, word := range words {
			if _, ok := s.freq[word]; !ok {
				listed = false
			}
		}
		if listed {
			return true
		}
	}
	return false
}

// UnlistedSideActivities reports whether no code of a side activities
// filter (codes padded to 7 digits, as stored) is among the most common
// side activities PostgreSQL's statistics list: each is rarer than the
// least of them (0.3 % of the offices on the bench dump; on the registry,
// where some 1,300 codes share the offices unevenly, far rarer), or held
// by none. PostgreSQL guesses such a code at half the least listed share
// and walks the offices in key order for a page, expecting a match every
// few hundred: for a code no office has, on ten times the bench dump, it
// walked all 10M until the request's deadline (504). A search of such
// codes reads their offices through offices_side_activities and sorts
// them instead, at most that least share of the offices. False without
// the index.
func (c *Codes) UnlistedSideActivities(codes []string) bool {
	s := c.sideActivities
	if s == nil {
		return false
	}
	for _, code := range codes {
		if _, listed := s.freq[code]; listed {
			return false
		}
	}
	return true
}

// NamesEstimate is the matches of a names.in (and, when state is not "",
// that one state) by the words' statistics: for each value, its companies
// (the product of its words' shares, wordStats.share, as PostgreSQL's own
// estimate of "holds every word") times the offices per company, and its
// aliases the same way, times the state's share of the offices. It is
// PostgreSQL's estimate of the search without the round trip of an
// EXPLAIN, which was a tenth of a name search's time, but for one rule: a
// word not listed among the aliases counts none, where the planner counts
// it at up to 0.5 % of them, which alone put a name past the count's limit
// ("palmital", in 309 companies' names and no alias: 2,194 offices by the
// planner, 700 here, 399 counted). ok is false without statistics or with
// a state they do not list.
func (c *Codes) NamesEstimate(values [][]string, state string) (n int64, ok bool) {
	if c.companyWords == nil || c.officesPerCompany == 0 || len(values) == 0 {
		return 0, false
	}
	share := 1.0
	if state != "" {
		if share, ok = c.stateShare[state]; !ok {
			return 0, false
		}
	}
	var sum float64
	for _, words := range values {
		companies, aliases := c.companyWords.rows, 0.0
		if c.aliasWords != nil {
			aliases = c.aliasWords.rows
		}
		for _, word := range words {
			companies *= c.companyWords.share(word)
			if c.aliasWords != nil {
				aliases *= c.aliasWords.freq[word] // 0 when not listed
			}
		}
		sum += companies*c.officesPerCompany + aliases
	}
	return int64(math.Round(sum * share)), true
}

// UnlistedCompanyWords reports whether every value of a names.in has a
// word the companies' statistics do not list: one rarer than the least
// listed, whose estimate is the planner's guess (wordStats.share). On the
// registry that guess is thousands of offices (half the least of 60M
// companies' listed frequencies), where a company's name is usually a few;
// false without statistics.
func (c *Codes) UnlistedCompanyWords(values [][]string) bool {
	return c.companyWords.unlistedInEach(values)
}

// UnlistedPersonWords is UnlistedCompanyWords for a person search's
// name.in, by the persons' name words' statistics.
func (c *Codes) UnlistedPersonWords(values [][]string) bool {
	return c.personNameWords.unlistedInEach(values)
}

// unlistedInEach reports whether every value has a word the statistics do
// not list; false without statistics (s nil) or values.
func (s *wordStats) unlistedInEach(values [][]string) bool {
	if s == nil || len(values) == 0 {
		return false
	}
	for _, words := range values {
		if !slices.ContainsFunc(words, func(w string) bool { _, listed := s.freq[w]; return !listed }) {
			return false
		}
	}
	return true
}

// share is the share of the rows whose words hold word, by the statistics:
// its frequency, or, for a word not listed, half the least listed
// frequency, at most 0.5 % (the planner's rule for an element without
// one: array_selfuncs.c, DEFAULT_CONTAIN_SEL).
func (s *wordStats) share(word string) float64 {
	if f, listed := s.freq[word]; listed {
		return f
	}
	return min(0.005, s.least/2)
}

// PersonNamesEstimate is the persons whose name holds every word of one of
// values (a person search's name.in), by the statistics of their name
// words, as PostgreSQL estimates it: a value's share of the persons is
// the product of its words' shares (wordStats.share), and the values'
// shares are joined as independent alternatives (a + b - ab). ok is false
// without statistics.
func (c *Codes) PersonNamesEstimate(values [][]string) (n int64, ok bool) {
	s := c.personNameWords
	if s == nil || len(values) == 0 {
		return 0, false
	}
	var share float64
	for _, words := range values {
		value := 1.0
		for _, word := range words {
			value *= s.share(word)
		}
		share += value - share*value
	}
	return int64(math.Round(share * s.rows)), true
}

// loadShares reads the offices per company and each state's share of the
// offices from the live snapshot's statistics; zero and nil without them.
func loadShares(ctx context.Context, tx *sqlx.Tx) (float64, map[string]float64, error) {
	var (
		states     []string
		freqs      pq.Float64Array
		perCompany sql.NullFloat64
	)
	err := tx.QueryRowContext(ctx, `SELECT s.most_common_vals::text::text[], s.most_common_freqs,
			(SELECT o.reltuples / nullif(c.reltuples, 0) FROM pg_class o, pg_class c
			 WHERE o.oid = '`+LiveSchema+`.offices'::regclass AND c.oid = '`+LiveSchema+`.companies'::regclass AND o.reltuples > 0)
		FROM pg_stats s WHERE s.schemaname = '`+LiveSchema+`' AND s.tablename = 'offices' AND s.attname = 'state'`).
		Scan(pq.Array(&states), &freqs, &perCompany)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("load state statistics: %w", err)
	}
	shares := make(map[string]float64, len(states))
	for i, st := range states {
		if i < len(freqs) {
			shares[st] = freqs[i]
		}
	}
	return perCompany.Float64, shares, nil
}

// loadWordStats reads the statistics of a words column of the live
// snapshot; nil when ANALYZE has not listed any word.
func loadWordStats(ctx context.Context, tx *sqlx.Tx, table, column string) (*wordStats, error) {
	var (
		words []string
		freqs pq.Float64Array
		rows  float64
	)
	// Element frequencies are relative to the rows where the column is
	// not null (most offices have no alias).
	err := tx.QueryRowContext(ctx, `SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs, c.reltuples * (1 - s.null_frac)
		FROM pg_stats s, pg_class c
		WHERE s.schemaname = '`+LiveSchema+`' AND s.tablename = $1 AND s.attname = $2
			AND c.oid = ('`+LiveSchema+`.' || $1)::regclass`, table, column).Scan(pq.Array(&words), &freqs, &rows)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && (len(words) == 0 || len(freqs) < len(words) || rows <= 0)) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load word statistics: %w", err)
	}
	// The frequencies end with three more: the least, the greatest and
	// that of null elements.
	s := &wordStats{freq: make(map[string]float64, len(words)), least: math.Inf(1), rows: rows}
	for i, w := range words {
		s.freq[w] = freqs[i]
		s.least = min(s.least, freqs[i])
	}
	return s, nil
}

type countryCode struct {
	Text string
	M49  int
}

type municipalityCode struct {
	Text  string
	IBGE  int
	State string
}

// Catalog keeps the Codes of the live snapshot. It checks at most every
// Interval whether another snapshot went live (one primary-key query) and
// reloads the code tables when one did; requests never wait for that check.
type Catalog struct {
	db       *sqlx.DB
	Interval time.Duration
	// OnSwitch, when set, is told each change of the live snapshot after
	// the first load (StoreOptions.OnSnapshot).
	OnSwitch func(from, to Snapshot)

	cur        atomic.Pointer[Codes]
	checkedAt  atomic.Int64 // unix nanoseconds of the last check
	refreshing atomic.Bool
	loadMu     sync.Mutex

	specialMu sync.RWMutex
	special   map[string]int
}

// NewCatalog returns a catalog over d that re-checks the live snapshot every
// interval.
func NewCatalog(d *sqlx.DB, interval time.Duration) *Catalog {
	return &Catalog{db: d, Interval: interval, special: make(map[string]int)}
}

// Current returns the codes of the live snapshot, loading them on first use.
// It returns ErrNoSnapshot while nothing has been imported.
func (c *Catalog) Current(ctx context.Context) (*Codes, error) {
	cur := c.cur.Load()
	if cur == nil {
		return c.loadBlocking(ctx)
	}
	if time.Since(time.Unix(0, c.checkedAt.Load())) > c.Interval && c.refreshing.CompareAndSwap(false, true) {
		go func() {
			defer c.refreshing.Store(false)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, _ = c.Refresh(ctx)
		}()
	}
	return cur, nil
}

func (c *Catalog) loadBlocking(ctx context.Context) (*Codes, error) {
	c.loadMu.Lock()
	defer c.loadMu.Unlock()
	if cur := c.cur.Load(); cur != nil {
		return cur, nil
	}
	return c.refreshLocked(ctx)
}

// Refresh checks the live snapshot now and reloads the codes if it changed.
func (c *Catalog) Refresh(ctx context.Context) (*Codes, error) {
	c.loadMu.Lock()
	defer c.loadMu.Unlock()
	return c.refreshLocked(ctx)
}

func (c *Catalog) refreshLocked(ctx context.Context) (*Codes, error) {
	live, err := LiveSnapshot(ctx, c.db)
	if err != nil {
		if errors.Is(err, ErrNoSnapshot) {
			c.cur.Store(nil)
		}
		return nil, err
	}
	if cur := c.cur.Load(); cur != nil && cur.Snapshot.ID == live.ID {
		c.checkedAt.Store(time.Now().UnixNano())
		return cur, nil
	}
	// A snapshot an earlier version imported (while this one served) is
	// made readable before it is read: Migrate did so only at start.
	if err := foldLegacySnapshot(ctx, c.db); err != nil {
		return nil, fmt.Errorf("snapshot #%d was imported by an earlier version and could not be made readable: %w", live.ID, err)
	}
	codes, err := loadCodes(ctx, c.db)
	if err != nil {
		return nil, err
	}
	if err := c.loadSpecial(ctx); err != nil {
		return nil, err
	}
	prev := c.cur.Swap(codes)
	c.checkedAt.Store(time.Now().UnixNano())
	if prev != nil && c.OnSwitch != nil {
		c.OnSwitch(prev.Snapshot, codes.Snapshot)
	}
	return codes, nil
}

// loadCodes reads the live snapshot row and every code table in one
// read-only repeatable-read transaction, so they describe the same import
// even when a swap happens meanwhile.
func loadCodes(ctx context.Context, d *sqlx.DB) (*Codes, error) {
	tx, err := d.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("load code tables: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	live, err := LiveSnapshot(ctx, tx)
	if err != nil {
		return nil, err
	}
	codes := &Codes{Snapshot: live}
	// A snapshot imported without the word tables (or before they existed)
	// is searched through its GIN indexes alone.
	if codes.wordTables, err = hasLiveTable(ctx, tx, "office_words"); err != nil {
		return nil, err
	}
	if codes.personWords, err = hasLiveTable(ctx, tx, "person_words"); err != nil {
		return nil, err
	}
	if codes.officeLookups, err = hasLiveTable(ctx, tx, "office_lookups"); err != nil {
		return nil, err
	}
	if codes.activityFacts, err = hasLiveTable(ctx, tx, "office_lookups_activity"); err != nil {
		return nil, err
	}
	if codes.aliasFacts, err = hasLiveTable(ctx, tx, "office_lookups_alias_facts"); err != nil {
		return nil, err
	}
	if codes.signatures, err = hasLiveTable(ctx, tx, "office_signatures"); err != nil {
		return nil, err
	}
	if codes.signatures {
		var byKey bool
		if byKey, err = hasLiveColumn(ctx, tx, "office_signatures", "state_tax_id"); err != nil {
			return nil, err
		}
		codes.signaturePairs = !byKey
	}
	if codes.companySignatures, err = primaryKeyHas(ctx, tx, "companies", "name_sig"); err != nil {
		return nil, err
	}
	if codes.companyWords, err = loadWordStats(ctx, tx, "companies", "name_words"); err != nil {
		return nil, err
	}
	if codes.aliasWords, err = loadWordStats(ctx, tx, "offices", "alias_words"); err != nil {
		return nil, err
	}
	if codes.personNameWords, err = loadWordStats(ctx, tx, "persons", "name_words"); err != nil {
		return nil, err
	}
	// to_regclass finds an index as it finds a table.
	if indexed, err := hasLiveTable(ctx, tx, "offices_side_activities"); err != nil {
		return nil, err
	} else if indexed {
		if codes.sideActivities, err = loadWordStats(ctx, tx, "offices", "side_activities"); err != nil {
			return nil, err
		}
	}
	if codes.boundIndexes, err = hasLiveTable(ctx, tx, "offices_founded"); err != nil {
		return nil, err
	}
	if codes.walkIndex, err = hasLiveTable(ctx, tx, "offices_walk"); err != nil {
		return nil, err
	}
	if codes.officesPerCompany, codes.stateShare, err = loadShares(ctx, tx); err != nil {
		return nil, err
	}
	for _, t := range []struct {
		table string
		dst   *map[string]string
	}{
		{"activities", &codes.activities},
		{"natures", &codes.natures},
		{"reasons", &codes.reasons},
		{"roles", &codes.roles},
	} {
		m, err := loadTextTable(ctx, tx, t.table)
		if err != nil {
			return nil, err
		}
		*t.dst = m
	}

	const qCountries = `SELECT code, coalesce(text, ''), coalesce(m49, 0) FROM ` + LiveSchema + `.countries`
	rows, err := tx.QueryContext(ctx, qCountries)
	if err != nil {
		return nil, fmt.Errorf("load countries: %w", err)
	}
	codes.countries = make(map[string]countryCode)
	for rows.Next() {
		var code string
		var c countryCode
		if err := rows.Scan(&code, &c.Text, &c.M49); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("load countries: %w", err)
		}
		codes.countries[countryKey(code)] = c
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("load countries: %w", err)
	}

	const qMunicipalities = `SELECT code, coalesce(text, ''), coalesce(ibge, 0), coalesce(state, '') FROM ` + LiveSchema + `.municipalities`
	rows, err = tx.QueryContext(ctx, qMunicipalities)
	if err != nil {
		return nil, fmt.Errorf("load municipalities: %w", err)
	}
	codes.municipalities = make(map[string]municipalityCode)
	for rows.Next() {
		var code string
		var m municipalityCode
		if err := rows.Scan(&code, &m.Text, &m.IBGE, &m.State); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("load municipalities: %w", err)
		}
		codes.municipalities[code] = m
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("load municipalities: %w", err)
	}
	return codes, nil
}

func loadTextTable(ctx context.Context, tx *sqlx.Tx, table string) (map[string]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT code, coalesce(text, '') FROM `+LiveSchema+`.`+table)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", table, err)
	}
	m := make(map[string]string)
	for rows.Next() {
		var code, text string
		if err := rows.Scan(&code, &text); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("load %s: %w", table, err)
		}
		m[code] = text
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("load %s: %w", table, err)
	}
	return m, nil
}

func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

func (c *Catalog) loadSpecial(ctx context.Context) error {
	var rows []struct {
		ID   int    `db:"id"`
		Text string `db:"text"`
	}
	if err := c.db.SelectContext(ctx, &rows, `SELECT id, text FROM special_statuses`); err != nil {
		return fmt.Errorf("load special statuses: %w", err)
	}
	m := make(map[string]int, len(rows))
	for _, r := range rows {
		m[r.Text] = r.ID
	}
	c.specialMu.Lock()
	c.special = m
	c.specialMu.Unlock()
	return nil
}

// SpecialID returns the stable id of a "situação especial" text, registering
// the text in special_statuses if the import did not.
func (c *Catalog) SpecialID(ctx context.Context, text string) (int, error) {
	c.specialMu.RLock()
	id, ok := c.special[text]
	c.specialMu.RUnlock()
	if ok {
		return id, nil
	}
	// The no-op update makes RETURNING give the id of an existing row too.
	const q = `INSERT INTO special_statuses (text) VALUES ($1)
		ON CONFLICT (text) DO UPDATE SET text = EXCLUDED.text RETURNING id`
	if err := c.db.GetContext(ctx, &id, q, text); err != nil {
		return 0, fmt.Errorf("special status id: %w", err)
	}
	c.specialMu.Lock()
	c.special[text] = id
	c.specialMu.Unlock()
	return id, nil
}

// countryKey is an RFB country code without its padding: the dump writes
// "063" in one table and "63" in another, and both are Argentina.
func countryKey(code string) string {
	k := strings.TrimLeft(strings.TrimSpace(code), "0")
	if k == "" {
		return "0"
	}
	return k
}

// OfficeLookupsKind is what the live snapshot's office_lookups is: "table"
// (every import since it exists, by default), "view" (a view of the join:
// import --office-lookups=false), or "" (none: imported before it existed,
// or nothing live).
func OfficeLookupsKind(ctx context.Context, q sqlx.QueryerContext) (string, error) {
	var kind string
	if err := q.QueryRowxContext(ctx, `SELECT coalesce((SELECT CASE relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' END
		FROM pg_class WHERE oid = to_regclass($1)), '')`, LiveSchema+".office_lookups").Scan(&kind); err != nil {
		return "", fmt.Errorf("check office_lookups: %w", err)
	}
	return kind, nil
}

// HasWordTables reports whether the live snapshot has a word table of name
// search (import --word-tables): office_words, or the company_words of a
// snapshot imported before office_words existed (the next import, which
// does as the live snapshot, builds office_words in its place).
func HasWordTables(ctx context.Context, q sqlx.QueryerContext) (bool, error) {
	for _, table := range []string{"office_words", "company_words"} {
		if ok, err := hasLiveTable(ctx, q, table); err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// primaryKeyHas reports whether the live snapshot's table has column in
// its primary key (as a key or an included column).
func primaryKeyHas(ctx context.Context, q sqlx.QueryerContext, table, column string) (bool, error) {
	var ok bool
	if err := q.QueryRowxContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indrelid = to_regclass($1) AND i.indisprimary AND a.attname = $2)`, LiveSchema+"."+table, column).Scan(&ok); err != nil {
		return false, fmt.Errorf("check the primary key of %s: %w", table, err)
	}
	return ok, nil
}

// hasLiveColumn says whether the live snapshot's table has the column.
func hasLiveColumn(ctx context.Context, q sqlx.QueryerContext, table, column string) (bool, error) {
	var ok bool
	if err := q.QueryRowxContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_attribute
		WHERE attrelid = to_regclass($1) AND attname = $2 AND NOT attisdropped)`, LiveSchema+"."+table, column).Scan(&ok); err != nil {
		return false, fmt.Errorf("check the column %s.%s: %w", table, column, err)
	}
	return ok, nil
}

// hasLiveTable reports whether the live snapshot has the table.
func hasLiveTable(ctx context.Context, q sqlx.QueryerContext, table string) (bool, error) {
	var ok bool
	if err := q.QueryRowxContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, LiveSchema+"."+table).Scan(&ok); err != nil {
		return false, fmt.Errorf("check the table %s: %w", table, err)
	}
	return ok, nil
}
