package db_test

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/jmoiron/sqlx"
)

// companiesRead is a Store's search queryer that EXPLAINs each count and
// page statement (each page statement alone, with pages; each walk of the
// aliases alone, its walk's buffers, with walks) before running it,
// keeping the most buffers one read of the companies (their table and its
// indexes), or of table when set, and the plan that read them.
type companiesRead struct {
	sqlx.QueryerContext
	t     *testing.T
	d     *sqlx.DB
	pages bool
	walks bool
	table string // "": the companies
	most  int64
	worst string
	n     int // the statements explained
}

func (c *companiesRead) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	for _, part := range strings.Split(query, "; ") {
		read := (strings.HasPrefix(part, "WITH ") && !c.pages) || strings.HasPrefix(part, "SELECT coalesce(array_agg(k ORDER BY k)")
		if c.walks {
			read = strings.HasPrefix(part, "WITH walk ")
		}
		if read {
			c.n++
			var explained []struct{ Plan companiesNode }
			plan := c.explain(part)
			if json.Unmarshal([]byte(plan), &explained) != nil || len(explained) == 0 {
				c.t.Fatalf("plan %s", plan)
			}
			b := explained[0].Plan.buffers(cmp.Or(c.table, "companies"))
			if c.walks {
				b = explained[0].Plan.subplan("CTE walk")
			}
			if b > c.most {
				c.most, c.worst = b, plan
			}
		}
	}
	return c.QueryerContext.QueryRowxContext(ctx, query, args...)
}

// explain is the plan of a search statement as it runs: with the
// settings that lead it (no parallel workers, which a plan of the pool's
// defaults may have where the statement's has none).
func (c *companiesRead) explain(query string) string {
	tx, err := c.d.Beginx()
	if err != nil {
		c.t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var plan string
	if _, err := tx.Exec(`SET LOCAL jit = off; SET LOCAL max_parallel_workers_per_gather = 0`); err != nil {
		c.t.Fatal(err)
	}
	if err := tx.Get(&plan, `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) `+query); err != nil {
		c.t.Fatal(err)
	}
	return plan
}

// companiesNode is a plan node, as much of it as buffers reads.
type companiesNode struct {
	Relation string          `json:"Relation Name"`
	Index    string          `json:"Index Name"`
	Subplan  string          `json:"Subplan Name"`
	Hit      int64           `json:"Shared Hit Blocks"`
	Read     int64           `json:"Shared Read Blocks"`
	Plans    []companiesNode `json:"Plans"`
}

// buffers are the buffers the nodes reading the table (or its indexes,
// named after it) read, each with the nodes under it.
func (n companiesNode) buffers(table string) int64 {
	if n.Relation == table || strings.HasPrefix(n.Index, table+"_") {
		return n.Hit + n.Read
	}
	var sum int64
	for _, c := range n.Plans {
		sum += c.buffers(table)
	}
	return sum
}

// subplan is the buffers the subplan named name read (0 if none ran).
func (n companiesNode) subplan(name string) int64 {
	if n.Subplan == name {
		return n.Hit + n.Read
	}
	var sum int64
	for _, c := range n.Plans {
		sum += c.subplan(name)
	}
	return sum
}

// TestNameWithCompanyFactsFromTheIndex: dbtest.LoadExclusiveFilters'
// 100,000 companies, every twentieth named IGREJA (5,000 churches, 5 % of
// the companies), the churches neither Simples optants nor micro companies
// but for a few spread over the key order (4 optants, one of them SIMEI
// ones too, 4 micro companies, one of them an optant) and two of a rare
// legal nature. PostgreSQL multiplies the
// word's share by a fact's and expects hundreds of matches where there
// are a few: a name with a company's fact is counted all the same (its
// first page says the exact count), and every page reads the companies
// holding both the word and the fact from the index of the companies'
// names (companies_name_words holds their facts), never the word's 5,000
// companies: each count and page statement reads at most 100 buffers of
// the companies (the word's alone: 1,000 and more). Paging visits
// the matches once each, in key order, as SQL on the tables finds them.
func TestNameWithCompanyFactsFromTheIndex(t *testing.T) {
	d, snapshot := loadChurches(t)
	store := db.NewStore(d, db.StoreOptions{})
	read := &companiesRead{QueryerContext: store.Searches, t: t, d: d}
	store.Searches = read
	if _, err := store.Catalog.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	names := db.Filter{Field: "names", Op: db.OpIn, Words: [][]string{{"igreja"}}}
	companyName := db.Filter{Field: "company.name", Op: db.OpIn, Words: [][]string{{"igreja"}}}
	simples := db.Filter{Field: "company.simples.optant", Op: db.OpEq, Bool: true}
	for _, c := range []struct {
		filters []db.Filter
		where   string // on the churches (c)
		n       int
	}{
		{[]db.Filter{names, simples}, "c.simples_optant", 4},
		{[]db.Filter{names, {Field: "company.size.id", Op: db.OpIn, Ints: []int{1}}}, "c.size = '01'", 4},
		{[]db.Filter{companyName, {Field: "company.simei.optant", Op: db.OpEq, Bool: true}}, "c.simei_optant", 1},
		{[]db.Filter{names, {Field: "company.nature.id", Op: db.OpIn, Ints: []int{2143, 2062}}}, "c.nature IN ('2143', '2062')", 2},
		{[]db.Filter{names, simples, {Field: "company.size.id", Op: db.OpIn, Ints: []int{1, 3}}}, "c.simples_optant AND c.size IN ('01', '03')", 1},
	} {
		var want []string
		if err := d.Select(&want, `SELECT o.tax_id FROM cnpj.offices o JOIN cnpj.companies c ON c.root = o.root
			WHERE c.name_words @> '{igreja}' AND `+c.where+` ORDER BY o.tax_id`); err != nil {
			t.Fatal(err)
		}
		if len(want) != c.n {
			t.Fatalf("%s: %d offices written, want %d", c.where, len(want), c.n)
		}
		read.most = 0
		q := db.Search{Filters: c.filters, Snapshot: snapshot, Limit: 2, CountLimit: 1000, CountBudget: time.Second, CollectBelow: 1000}
		first, err := store.SearchOffices(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if !first.Exact || first.Count != int64(c.n) {
			t.Errorf("%s: the first page counted %d (exact %v), want exactly %d", c.where, first.Count, first.Exact, c.n)
		}
		// The next pages, as their tokens carry the first page's count.
		got := first.Keys
		for p := first; p.HasNext; {
			q.After, q.Count, q.Exact, q.Collected = p.Keys[len(p.Keys)-1], first.Count, first.Exact, p.Collected
			if p, err = store.SearchOffices(context.Background(), q); err != nil {
				t.Fatal(err)
			}
			got = append(got, p.Keys...)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: paged %v, want %v", c.where, got, want)
		}
		if read.most > 100 {
			t.Errorf("%s: a statement read %d buffers of the companies, want at most 100", c.where, read.most)
		}
	}
}

// loadChurches is a database (a copy: dbtest.Copied) with
// dbtest.LoadExclusiveFilters' offices and companies, every twentieth
// company named IGREJA (5,000 churches), the others EMPRESA (95,000),
// their facts as TestNameWithCompanyFactsFromTheIndex and
// TestCommonNameWithFactsCollected say, in key order, folded and analyzed,
// with the names' signatures an import writes, and its live snapshot.
func loadChurches(t *testing.T) (*sqlx.DB, int64) {
	t.Helper()
	return dbtest.Copied(t, "churches", writeChurches)
}

func writeChurches(t testing.TB) (*sqlx.DB, int64) {
	t.Helper()
	d, snapshot := dbtest.Exclusive(t)
	const written = `root BETWEEN '90000001' AND '90100000' AND root ~ '^[0-9]{8}$'`
	const churches = `CASE WHEN root ~ '^[0-9]{8}$' THEN root::int % 20 = 0 END`
	dbtest.MustExec(t, d, `
		UPDATE cnpj.companies SET name = 'IGREJA ' || root, name_words = '{igreja}',
			size = CASE WHEN root IN ('90000040', '90030000', '90040000', '90080000') THEN '01' ELSE '05' END,
			nature = CASE WHEN root IN ('90000020', '90050000') THEN '2143' END
		WHERE `+written+` AND `+churches+`;
		UPDATE cnpj.companies SET name_words = '{empresa}',
			size = CASE WHEN root IN ('90000001', '90050001', '90099999') THEN '05' ELSE '01' END
		WHERE `+written+` AND NOT `+churches+`;
		UPDATE cnpj.simples SET simples_optant = root IN ('90000020', '90030000', '90060000', '90099980'),
			simei_optant = root = '90060000'
		WHERE `+written+` AND `+churches)
	dbtest.Sign(t, d)
	dbtest.Fold(t, d)
	// In key order again, as an import writes them: updated, the churches
	// sat together in 74 pages, which hid a read of them all.
	dbtest.MustExec(t, d, "CLUSTER cnpj.companies USING companies_pkey")
	for _, table := range []string{"companies", "simples", "office_lookups"} {
		dbtest.MustExec(t, d, "VACUUM ANALYZE cnpj."+table)
	}
	return d, snapshot
}

// TestCommonNameWithFactsCollected: a name of 95,000 companies (EMPRESA,
// loadChurches), all micro companies but three spread over the key order
// (the first company, one in the middle, the last), with the companies of
// size 05, as names.in and as company.name.in (and with a status only
// the first has). A name that common is not counted (factsTriedWords),
// and PostgreSQL, multiplying the shares, expects a page soon. names.in
// walks a window of the companies by their signatures, under no timeout
// (walkWindow), and company.name.in walks a fifth of the search's budget
// (8 ms of 40: the collect reads indexes alone); neither holds a page.
// The page is then collected at once, not walked on, and without asking
// PostgreSQL's plan: the collect reads the companies that have both from
// the index of their names and each one's offices by root, which
// PostgreSQL, left to join them, read whole (a collect no index narrows).
// Paging visits the matches once each, in key order.
func TestCommonNameWithFactsCollected(t *testing.T) {
	d, snapshot := loadChurches(t)
	size5 := db.Filter{Field: "company.size.id", Op: db.OpIn, Ints: []int{5}}
	all := []string{"90000001000100", "90050001000100", "90099999000100"}
	for _, c := range []struct {
		name     string
		filters  []db.Filter
		want     []string
		windowed bool // walked by the signatures, not the budget
	}{
		{"names.in", []db.Filter{{Field: "names", Op: db.OpIn, Words: [][]string{{"empresa"}}}, size5}, all, true},
		{"company.name.in", []db.Filter{{Field: "company.name", Op: db.OpIn, Words: [][]string{{"empresa"}}}, size5}, all, false},
		{"company.name.in with a status", []db.Filter{{Field: "company.name", Op: db.OpIn, Words: [][]string{{"empresa"}}}, size5,
			{Field: "status.id", Op: db.OpIn, Ints: []int{2}}}, all[:1], false},
	} {
		store, searches := recordingStore(d)
		if _, err := store.Catalog.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		q := withPageOf(db.Search{Snapshot: snapshot, WalkBudget: 40 * time.Millisecond, Filters: c.filters}, 2)
		got := pageThrough(t, store.SearchOffices, q)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: paged %v, want %v", c.name, got, c.want)
		}
		if searches.collected() == 0 {
			t.Errorf("%s: no page collected", c.name)
		}
		if n := searches.windowed(); c.windowed && n == 0 {
			t.Errorf("%s: no window of companies walked", c.name)
		}
		if n := searches.underTimeout(8); c.windowed && n > 0 {
			t.Errorf("%s: %d walks under a timeout, want none", c.name, n)
		} else if !c.windowed && n == 0 {
			t.Errorf("%s: no walk within the budget", c.name)
		}
		if n := searches.underTimeout(80) + searches.underTimeout(40) + searches.underTimeout(400); n > 0 {
			t.Errorf("%s: %d walks with the whole budget or run on, want a fifth and the page collected at once", c.name, n)
		}
		if n := searches.explained(); n > 0 {
			t.Errorf("%s: %d plans asked of PostgreSQL, want none", c.name, n)
		}
	}
}

// TestAliasesWithACompanyFilterSortedFirst: every twentieth office of
// dbtest.LoadExclusiveFilters' 100,000 has "portal" in its alias (5,000
// offices), and all companies but one in a thousand have one legal
// nature, stored in no particular order (as the import's fold writes
// them). With that nature, names.in's aliases are sorted first and each
// one's company read in their order until the page is full: each page
// statement (as it runs: no parallel workers) reads at most 100 buffers of
// the companies, where PostgreSQL, left to join them, hashed every company
// of the nature (2,065 buffers). Three pages, as SQL on the tables finds
// them. (The first page's count, tried as a name with a company's fact
// is, reads up to its limit of them: not a page statement.)
func TestAliasesWithACompanyFilterSortedFirst(t *testing.T) {
	d, snapshot := loadPortalAliases(t, `nature = CASE WHEN root::int % 1000 = 1 THEN '2135' ELSE '2062' END`)
	shuffle(t, d, "companies", "root")
	store := db.NewStore(d, db.StoreOptions{})
	read := &companiesRead{QueryerContext: store.Searches, t: t, d: d, pages: true}
	store.Searches = read
	if _, err := store.Catalog.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	var want []string
	if err := d.Select(&want, `SELECT o.tax_id FROM cnpj.offices o JOIN cnpj.companies c ON c.root = o.root
		WHERE o.alias_words @> '{portal}' AND c.nature = '2062' ORDER BY o.tax_id LIMIT 30`); err != nil {
		t.Fatal(err)
	}
	got, collected := portalPages(t, store, snapshot, 0)
	if collected {
		t.Fatal("a page was collected, not read in key order")
	}
	if !slices.Equal(got, want) {
		t.Errorf("paged %v, want %v", got, want)
	}
	if read.most > 100 {
		t.Errorf("a statement read %d buffers of the companies, want at most 100", read.most)
	}
}

// loadPortalAliases is a database with the fixture and
// dbtest.LoadExclusiveFilters' 100,000 companies (dbtest.Exclusive), and
// its live snapshot; every twentieth of their offices gets "portal" in its
// alias, the companies' columns are set as set says, and they are folded
// into office_lookups, with the names' signatures an import writes.
func loadPortalAliases(t *testing.T, set string) (*sqlx.DB, int64) {
	t.Helper()
	d, snapshot := dbtest.Exclusive(t)
	const written = `root BETWEEN '90000001' AND '90100000' AND root ~ '^[0-9]{8}$'`
	dbtest.MustExec(t, d, `
		UPDATE cnpj.offices SET alias = 'PORTAL ' || root, alias_words = '{portal}'
		WHERE `+written+` AND root::int % 20 = 1;
		UPDATE cnpj.companies SET `+set+` WHERE `+written)
	dbtest.Sign(t, d)
	dbtest.Fold(t, d)
	return d, snapshot
}

// portalPages reads three pages of ten of names.in "portal" with the
// legal nature 2062, each after the last, as a client following next,
// with a walk budget (0: none); collected says whether a page was
// collected.
func portalPages(t *testing.T, store *db.Store, snapshot int64, budget time.Duration) (keys []string, collected bool) {
	t.Helper()
	return threePages(t, store, snapshot, budget, []db.Filter{
		{Field: "names", Op: db.OpIn, Words: [][]string{{"portal"}}},
		{Field: "company.nature.id", Op: db.OpIn, Ints: []int{2062}},
	})
}

// shuffle stores the table's rows in no order of key, as an import's
// fold and joins leave them, and vacuums and analyzes the tables a search
// of "portal" reads.
func shuffle(t *testing.T, d *sqlx.DB, table, key string) {
	t.Helper()
	dbtest.MustExec(t, d, `CREATE INDEX `+table+`_shuffled ON cnpj.`+table+` (md5(`+key+`));
		CLUSTER cnpj.`+table+` USING `+table+`_shuffled;
		DROP INDEX cnpj.`+table+`_shuffled`)
	for _, table := range []string{"offices", "companies", "office_lookups"} {
		dbtest.MustExec(t, d, "VACUUM ANALYZE cnpj."+table)
	}
}

// portalMatches are SQL's first 30 offices of portalPages' search: those
// whose company's name or alias holds "portal", of the nature 2062.
func portalMatches(t *testing.T, d *sqlx.DB) []string {
	t.Helper()
	var want []string
	if err := d.Select(&want, `SELECT o.tax_id FROM cnpj.offices o JOIN cnpj.companies c ON c.root = o.root
		WHERE (o.alias_words @> '{portal}' OR c.name_words @> '{portal}') AND c.nature = '2062'
		ORDER BY o.tax_id LIMIT 30`); err != nil {
		t.Fatal(err)
	}
	return want
}

// TestAliasesUpToTheCompanyNamesPage: of dbtest.LoadExclusiveFilters'
// 100,000 companies, every tenth is named PORTAL and every twentieth
// office has "portal" in its alias, all of one legal nature, the offices
// stored shuffled. The names fill each page long before the aliases run
// out, so a page reads the aliases up to the names' last key alone: each
// page statement reads at most 400 buffers of the offices, where sorting
// the 5,000 aliases read 1,097. The pages are SQL's.
func TestAliasesUpToTheCompanyNamesPage(t *testing.T) {
	d, snapshot := loadPortalAliases(t, `nature = '2062',
		name = CASE WHEN root::int % 10 = 7 THEN 'PORTAL ' || root ELSE name END,
		name_words = CASE WHEN root::int % 10 = 7 THEN '{portal}' ELSE name_words END`)
	// The updated aliases lie together at the table's end; an import
	// writes them among the others, in no order of key.
	shuffle(t, d, "offices", "tax_id")
	store := db.NewStore(d, db.StoreOptions{})
	read := &companiesRead{QueryerContext: store.Searches, t: t, d: d, pages: true, table: "offices"}
	store.Searches = read
	if _, err := store.Catalog.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := portalMatches(t, d)
	if got, _ := portalPages(t, store, snapshot, 0); !slices.Equal(got, want) {
		t.Errorf("paged %v, want %v", got, want)
	}
	if read.most > 400 {
		t.Errorf("a page statement read %d buffers of the offices, want at most 400", read.most)
	}
}

// TestAliasesWithACompanyFactFromTheIndex: every twentieth office of
// loadChurches' 100,000 (none a church's) has "portal" in its alias (5,000
// offices), and two of their companies are SIMEI optants. A name with
// that fact is counted exactly on its first page, and its count and pages
// read the aliases of those companies alone from office_lookups' index of
// the alias words with the company's facts: each statement reads at most
// 100 buffers of the companies, where reading every alias's company to
// find the two read thousands. Without the index (a snapshot imported
// before it), the same matches.
func TestAliasesWithACompanyFactFromTheIndex(t *testing.T) {
	// Named as loadChurches names them, so that the statistics list the
	// companies' words whatever ANALYZE samples, and "portal", in none,
	// is a word of few companies: its count is tried.
	d, snapshot := loadChurches(t)
	const written = `root BETWEEN '90000001' AND '90100000' AND root ~ '^[0-9]{8}$'`
	dbtest.MustExec(t, d, `
		UPDATE cnpj.offices SET alias = 'PORTAL ' || root, alias_words = '{portal}'
		WHERE `+written+` AND root::int % 20 = 1;
		UPDATE cnpj.simples SET simples_optant = true, simei_optant = true WHERE root IN ('90000021', '90050001')`)
	dbtest.Fold(t, d)
	for _, table := range []string{"offices", "companies", "simples", "office_lookups"} {
		dbtest.MustExec(t, d, "VACUUM ANALYZE cnpj."+table)
	}
	want := []string{"90000021000100", "90050001000100"}
	q := db.Search{Snapshot: snapshot, Limit: 1, CountLimit: 1000, CountBudget: time.Second, CollectBelow: 1000,
		WalkBudget: time.Second, Filters: []db.Filter{
			{Field: "names", Op: db.OpIn, Words: [][]string{{"portal"}}},
			{Field: "company.simei.optant", Op: db.OpEq, Bool: true},
		}}
	for _, index := range []bool{true, false} {
		if !index {
			dbtest.MustExec(t, d, "DROP INDEX cnpj.office_lookups_alias_facts")
		}
		store := db.NewStore(d, db.StoreOptions{})
		read := &companiesRead{QueryerContext: store.Searches, t: t, d: d}
		store.Searches = read
		if _, err := store.Catalog.Refresh(context.Background()); err != nil {
			t.Fatal(err)
		}
		first, err := store.SearchOffices(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if !first.Exact || first.Count != 2 {
			t.Errorf("index %v: the first page counted %d (exact %v), want exactly 2", index, first.Count, first.Exact)
		}
		// The next pages, as their tokens carry the first page's count.
		got := first.Keys
		for p, next := first, q; p.HasNext; {
			next.After, next.Count, next.Exact, next.Collected = p.Keys[len(p.Keys)-1], first.Count, first.Exact, p.Collected
			if p, err = store.SearchOffices(context.Background(), next); err != nil {
				t.Fatal(err)
			}
			got = append(got, p.Keys...)
		}
		if !slices.Equal(got, want) {
			t.Errorf("index %v: paged %v, want %v", index, got, want)
		}
		if index && read.most > 100 {
			t.Errorf("a statement read %d buffers of the companies, want at most 100", read.most)
		}
	}
}

// TestCommonNameWithAFactWalkedBySignatures: of dbtest.LoadExclusiveFilters'
// 100,000 companies, every fiftieth is named PORTAL (2,000, a common name),
// the others EMPRESA, and every other PORTAL has the legal nature 2062 (the
// others 2135), the companies stored shuffled, as an import's fold leaves
// them. A page walks the companies in key order by the signatures in
// their primary key, reading a company's row only where its signature
// holds "portal", a window of them under no timeout (walkWindow): each
// page statement reads at most 300 buffers of the companies, where reading
// the row of every company walked (about 1,100 for a page of matches one
// in 100, each on a page of its own) read 653. Three pages, as SQL on the
// tables finds them, the first one's keys from its count.
func TestCommonNameWithAFactWalkedBySignatures(t *testing.T) {
	d, snapshot := loadPortalAliases(t, `
		name = CASE WHEN root::int % 50 = 7 THEN 'PORTAL ' || root ELSE name END,
		name_words = CASE WHEN root::int % 50 = 7 THEN '{portal}' ELSE '{empresa}' END::text[],
		nature = CASE WHEN root::int % 100 = 7 THEN '2062' ELSE '2135' END`)
	shuffle(t, d, "companies", "root")
	store, searches := recordingStore(d)
	read := &companiesRead{QueryerContext: store.Searches, t: t, d: d, pages: true}
	store.Searches = read
	if _, err := store.Catalog.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := portalMatches(t, d)
	got, collected := portalPages(t, store, snapshot, 100*time.Millisecond)
	if collected {
		t.Error("a page was collected, not walked")
	}
	if n := searches.windowed(); n != 2 {
		t.Errorf("%d windows of companies walked, want one a page after the first (whose count gives its keys)", n)
	}
	if !slices.Equal(got, want) {
		t.Errorf("paged %v, want %v", got, want)
	}
	if read.most > 300 {
		t.Errorf("a page statement read %d buffers of the companies, want at most 300", read.most)
	}
}
