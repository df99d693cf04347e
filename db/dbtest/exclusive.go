package dbtest

import (
	"testing"

	"github.com/jmoiron/sqlx"
)

// ExclusiveActivity is the activity of LoadExclusiveFilters' religious
// organizations (9492800), one office in 20.
const ExclusiveActivity = 9492800

// LoadExclusiveFilters writes, beside the fixture (LoadFixture first),
// 100,000 offices, each of its own company, one in 20 of
// ExclusiveActivity, whose companies are neither Simples optants nor micro
// companies but for the last few in key order: 4 such offices in status
// 02 (active) whose companies are optants, 6 whose companies are micro
// (size 01). PostgreSQL multiplies the filters' shares, expects hundreds of
// matches, and walks the offices in key order for a page: all of them, to
// find the last few. Offices of status 08 are one in 3; of the other
// companies, half are optants, and one optant in 7 a SIMEI one. The rows
// are folded and analyzed, as an import leaves them.
func LoadExclusiveFilters(t testing.TB, d *sqlx.DB) {
	t.Helper()
	MustExec(t, d, `
		INSERT INTO cnpj.offices (tax_id, root, head, main_activity, status)
		SELECT r || '000100', r, true,
			CASE WHEN g % 20 = 0 THEN '9492800' ELSE lpad((g % 7)::text, 7, '0') END,
			CASE WHEN g % 3 = 0 THEN '08' ELSE '02' END
		FROM generate_series(1, 100000) g, lpad((90000000 + g)::text, 8, '0') r
		ORDER BY (g * 7919) % 100003;
		INSERT INTO cnpj.companies (root, name, size)
		SELECT r, 'EMPRESA ' || g, CASE WHEN g % 20 = 0 AND g < 99900 THEN '05' ELSE '01' END
		FROM generate_series(1, 100000) g, lpad((90000000 + g)::text, 8, '0') r;
		INSERT INTO cnpj.simples (root, simples_optant, simei_optant)
		SELECT r, o, o AND g % 7 = 0
		FROM generate_series(1, 100000) g, lpad((90000000 + g)::text, 8, '0') r,
			LATERAL (SELECT CASE WHEN g % 20 = 0 THEN g > 99900 ELSE g % 2 = 0 END) v(o)`)
	Fold(t, d)
	for _, table := range []string{"offices", "companies", "simples", "office_lookups"} {
		MustExec(t, d, "VACUUM ANALYZE cnpj."+table)
	}
}

// Exclusive is a throwaway database with the fixture and
// LoadExclusiveFilters' offices (a copy of them, Copied), and its live
// snapshot.
func Exclusive(t testing.TB) (*sqlx.DB, int64) {
	t.Helper()
	return Copied(t, "exclusive", func(t testing.TB) (*sqlx.DB, int64) {
		d, _ := New(t)
		snapshot := LoadFixture(t, d)
		LoadExclusiveFilters(t, d)
		return d, snapshot
	})
}

// WithoutActivityFacts drops office_lookups_activity, as from a snapshot
// imported before it: a search of ExclusiveActivity with a company's fact
// is then walked in key order within its budget and collected past it,
// as every sparse search the index does not answer is (a side activity,
// a name, a state with a fact), which is what such a test exercises.
func WithoutActivityFacts(t testing.TB, d *sqlx.DB) {
	t.Helper()
	MustExec(t, d, "DROP INDEX cnpj.office_lookups_activity")
}
