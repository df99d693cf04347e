package db_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// awkward are values that PostgreSQL's array text form quotes or escapes.
var awkward = []string{`JOSE "ZE" DA SILVA`, `C:\PASTA\NOME`, `A, B E C`, `{CHAVES}`, `  ESPACOS  `,
	"NULL", "null", `"`, `\`, `\\"`, "TAB\tE\nLINHA", "SÃO JOÃO D'ALIANÇA", "Ω≈ç√", "x"}

// TestDecodeMembersRoundTrip: members arrays as PostgreSQL writes them
// (array_agg of memberFieldsSQL's arrays, text form through lib/pq) read
// back field for field, whatever the names hold, NULLs included.
func TestDecodeMembersRoundTrip(t *testing.T) {
	d, _ := dbtest.New(t)
	rng := rand.New(rand.NewPCG(1, 2))
	field := func() *string {
		if rng.IntN(5) == 0 {
			return nil
		}
		v := awkward[rng.IntN(len(awkward))]
		if rng.IntN(2) == 0 {
			v += fmt.Sprint(rng.IntN(100))
		}
		return &v
	}
	for round := range 200 {
		n := 1 + rng.IntN(4)
		want := make([][db.MemberFieldCount]*string, n)
		var flat []*string
		for i := range want {
			for j := range want[i] {
				want[i][j] = field()
			}
			since := fmt.Sprintf("20%02d-%02d-%02d", rng.IntN(26), 1+rng.IntN(12), 1+rng.IntN(28))
			want[i][1] = &since
			if rng.IntN(4) == 0 {
				want[i][1] = nil
			}
			position, memberships := fmt.Sprint(1+rng.IntN(1e6)), fmt.Sprint(1+rng.IntN(3))
			want[i][15], want[i][16] = &position, &memberships
			flat = append(flat, want[i][:]...)
		}
		var b []byte
		// Rebuilt in SQL as the fold does: one array per member, aggregated.
		if err := d.Get(&b, `SELECT array_agg(a ORDER BY i) FROM (
			SELECT i, ($1::text[])[(i-1)*17+1:i*17] AS a FROM generate_series(1, $2) i) m`,
			pq.Array(flat), n); err != nil {
			t.Fatal(err)
		}
		rows, err := db.DecodeMembers("12345678", b)
		if err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, b)
		}
		if len(rows) != n {
			t.Fatalf("round %d: %d members, want %d\n%s", round, len(rows), n, b)
		}
		for i, r := range rows {
			var got [db.MemberFieldCount]*string
			got[0], got[2], got[3], got[4], got[5], got[6], got[7] = r.Role, &r.PersonID, &r.PersonType, r.PersonTaxID, &r.PersonName, r.PersonAge, r.PersonCntry
			got[8], got[9], got[10], got[11], got[12], got[13], got[14] = r.AgentID, r.AgentType, r.AgentTaxID, r.AgentName, r.AgentAge, r.AgentCountry, r.AgentRole
			if r.Since != nil {
				s := r.Since.Format(time.DateOnly)
				got[1] = &s
			}
			position, memberships := fmt.Sprint(r.Position), fmt.Sprint(r.PersonMemberships)
			got[15], got[16] = &position, &memberships
			// PersonID, PersonType and PersonName are never null in the
			// fold (inner join): null reads as "".
			for _, j := range []int{2, 3, 5} {
				if want[i][j] == nil {
					empty := ""
					want[i][j] = &empty
				}
			}
			if !reflect.DeepEqual(deref2(got), deref2(want[i])) {
				t.Errorf("round %d member %d:\n got %q\nwant %q\n%s", round, i, deref2(got), deref2(want[i]), b)
			}
			if r.Root != "12345678" {
				t.Errorf("member %d: root %q", i, r.Root)
			}
		}
	}
}

func deref2(f [db.MemberFieldCount]*string) []string {
	out := make([]string, len(f))
	for i, v := range f {
		if v == nil {
			out[i] = "<null>"
		} else {
			out[i] = *v
		}
	}
	return out
}

// TestDecodeMembersRejects: what is not a members array is an error, not
// a misread member.
func TestDecodeMembersRejects(t *testing.T) {
	one := `{a,2020-01-01,c,d,e,f,g,h,i,j,k,l,m,n,o,7,1}`
	if rows, err := db.DecodeMembers("r", []byte("{"+one+"}")); err != nil || len(rows) != 1 {
		t.Fatalf("a well-formed array: %v %v", rows, err)
	}
	for _, b := range []string{"{}", "{" + one, "{" + one + "}x", one, "{{a,b}}", `{{"a}}`,
		"{" + strings.Replace(one, "2020-01-01", "2020-13-01", 1) + "}", "{" + one + "," + "}", "{{,,,,,,,,,,,,,,,,}}",
		"{" + strings.Replace(one, ",7,1}", ",x,1}", 1) + "}", "{" + strings.Replace(one, ",7,1}", ",7,NULL}", 1) + "}"} {
		if _, err := db.DecodeMembers("r", []byte(b)); err == nil {
			t.Errorf("%q: no error", b)
		}
	}
	if rows, err := db.DecodeMembers("r", nil); err != nil || rows != nil {
		t.Errorf("NULL: %v %v", rows, err)
	}
}

// FuzzDecodeMembers: any bytes decode or fail without panicking, and a
// decoded array has whole members.
func FuzzDecodeMembers(f *testing.F) {
	f.Add([]byte(`{{a,2020-01-01,c,d,e,f,g,h,i,j,k,l,m,n,o,7,1}}`))
	f.Add([]byte(`{{"a\"b",NULL,c,d,e,f,g,h,i,j,k,l,m,n,"o,p",3,2},{a,NULL,c,d,e,f,g,h,i,j,k,l,m,n,o,9,1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := db.DecodeMembers("r", b)
		if err == nil && len(b) > 0 && len(rows) == 0 {
			t.Errorf("%q: no error and no member", b)
		}
	})
}

// TestFoldMatchesMembers: the fixture's folded companies (dbtest.Fold, the
// per-company form) hold what db.FoldMismatchesSQL recomputes, and the
// import's form (db.CompanyFoldSQL, with hash joins) writes the same columns.
func TestFoldMatchesMembers(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	ctx := context.Background()
	inLive := func(q string, dest ...any) {
		t.Helper()
		c, err := d.Connx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.ExecContext(ctx, "SET search_path TO "+db.LiveSchema); err != nil {
			t.Fatal(err)
		}
		if len(dest) > 0 {
			err = c.QueryRowxContext(ctx, q).Scan(dest...)
		} else {
			_, err = c.ExecContext(ctx, q)
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
	}
	var n int
	inLive(db.FoldMismatchesSQL, &n)
	if n != 0 {
		t.Fatalf("%d companies differ from their members and Simples", n)
	}
	var folded int
	inLive(`SELECT count(*) FROM companies WHERE members IS NOT NULL AND simples_optant IS NOT NULL`, &folded)
	if folded == 0 {
		t.Fatal("no company with both members and Simples in the fixture")
	}
	// The import's form, from the same rows, the members stored against
	// their positions: the fold must order them itself.
	inLive(`CREATE TABLE company_rows AS SELECT root, name, nature, responsible_role, equity, size, jurisdiction,
		name_words, name_sig FROM companies; CREATE TABLE folded AS SELECT * FROM companies; TRUNCATE companies;
		CREATE TABLE reversed AS SELECT * FROM members ORDER BY root DESC, position DESC;
		TRUNCATE members; INSERT INTO members SELECT * FROM reversed`)
	inLive(db.CompanyFoldSQL)
	inLive(`SELECT count(*) FROM (SELECT * FROM companies EXCEPT SELECT * FROM folded
		UNION ALL SELECT * FROM folded EXCEPT SELECT * FROM companies) x`, &n)
	if n != 0 {
		t.Errorf("the import's fold differs from the per-company one in %d rows", n)
	}
}

// TestLegacySnapshotFolded: a live snapshot imported before the fold (its
// companies without the folded columns) is read through a view that adds
// them, made by db.Migrate; its lookups answer as a folded snapshot's.
func TestLegacySnapshotFolded(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	ctx := context.Background()
	taxIDs := []string{dbtest.SerproBranch, dbtest.BigHead, dbtest.AlphaTaxID, dbtest.AbroadTaxID}
	lookups := func() []db.OfficeLookup {
		t.Helper()
		s := db.NewStore(d, db.StoreOptions{})
		defer func() { _ = s.Q.(*db.Prepared).Close() }()
		var out []db.OfficeLookup
		for _, id := range taxIDs {
			lk, err := s.OfficeLookup(ctx, id, db.OfficeLookupOptions{Overlay: true, Simples: true, Sole: true})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, lk)
		}
		members, err := s.Members(ctx, []string{dbtest.BigRoot, dbtest.OKBRRoot})
		if err != nil || len(members[dbtest.BigRoot]) != dbtest.BigMembers || len(members[dbtest.OKBRRoot]) != 1 {
			t.Fatalf("members: %d, %d, %v", len(members[dbtest.BigRoot]), len(members[dbtest.OKBRRoot]), err)
		}
		return out
	}
	want := lookups()
	unfold := func() {
		t.Helper()
		dbtest.MustExec(t, d, `ALTER TABLE cnpj.companies DROP COLUMN simples_optant, DROP COLUMN simples_since,
			DROP COLUMN simei_optant, DROP COLUMN simei_since, DROP COLUMN members`)
	}
	isView := func(how string) {
		t.Helper()
		var kind string
		if err := d.Get(&kind, `SELECT relkind FROM pg_class WHERE oid = 'cnpj.companies'::regclass`); err != nil || kind != "v" {
			t.Fatalf("%s: cnpj.companies is %q (%v), want a view", how, kind, err)
		}
	}
	// Migrate (serve, import and migrate at start) makes the view.
	unfold()
	if err := db.Migrate(ctx, d); err != nil {
		t.Fatal(err)
	}
	isView("Migrate")
	if got := lookups(); !reflect.DeepEqual(got, want) {
		t.Errorf("lookups through the view differ:\n got %+v\nwant %+v", got, want)
	}
	// So does a store's catalog on its first read of the snapshot (an
	// earlier version's import swapped in while this version served).
	dbtest.MustExec(t, d, `DROP VIEW cnpj.companies; ALTER TABLE cnpj.companies_unfolded RENAME TO companies`)
	if got := lookups(); !reflect.DeepEqual(got, want) {
		t.Errorf("lookups after the catalog's conversion differ:\n got %+v\nwant %+v", got, want)
	}
	isView("the catalog")
	// Again: nothing to do.
	if err := db.Migrate(ctx, d); err != nil {
		t.Fatal(err)
	}
	var views int
	if err := d.Get(&views, `SELECT count(*) FROM pg_views WHERE schemaname = 'cnpj'`); err != nil || views != 1 {
		t.Fatalf("%d views, %v", views, err)
	}
}
