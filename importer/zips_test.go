package importer_test

import (
	"archive/zip"
	"bytes"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/importer"
	"github.com/cnpjgraph/cnpjgraph/importer/generator"
)

// zipRow is a row of the postal codes, as the test expects it.
type zipRow struct {
	Municipality, Street, Number, District sql.NullString
}

// zips reads every postal code of the live snapshot.
func zips(t *testing.T, d *sqlx.DB) map[string]zipRow {
	t.Helper()
	rows, err := d.Query(`SELECT code, municipality, street, number, district FROM cnpj.zips`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]zipRow{}
	for rows.Next() {
		var code string
		var r zipRow
		if err := rows.Scan(&code, &r.Municipality, &r.Street, &r.Number, &r.District); err != nil {
			t.Fatal(err)
		}
		out[code] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestZipsOfTheSample: the real sample's SERPRO branch gives its CEP, a
// large user's (suffix 900), so with the number.
func TestZipsOfTheSample(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	mustImport(t, d, opts(t, sampleDir(t)))
	got := zips(t, d)
	want := zipRow{sql.NullString{String: "9701", Valid: true}, sql.NullString{String: "AVENIDA L2 SGAN", Valid: true},
		sql.NullString{String: "601", Valid: true}, sql.NullString{String: "ASA NORTE", Valid: true}}
	if got["70836900"] != want {
		t.Errorf("70836900: %+v, want %+v", got["70836900"], want)
	}
	var offices int
	if err := d.Get(&offices, `SELECT count(DISTINCT zip) FROM cnpj.offices WHERE zip ~ '^[0-9]{8}$' AND state <> 'EX'`); err != nil {
		t.Fatal(err)
	}
	if len(got) != offices {
		t.Errorf("%d postal codes for %d distinct CEPs of offices", len(got), offices)
	}
}

// TestZipsOfAGeneratedDump: every postal code of a generated dump is what
// its offices, read back from the ZIPs the generator wrote, say: computed
// here apart from the SQL.
func TestZipsOfAGeneratedDump(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dir := t.TempDir()
	if _, err := generator.Generate(generator.Options{Companies: 4000, Out: dir, Seed: 11, Parts: 2}); err != nil {
		t.Fatal(err)
	}
	snap := mustImport(t, d, importer.Options{Paths: []string{dir}})
	want := expectedZips(t, dir)
	got := zips(t, d)
	if len(got) != len(want) || len(want) < 1000 {
		t.Errorf("%d postal codes, want %d", len(got), len(want))
	}
	kinds := map[string]int{}
	for code, w := range want {
		if got[code] != w {
			t.Errorf("%s: %+v, want %+v", code, got[code], w)
		}
		switch suffix := code[5:]; {
		case suffix >= "970":
			kinds["post office"]++
		case suffix >= "900" && suffix <= "959" && w.Number.Valid:
			kinds["one address"]++
		}
	}
	t.Logf("%d postal codes: %v", len(want), kinds)
	if kinds["post office"] == 0 || kinds["one address"] == 0 {
		t.Errorf("the dump lacks the cases: %v", kinds)
	}
	var counts map[string]int
	_ = json.Unmarshal(snap.RowCounts, &counts)
	if counts["zips"] != len(want) {
		t.Errorf("row count of zips %d, want %d", counts["zips"], len(want))
	}
}

// expectedZips reads the Estabelecimentos files as the registry publishes
// them and derives the postal codes by the documented rule.
func expectedZips(t *testing.T, dir string) map[string]zipRow {
	t.Helper()
	type address struct{ municipality, street, district string }
	type tally struct {
		n        int
		low, hi  string
		haveNumb bool
	}
	counts := map[string]map[address]*tally{}
	files, _ := filepath.Glob(filepath.Join(dir, "Estabelecimentos*.zip"))
	for _, f := range files {
		zr, err := zip.OpenReader(f)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := zr.File[0].Open()
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(rc)
		_ = rc.Close()
		_ = zr.Close()
		r := csv.NewReader(strings.NewReader(latin1(raw)))
		r.Comma = ';'
		for {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			cep, uf := strings.TrimSpace(rec[18]), strings.TrimSpace(rec[19])
			if len(cep) < 8 && cep != "" && strings.Trim(cep, "0123456789") == "" {
				cep = strings.Repeat("0", 8-len(cep)) + cep
			}
			if len(cep) != 8 || strings.Trim(cep, "0123456789") != "" || cep == "00000000" || uf == "EX" || uf == "" {
				continue
			}
			street := strings.TrimSpace(strings.TrimSpace(rec[13]) + " " + strings.TrimSpace(rec[14]))
			a := address{strings.TrimSpace(rec[20]), street, strings.TrimSpace(rec[17])}
			if counts[cep] == nil {
				counts[cep] = map[address]*tally{}
			}
			c := counts[cep][a]
			if c == nil {
				c = &tally{}
				counts[cep][a] = c
			}
			c.n++
			if n := strings.TrimSpace(rec[15]); n != "" {
				if !c.haveNumb || n < c.low {
					c.low = n
				}
				if !c.haveNumb || n > c.hi {
					c.hi = n
				}
				c.haveNumb = true
			}
		}
	}
	text := func(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }
	out := map[string]zipRow{}
	for cep, byAddress := range counts {
		var best address
		var top *tally
		var list []address
		for a := range byAddress {
			list = append(list, a)
		}
		sort.Slice(list, func(i, j int) bool { // byte order: street, district, municipality
			a, b := list[i], list[j]
			if a.street != b.street {
				return a.street < b.street
			}
			if a.district != b.district {
				return a.district < b.district
			}
			return a.municipality < b.municipality
		})
		for _, a := range list {
			if c := byAddress[a]; top == nil || c.n > top.n {
				best, top = a, c
			}
		}
		row := zipRow{Municipality: text(best.municipality)}
		if suffix := cep[5:]; suffix < "970" {
			row.Street, row.District = text(best.street), text(best.district)
			if suffix >= "900" && suffix <= "959" && top.haveNumb && top.low == top.hi {
				row.Number = text(top.low)
			}
		}
		out[cep] = row
	}
	return out
}

func latin1(b []byte) string {
	var s bytes.Buffer
	for _, c := range b {
		if c != 0 {
			s.WriteRune(rune(c))
		}
	}
	return s.String()
}
