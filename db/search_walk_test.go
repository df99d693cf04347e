package db_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/words"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// TestNameWalkPagesEveryMatch: names.in alone walks the first walkLength (500)
// offices for the alias branch and reads the aliases after them only when
// the walked stretch holds less than a page of the whole search, the
// company names' keys in it counted too. Here the first page's walk holds
// four company names and five aliases of the ten wanted, and an alias
// after the walk comes before the company names after it: a page that
// counted the company names past the walk as in it, or took nine for ten,
// would skip that alias. Paging through the search visits every match
// once, in key order. A second word, in one company's name and in an alias
// after the first walk, is found whole when the walk holds less than a
// page and the other branch cannot bound what follows it.
func TestNameWalkPagesEveryMatch(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	// 3,000 companies after the fixture's, each with its head office.
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.companies (root, name, name_words)
		SELECT r, 'EMPRESA ' || g, CASE WHEN g <= 4 OR g > 2800 THEN '{empresa,zzalfa}'::text[] WHEN g = 6 THEN '{empresa,zzgama}' ELSE '{empresa}' END
		FROM generate_series(1, 3000) g, lpad((90000000 + g)::text, 8, '0') r;
		INSERT INTO cnpj.offices (tax_id, root, head, alias, alias_words)
		SELECT r || '000100', r, true,
			CASE WHEN g BETWEEN 10 AND 14 OR g = 2300 THEN 'LOJA ZZALFA' WHEN g = 2500 THEN 'LOJA ZZGAMA' END,
			CASE WHEN g BETWEEN 10 AND 14 OR g = 2300 THEN '{loja,zzalfa}'::text[] WHEN g = 2500 THEN '{loja,zzgama}' END
		FROM generate_series(1, 3000) g, lpad((90000000 + g)::text, 8, '0') r`)
	dbtest.MustExec(t, d, `VACUUM ANALYZE cnpj.companies, cnpj.offices`)
	store := db.NewStore(d, db.StoreOptions{})
	for word, n := range map[string]int{"zzalfa": 4 + 5 + 1 + 200, "zzgama": 2} {
		pagesNameWord(t, d, store, snapshot, word, n)
	}
}

// pagesNameWord checks that paging through names.in=word visits its n
// matches (company names and aliases) once each, in key order.
func pagesNameWord(t *testing.T, d *sqlx.DB, store *db.Store, snapshot int64, word string, n int) {
	t.Helper()
	var want []string
	if err := d.Select(&want, `SELECT o.tax_id FROM cnpj.offices o JOIN cnpj.companies c ON c.root = o.root
		WHERE c.name_words @> $1 OR o.alias_words @> $1 ORDER BY o.tax_id`, pq.Array([]string{word})); err != nil {
		t.Fatal(err)
	}
	if len(want) != n {
		t.Fatalf("%s: %d matches written, want %d", word, len(want), n)
	}
	got := pageAll(t, store, db.Search{
		Filters:  []db.Filter{{Field: "names", Op: db.OpIn, Words: [][]string{{word}}}},
		Snapshot: snapshot,
	})
	if !slices.Equal(got, want) {
		t.Fatalf("%s: paged %d keys, want %d; first difference at %d", word, len(got), len(want), firstDifference(got, want))
	}
}

// pageAll follows a search's pages of 10 to its end and returns their
// keys. The search is not counted and never collected: every page is read
// as it would be deep in a large search.
func pageAll(t *testing.T, store *db.Store, q db.Search) []string {
	t.Helper()
	return pageThrough(t, store.SearchOffices, withPageOf(q, 10))
}

// pageThrough follows a search's pages from q (search: a Store's
// SearchOffices or SearchPersons), at most 200, and returns their keys.
func pageThrough(t *testing.T, search func(context.Context, db.Search) (db.SearchPage, error), q db.Search) []string {
	t.Helper()
	var got []string
	for range 200 {
		p, err := search(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Keys...)
		if !p.HasNext {
			return got
		}
		q.After, q.Collected = p.Keys[len(p.Keys)-1], p.Collected
	}
	t.Fatalf("more than 200 pages: %d keys", len(got))
	return nil
}

func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestStateWalkPagesEveryMatch: names.in with one state walks the state's
// offices in key order, checking each office's alias and its company's
// name, and after stateWalkLength (5,000) offices without a page collects
// the matches after them. Here the word is in the first 400 companies'
// names (each also has a branch in another state) and in five aliases
// after them; then come 5,600 offices of the state without it, and after
// them aliases and company names interleaved. A quarter of the offices are
// in another state. Paging through the search visits every match once, in
// key order, and again when the aliases are few by the statistics (the
// walk then checks the company names alone, the aliases collected).
func TestStateWalkPagesEveryMatch(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.companies (root, name, name_words)
		SELECT r, 'EMPRESA ' || g, CASE WHEN g <= 400 OR g BETWEEN 8001 AND 8020 THEN '{empresa,zzbeta}'::text[] ELSE '{empresa}' END
		FROM generate_series(1, 9000) g, lpad((90000000 + g)::text, 8, '0') r;
		INSERT INTO cnpj.offices (tax_id, root, head, state, alias, alias_words)
		SELECT r || '000100', r, true, CASE WHEN g % 4 = 0 THEN 'RJ' ELSE 'AC' END,
			CASE WHEN g BETWEEN 401 AND 405 OR g IN (7990, 8010) THEN 'LOJA ZZBETA' END,
			CASE WHEN g BETWEEN 401 AND 405 OR g IN (7990, 8010) THEN '{loja,zzbeta}'::text[] END
		FROM generate_series(1, 9000) g, lpad((90000000 + g)::text, 8, '0') r;
		INSERT INTO cnpj.offices (tax_id, root, head, state)
		SELECT r || '000200', r, false, 'SP' FROM generate_series(1, 400) g, lpad((90000000 + g)::text, 8, '0') r`)
	dbtest.MustExec(t, d, `VACUUM ANALYZE cnpj.companies, cnpj.offices`)
	var want []string
	if err := d.Select(&want, `SELECT o.tax_id FROM cnpj.offices o JOIN cnpj.companies c ON c.root = o.root
		WHERE o.state = 'AC' AND (c.name_words @> '{zzbeta}' OR o.alias_words @> '{zzbeta}') ORDER BY o.tax_id`); err != nil {
		t.Fatal(err)
	}
	if len(want) != 300+4+1+15 { // 8010 has the word in both
		t.Fatalf("%d matches written, want 320", len(want))
	}
	store, codes, inAC := zzbetaInAC(t, d, snapshot)
	got := pageAll(t, store, inAC)
	if !slices.Equal(got, want) {
		t.Fatalf("paged %d keys, want %d; first difference at %d", len(got), len(want), firstDifference(got, want))
	}

	// The first page's count is the statistics' estimate, said without
	// counting (a state's walk) or asking PostgreSQL (a name alone, past
	// the count's limit).
	for _, c := range []struct {
		state string
		word  string
	}{{"AC", "zzbeta"}, {"", "empresa"}} {
		filters := []db.Filter{{Field: "names", Op: db.OpIn, Words: [][]string{{c.word}}}}
		if c.state != "" {
			filters = append(filters, db.Filter{Field: "address.state", Op: db.OpIn, Texts: []string{c.state}})
		}
		est, ok := codes.NamesEstimate([][]string{{c.word}}, c.state)
		if !ok || est < 11 {
			t.Fatalf("%s %s: estimate %d, %v", c.word, c.state, est, ok)
		}
		p, err := store.SearchOffices(context.Background(), db.Search{Filters: filters, Snapshot: snapshot,
			Limit: 10, CountLimit: 1000, CountBudget: time.Second, CollectBelow: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if p.Count != est || p.Exact {
			t.Fatalf("%s %s: count %d exact %v, want the estimate %d", c.word, c.state, p.Count, p.Exact, est)
		}
	}

	// With the aliases' statistics not listing zzbeta (twelve words in
	// every alias, a statistics target of 1), the walk checks the company
	// names alone and the aliases are collected: the same pages.
	dbtest.MustExec(t, d, `ALTER TABLE cnpj.offices ALTER COLUMN alias_words SET STATISTICS 1;
		UPDATE cnpj.offices SET alias_words = coalesce(alias_words, '{}') || '{w01,w02,w03,w04,w05,w06,w07,w08,w09,w10,w11,w12}'::text[]`)
	dbtest.MustExec(t, d, `VACUUM ANALYZE cnpj.offices`)
	split := db.NewStore(d, db.StoreOptions{})
	codes, err := split.Catalog.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if codes.CommonAliasWords([][]string{{"zzbeta"}}) || !codes.StateWalkWords([][]string{{"zzbeta"}}) {
		t.Fatal("the statistics list zzbeta among the common alias words, or say collect it")
	}
	got = pageAll(t, split, inAC)
	if !slices.Equal(got, want) {
		t.Fatalf("split walk: paged %d keys, want %d; first difference at %d", len(got), len(want), firstDifference(got, want))
	}
}

// TestSortedCompaniesPageEveryMatch: the company names' branch of a word
// held by few companies reads those companies sorted by root, then each
// one's offices in key order until a page (SearchOffices). Here the word
// is in 40 of 3,000 companies' names: one company has no office, one has
// 30 (so pages begin and end inside it), and a quarter of the offices are
// in another state; five aliases of other companies hold it too. Paging
// through the search, alone and with a state, visits every match once, in
// key order.
func TestSortedCompaniesPageEveryMatch(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.companies (root, name, name_words)
		SELECT r, 'EMPRESA ' || g, CASE WHEN g % 75 = 0 THEN '{empresa,zzdelta}'::text[] ELSE '{empresa}' END
		FROM generate_series(1, 3000) g, lpad((90000000 + g)::text, 8, '0') r;
		INSERT INTO cnpj.offices (tax_id, root, head, state, alias, alias_words)
		SELECT r || lpad(n::text, 4, '0') || '00', r, n = 1, CASE WHEN (g + n) % 4 = 0 THEN 'RJ' ELSE 'AC' END,
			CASE WHEN g IN (10, 1499, 1501, 2990) AND n = 1 OR g = 1500 AND n = 7 THEN 'LOJA ZZDELTA' END,
			CASE WHEN g IN (10, 1499, 1501, 2990) AND n = 1 OR g = 1500 AND n = 7 THEN '{loja,zzdelta}'::text[] END
		FROM generate_series(1, 3000) g, lpad((90000000 + g)::text, 8, '0') r,
			generate_series(1, CASE WHEN g = 1500 THEN 30 ELSE 1 END) n
		WHERE g <> 750`)
	dbtest.MustExec(t, d, `VACUUM ANALYZE cnpj.companies, cnpj.offices`)
	store, codes := storeWithCodes(t, d)
	word := [][]string{{"zzdelta"}}
	if !codes.RareCompanyWords(word) { // 40 companies of 3,000: under sqrt(1.1 × 3,000)
		t.Fatal("the statistics say walk zzdelta's companies, not sort them")
	}
	names := db.Filter{Field: "names", Op: db.OpIn, Words: word}
	for _, tc := range []struct {
		state string
		n     int
	}{{"", 39 - 1 + 30 + 4}, {"AC", 0}} {
		filters, cond := []db.Filter{names}, "true"
		if tc.state != "" {
			filters, cond = append(filters, db.Filter{Field: "address.state", Op: db.OpIn, Texts: []string{tc.state}}), "o.state = '"+tc.state+"'"
		}
		var want []string
		if err := d.Select(&want, `SELECT o.tax_id FROM cnpj.offices o JOIN cnpj.companies c ON c.root = o.root
			WHERE `+cond+` AND (c.name_words @> '{zzdelta}' OR o.alias_words @> '{zzdelta}') ORDER BY o.tax_id`); err != nil {
			t.Fatal(err)
		}
		if tc.n > 0 && len(want) != tc.n {
			t.Fatalf("%d matches written, want %d", len(want), tc.n)
		}
		got := pageAll(t, store, db.Search{Filters: filters, Snapshot: snapshot})
		if len(want) < 20 || !slices.Equal(got, want) {
			t.Fatalf("state %q: paged %d keys, want %d; first difference at %d", tc.state, len(got), len(want), firstDifference(got, want))
		}
	}
}

// TestCappedAliasesPageEveryMatch: names.in alone collects the aliases of
// a word the statistics do not list among the common alias words, at most
// collectCap of them, and walks the offices only past that. The column's
// statistics here list 10 words, all of them in every alias: "zzeps" (in
// 40 aliases and 3 company names) is collected, "zzomega" (in 1,050
// aliases) is collected up to the cap and then walked. Paging through
// either visits every match once, in key order.
func TestCappedAliasesPageEveryMatch(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	dbtest.MustExec(t, d, `
		ALTER TABLE cnpj.offices ALTER COLUMN alias_words SET STATISTICS 1;
		INSERT INTO cnpj.companies (root, name, name_words)
		SELECT r, 'EMPRESA ' || g, CASE WHEN g IN (7, 1500, 2999) THEN '{empresa,zzeps}'::text[] ELSE '{empresa}' END
		FROM generate_series(1, 3000) g, lpad((90000000 + g)::text, 8, '0') r;
		INSERT INTO cnpj.offices (tax_id, root, head, alias, alias_words)
		SELECT r || '000100', r, true, 'LOJA',
			'{w01,w02,w03,w04,w05,w06,w07,w08,w09,w10,w11,w12}'::text[]
			|| CASE WHEN g % 75 = 0 THEN '{zzeps}'::text[] ELSE '{}' END
			|| CASE WHEN g % 20 < 7 AND g <= 3000 THEN '{zzomega}'::text[] ELSE '{}' END
		FROM generate_series(1, 3000) g, lpad((90000000 + g)::text, 8, '0') r
		ORDER BY g DESC`) // the table's order is not the keys': a collect past the cap holds any 1,001
	dbtest.MustExec(t, d, `VACUUM ANALYZE cnpj.companies, cnpj.offices`)
	store, codes := storeWithCodes(t, d)
	if !codes.CommonAliasWords([][]string{{"w01"}}) {
		t.Fatal("the statistics do not list w01, in every alias")
	}
	for word, n := range map[string]int{"zzeps": 40 + 3 - 1, "zzomega": 1050} { // company 1,500 has zzeps in both
		if codes.CommonAliasWords([][]string{{word}}) {
			t.Fatalf("the statistics list %s among the common alias words", word)
		}
		pagesNameWord(t, d, store, snapshot, word, n)
	}
}

// TestSignatureWalkPagesEveryMatch: names.in with one state, once the
// snapshot has its office signatures, walks them in key order and reads a
// name only where a signature holds the value's (SearchOffices). Here the
// word is in 420 companies' names and seven aliases of 9,000 offices, as
// in TestStateWalkPagesEveryMatch, and another word whose signature holds
// the first's is in 900 more names and five aliases: those offices' names
// must be read and found wanting. Paging visits every match once, in key
// order; and with one match's signatures cleared, paging misses it (the
// pages come from the signatures).
func TestSignatureWalkPagesEveryMatch(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	lookalike := lookalikeOf("zzbeta")
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.companies (root, name, name_words)
		SELECT r, 'EMPRESA ' || g, CASE WHEN g <= 400 OR g BETWEEN 8001 AND 8020 THEN '{empresa,zzbeta}'::text[]
			WHEN g % 7 = 0 AND g BETWEEN 1000 AND 7300 THEN ARRAY['empresa', $1] ELSE '{empresa}' END
		FROM generate_series(1, 9000) g, lpad((90000000 + g)::text, 8, '0') r`, lookalike)
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.offices (tax_id, root, head, state, alias, alias_words)
		SELECT r || '000100', r, true, CASE WHEN g % 4 = 0 THEN 'RJ' ELSE 'AC' END,
			CASE WHEN g BETWEEN 401 AND 405 OR g IN (7990, 8010) THEN 'LOJA ZZBETA' WHEN g BETWEEN 406 AND 410 THEN 'LOJA' END,
			CASE WHEN g BETWEEN 401 AND 405 OR g IN (7990, 8010) THEN '{loja,zzbeta}'::text[] WHEN g BETWEEN 406 AND 410 THEN ARRAY['loja', $1] END
		FROM generate_series(1, 9000) g, lpad((90000000 + g)::text, 8, '0') r`, lookalike)
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.offices (tax_id, root, head, state)
		SELECT r || '000200', r, false, 'SP' FROM generate_series(1, 400) g, lpad((90000000 + g)::text, 8, '0') r`)
	// An office with zzbeta in its alias whose state is not two letters (a
	// padded field): its signature's key begins as AC's do, before them
	// all, and it is no match.
	dbtest.MustExec(t, d, `INSERT INTO cnpj.offices (tax_id, root, head, state, alias, alias_words)
		VALUES ('90000001000300', '90000001', false, 'AC ', 'ZZBETA', '{zzbeta}')`)
	dbtest.MustExec(t, d, `VACUUM ANALYZE cnpj.companies, cnpj.offices`)
	dbtest.Sign(t, d)
	var matches []string
	if err := d.Select(&matches, `SELECT o.tax_id FROM cnpj.offices o JOIN cnpj.companies c ON c.root = o.root
		WHERE o.state = 'AC' AND (c.name_words @> '{zzbeta}' OR o.alias_words @> '{zzbeta}') ORDER BY o.tax_id`); err != nil {
		t.Fatal(err)
	}
	if len(matches) != 300+4+1+15 {
		t.Fatalf("%d matches written, want 320", len(matches))
	}
	var lookalikes int
	if err := d.Get(&lookalikes, `SELECT count(*) FROM cnpj.office_signatures s
		WHERE s.state_tax_id LIKE 'AC%' AND (s.name_sig & $1 = $1 OR s.alias_sig & $1 = $1)`, int64(words.Signature([]string{"zzbeta"}))); err != nil {
		t.Fatal(err)
	}
	if lookalikes < len(matches)+600 {
		t.Fatalf("%d offices' signatures hold zzbeta's, want the 320 matches and 600 more", lookalikes)
	}
	store, _, inAC := zzbetaInAC(t, d, snapshot)
	if got := pageAll(t, store, inAC); !slices.Equal(got, matches) {
		t.Fatalf("paged %d keys, want %d; first difference at %d", len(got), len(matches), firstDifference(got, matches))
	}

	// A match whose signatures say it lacks the word is not read: the
	// pages came from the signatures.
	dbtest.MustExec(t, d, `UPDATE cnpj.office_signatures SET name_sig = 0, alias_sig = 0 WHERE state_tax_id = 'AC' || $1`, matches[15])
	got := pageAll(t, store, inAC)
	if !slices.Equal(got, slices.Delete(slices.Clone(matches), 15, 16)) {
		t.Fatalf("with %s's signatures cleared, paged %d keys, want %d", matches[15], len(got), len(matches)-1)
	}

	// A snapshot imported before the signatures' one key column has them
	// by (state, tax_id): walked the same, the cleared match missed again.
	dbtest.MustExec(t, d, `CREATE TABLE cnpj.old_signatures AS SELECT left(state_tax_id, -14) AS state, right(state_tax_id, 14) AS tax_id,
		name_sig, alias_sig FROM cnpj.office_signatures;
		DROP TABLE cnpj.office_signatures; ALTER TABLE cnpj.old_signatures RENAME TO office_signatures;
		CREATE INDEX office_signatures_state ON cnpj.office_signatures (state, tax_id) INCLUDE (name_sig, alias_sig)`)
	dbtest.MustExec(t, d, `VACUUM ANALYZE cnpj.office_signatures`)
	store, _, inAC = zzbetaInAC(t, d, snapshot)
	if got := pageAll(t, store, inAC); !slices.Equal(got, slices.Delete(slices.Clone(matches), 15, 16)) {
		t.Fatalf("with the old signatures and %s's cleared, paged %d keys, want %d", matches[15], len(got), len(matches)-1)
	}
}

// TestSignedCompaniesPageEveryMatch: names.in alone, once the snapshot has
// its signatures, walks the companies by root from their primary key
// (which includes the signatures) and reads a name only where the
// signature holds the value's. Here the word is in 204 of 3,000 companies'
// names and six aliases (TestNameWalkPagesEveryMatch's data), and a word
// whose signature holds the first's is in 400 more names: those must be
// read and found wanting. Paging visits every match once, in key order,
// with the count the GIN index gives; and with one company's signature
// cleared, paging misses its office.
func TestSignedCompaniesPageEveryMatch(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	lookalike := lookalikeOf("zzalfa")
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.companies (root, name, name_words)
		SELECT r, 'EMPRESA ' || g, CASE WHEN g <= 4 OR g > 2800 THEN '{empresa,zzalfa}'::text[]
			WHEN g BETWEEN 1000 AND 1399 THEN ARRAY['empresa', $1] ELSE '{empresa}' END
		FROM generate_series(1, 3000) g, lpad((90000000 + g)::text, 8, '0') r`, lookalike)
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.offices (tax_id, root, head, alias, alias_words)
		SELECT r || '000100', r, true,
			CASE WHEN g BETWEEN 10 AND 14 OR g = 2300 THEN 'LOJA ZZALFA' END,
			CASE WHEN g BETWEEN 10 AND 14 OR g = 2300 THEN '{loja,zzalfa}'::text[] END
		FROM generate_series(1, 3000) g, lpad((90000000 + g)::text, 8, '0') r`)
	dbtest.MustExec(t, d, `VACUUM ANALYZE cnpj.companies, cnpj.offices`)
	dbtest.Sign(t, d)
	store, codes := storeWithCodes(t, d)
	if codes.RareCompanyWords([][]string{{"zzalfa"}}) {
		t.Fatal("the statistics say zzalfa is rare: its companies would be collected, not walked")
	}
	pagesNameWord(t, d, store, snapshot, "zzalfa", 4+5+1+200)

	// The first page's count is the GIN index's, not the walk's.
	p, err := store.SearchOffices(context.Background(), db.Search{
		Filters:  []db.Filter{{Field: "names", Op: db.OpIn, Words: [][]string{{"zzalfa"}}}},
		Snapshot: snapshot, Limit: 10, CountLimit: 1000, CountBudget: time.Second, CollectBelow: 0,
	})
	if err != nil || p.Count != 210 || !p.Exact {
		t.Fatalf("count %d exact %v (%v), want 210 exactly", p.Count, p.Exact, err)
	}

	// A company whose signature says it lacks the word is not read: the
	// pages came from the signatures.
	dbtest.MustExec(t, d, `UPDATE cnpj.companies SET name_sig = 0 WHERE root = '90002900'`)
	dbtest.MustExec(t, d, `VACUUM cnpj.companies`)
	got := pageAll(t, store, db.Search{
		Filters:  []db.Filter{{Field: "names", Op: db.OpIn, Words: [][]string{{"zzalfa"}}}},
		Snapshot: snapshot,
	})
	if len(got) != 209 || slices.Contains(got, "90002900000100") {
		t.Fatalf("with 90002900's signature cleared, paged %d keys (its office among them: %v), want 209",
			len(got), slices.Contains(got, "90002900000100"))
	}
}

// lookalikeOf is a word other than word whose signature holds word's: a
// name holding it passes the signature check and must be read to be found
// wanting.
func lookalikeOf(word string) string {
	want := words.Signature([]string{word})
	for i := 0; ; i++ {
		if w := fmt.Sprintf("zzfalse%d", i); words.Signature([]string{w})&want == want {
			return w
		}
	}
}

// zzbetaInAC is a store over the snapshot, its codes, and the search of
// zzbeta in AC, which the statistics say to walk (420 companies of 9,000:
// over sqrt(10 × 9,000)).
func zzbetaInAC(t *testing.T, d *sqlx.DB, snapshot int64) (*db.Store, *db.Codes, db.Search) {
	t.Helper()
	store, codes := storeWithCodes(t, d)
	if !codes.StateWalkWords([][]string{{"zzbeta"}}) {
		t.Fatal("the statistics say collect zzbeta, not walk")
	}
	return store, codes, db.Search{
		Filters: []db.Filter{
			{Field: "names", Op: db.OpIn, Words: [][]string{{"zzbeta"}}},
			{Field: "address.state", Op: db.OpIn, Texts: []string{"AC"}},
		},
		Snapshot: snapshot,
	}
}

// storeWithCodes is a store over d and its catalog of the live snapshot
// (its statistics read once the test's tables are analyzed).
func storeWithCodes(t *testing.T, d *sqlx.DB) (*db.Store, *db.Codes) {
	t.Helper()
	store := db.NewStore(d, db.StoreOptions{})
	codes, err := store.Catalog.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return store, codes
}

// TestPersonNameCount: a person search by name alone says the statistics'
// estimate of a name past the count's limit, without counting it, and
// counts one under the limit exactly (without asking PostgreSQL's price
// first: TestCountUnpriced); with another filter, the count is priced
// and exact as well. A name the statistics do not list is counted
// whatever their guess.
func TestPersonNameCount(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.persons (id, type, name, name_words)
		SELECT 'zz-' || lpad(g::text, 5, '0'), 'NATURAL',
			CASE WHEN g <= 15 THEN 'ZZRARO ZZCOMUM' ELSE 'ZZCOMUM' END,
			CASE WHEN g <= 15 THEN '{zzraro,zzcomum}'::text[] ELSE '{zzcomum}' END
		FROM generate_series(1, 20000) g`)
	dbtest.MustExec(t, d, `VACUUM ANALYZE cnpj.persons`)
	store := db.NewStore(d, db.StoreOptions{})
	codes, err := store.Catalog.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	common, ok := codes.PersonNamesEstimate([][]string{{"zzcomum"}})
	if !ok || common <= 1000 {
		t.Fatalf("zzcomum: estimate %d, %v; want past 1,000", common, ok)
	}
	for _, c := range []struct {
		filters []db.Filter
		count   int64
		exact   bool
	}{
		{[]db.Filter{{Field: "name", Op: db.OpIn, Words: [][]string{{"zzcomum"}}}}, common, false},
		{[]db.Filter{{Field: "name", Op: db.OpIn, Words: [][]string{{"zzraro"}}}}, 15, true},
		{[]db.Filter{{Field: "name", Op: db.OpIn, Words: [][]string{{"zzraro", "zzcomum"}}}}, 15, true},
		{[]db.Filter{{Field: "name", Op: db.OpIn, Words: [][]string{{"zzraro"}}},
			{Field: "type", Op: db.OpIn, Texts: []string{"NATURAL"}}}, 15, true},
	} {
		p, err := store.SearchPersons(context.Background(), db.Search{Filters: c.filters, Snapshot: snapshot,
			Limit: 10, CountLimit: 1000, CountBudget: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if p.Count != c.count || p.Exact != c.exact || len(p.Keys) != 10 {
			t.Errorf("%v: count %d exact %v, %d keys; want %d exact %v, 10 keys", c.filters, p.Count, p.Exact, len(p.Keys), c.count, c.exact)
		}
	}

	// With the statistics listing few words (a 300-row sample: a word in
	// more than 1 % of it), zzraro is the planner's guess, half the least
	// listed frequency, at most 0.5 %: 100 of 20,000 persons. With a count
	// limit under that guess and over its 15 persons, it is counted all
	// the same.
	dbtest.MustExec(t, d, `ALTER TABLE cnpj.persons ALTER COLUMN name_words SET STATISTICS 1`)
	dbtest.MustExec(t, d, `ANALYZE cnpj.persons`)
	store = db.NewStore(d, db.StoreOptions{})
	if codes, err = store.Catalog.Current(context.Background()); err != nil {
		t.Fatal(err)
	}
	rare := [][]string{{"zzraro"}}
	est, _ := codes.PersonNamesEstimate(rare)
	if est <= 16 || !codes.UnlistedPersonWords(rare) {
		t.Fatalf("zzraro: estimate %d, unlisted %v; want past 16, unlisted", est, codes.UnlistedPersonWords(rare))
	}
	p, err := store.SearchPersons(context.Background(), db.Search{Snapshot: snapshot,
		Filters: []db.Filter{{Field: "name", Op: db.OpIn, Words: rare}}, Limit: 10, CountLimit: int(est) - 1, CountBudget: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if p.Count != 15 || !p.Exact {
		t.Errorf("zzraro, unlisted, estimated %d: count %d exact %v, want 15 exact", est, p.Count, p.Exact)
	}
}

// TestRareNameCounted: a name alone whose word the statistics do not list
// is counted, though the planner's guess for such a word (half the least
// listed frequency, at most 0.5 % of the companies: 100 of 20,000, as a
// word listed from a 300-row sample is in more than 1 % of it) is past the
// count's limit: its 20 companies are 20 offices; past a limit of 10, the
// larger of the guess and 11, not exact. (A word of 0.1 % of the rows is
// listed once in some 3,000 such samples.)
func TestRareNameCounted(t *testing.T) {
	d, _ := dbtest.New(t)
	snapshot := dbtest.LoadFixture(t, d)
	dbtest.MustExec(t, d, `
		INSERT INTO cnpj.companies (root, name, name_words)
		SELECT r, 'EMPRESA ' || g, CASE WHEN g <= 20 THEN '{empresa,zzraro}'::text[] ELSE '{empresa}' END
		FROM generate_series(1, 20000) g, lpad((90000000 + g)::text, 8, '0') r;
		INSERT INTO cnpj.offices (tax_id, root, head) SELECT r || '000100', r, true
		FROM generate_series(1, 20000) g, lpad((90000000 + g)::text, 8, '0') r;
		ALTER TABLE cnpj.companies ALTER COLUMN name_words SET STATISTICS 1`)
	dbtest.MustExec(t, d, `VACUUM ANALYZE cnpj.companies, cnpj.offices`)
	store := db.NewStore(d, db.StoreOptions{})
	codes, err := store.Catalog.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rare := [][]string{{"zzraro"}}
	est, ok := codes.NamesEstimate(rare, "")
	if !ok || est <= 21 || !codes.UnlistedCompanyWords(rare) {
		t.Fatalf("zzraro: estimate %d, %v, unlisted %v; want past 21, unlisted", est, ok, codes.UnlistedCompanyWords(rare))
	}
	for _, c := range []struct {
		limit int
		count int64
		exact bool
	}{{int(est) - 1, 20, true}, {10, max(est, 11), false}} {
		p, err := store.SearchOffices(context.Background(), db.Search{Snapshot: snapshot,
			Filters: []db.Filter{{Field: "names", Op: db.OpIn, Words: rare}},
			Limit:   5, CountLimit: c.limit, CountBudget: time.Second, CollectBelow: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if p.Count != c.count || p.Exact != c.exact {
			t.Errorf("count limit %d: count %d exact %v, want %d exact %v", c.limit, p.Count, p.Exact, c.count, c.exact)
		}
	}
}

// TestWalksReadTheOfficesKeyIndex: dbtest.LoadExclusiveFilters' 100,000
// offices stored in no order of key (a walked office's row a heap page of
// its own), every twentieth with "portal" in its alias and every seventh
// in a CEP of 00000000-00999999 (no fixture office's). A CEP range's page
// walks the offices in key order for its eleven (77 offices), and
// names.in "portal" walks 500
// offices for their aliases: both read what they test from offices_walk
// alone (the CEPs, the aliases' signatures; an alias itself only where its
// signature holds the name's). Each CEP page statement reads at most 30
// buffers of the offices (5; from their rows 108) and each walk of 500
// offices at most 30 (6-8; from their rows about 500). Three pages of
// each, as SQL on the tables finds them. A snapshot imported before
// offices_walk walks the aliases themselves, as before: the same pages.
func TestWalksReadTheOfficesKeyIndex(t *testing.T) {
	d, snapshot := loadPortalAliases(t, "name = name")
	dbtest.MustExec(t, d, `UPDATE cnpj.offices SET zip = '00' || right(root, 6)
		WHERE root BETWEEN '90000001' AND '90100000' AND root ~ '^[0-9]{8}$' AND root::int % 7 = 0`)
	shuffle(t, d, "offices", "tax_id")
	allVisible(t, d, "offices")
	for _, c := range []struct {
		name    string
		filters []db.Filter
		walks   bool
		most    int64
		want    string
	}{
		{"a CEP range", []db.Filter{{Field: "address.zip", Op: db.OpGte, Texts: []string{"00000000"}},
			{Field: "address.zip", Op: db.OpLte, Texts: []string{"00999999"}}}, false, 30,
			`SELECT tax_id FROM cnpj.offices WHERE zip BETWEEN '00000000' AND '00999999' ORDER BY tax_id LIMIT 30`},
		{"a name's aliases", []db.Filter{{Field: "names", Op: db.OpIn, Words: [][]string{{"portal"}}}}, true, 30,
			`SELECT tax_id FROM cnpj.offices WHERE alias_words @> '{portal}' ORDER BY tax_id LIMIT 30`},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := db.NewStore(d, db.StoreOptions{})
			read := &companiesRead{QueryerContext: store.Searches, t: t, d: d, pages: true, walks: c.walks, table: "offices"}
			store.Searches = read
			var want []string
			if err := d.Select(&want, c.want); err != nil {
				t.Fatal(err)
			}
			if got, _ := threePages(t, store, snapshot, 0, c.filters); !slices.Equal(got, want) {
				t.Errorf("paged %v, want %v", got, want)
			}
			if read.n < 2 {
				t.Errorf("%d statements walked the offices, want one a page after the first at least", read.n)
			}
			if read.most > c.most {
				t.Errorf("a statement read %d buffers of the offices, want at most %d; its plan:\n%s", read.most, c.most, read.worst)
			}
		})
	}
	t.Run("without offices_walk", func(t *testing.T) {
		dbtest.MustExec(t, d, "DROP INDEX cnpj.offices_walk")
		store := db.NewStore(d, db.StoreOptions{})
		read := &companiesRead{QueryerContext: store.Searches, t: t, d: d, walks: true, table: "offices"}
		store.Searches = read
		var want []string
		if err := d.Select(&want, `SELECT tax_id FROM cnpj.offices WHERE alias_words @> '{portal}' ORDER BY tax_id LIMIT 30`); err != nil {
			t.Fatal(err)
		}
		if got, _ := threePages(t, store, snapshot, 0, []db.Filter{{Field: "names", Op: db.OpIn, Words: [][]string{{"portal"}}}}); !slices.Equal(got, want) {
			t.Errorf("paged %v, want %v", got, want)
		}
		if read.n < 2 {
			t.Errorf("%d walks of the aliases, want one a page after the first at least", read.n)
		}
	})
}

// threePages are the keys of a search's first three pages of ten, each
// after the last, as a client following next, with a walk budget (0:
// none); collected says whether a page was collected.
func threePages(t *testing.T, store *db.Store, snapshot int64, budget time.Duration, filters []db.Filter) (keys []string, collected bool) {
	t.Helper()
	q := db.Search{Snapshot: snapshot, Limit: 10, CountLimit: 1000, CountBudget: time.Second, WalkBudget: budget, Filters: filters}
	for range 3 {
		p, err := store.SearchOffices(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		collected = collected || p.Collected
		keys = append(keys, p.Keys...)
		q.After, q.Count, q.Exact = p.Keys[len(p.Keys)-1], p.Count, p.Exact
	}
	return keys, collected
}

// allVisible vacuums the table until its pages are all marked visible, so
// that its indexes are read alone: VACUUM leaves a page unmarked while a
// snapshot may still not see its rows, and an index-only walk of an
// unmarked page reads the rows too.
func allVisible(t *testing.T, d *sqlx.DB, table string) {
	t.Helper()
	for range 100 {
		dbtest.MustExec(t, d, "VACUUM cnpj."+table)
		var all bool
		if err := d.Get(&all, `SELECT relallvisible >= relpages FROM pg_class WHERE oid = $1::regclass`, "cnpj."+table); err != nil {
			t.Fatal(err)
		}
		if all {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: pages still not all visible after 100 vacuums", table)
}
