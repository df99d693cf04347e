package importer_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/importer"
	"github.com/cnpjgraph/cnpjgraph/importer/generator"
)

// zipRow is a postal code's answer, as the test expects it.
type zipRow struct {
	Municipality, Street, Number, District string
}

// zipOf looks a postal code up in the live snapshot.
func zipOf(t *testing.T, store *db.Store, code string) (zipRow, bool) {
	t.Helper()
	z, err := store.Zip(context.Background(), code)
	var nf *db.NotFoundError
	if errors.As(err, &nf) {
		return zipRow{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	m := ""
	if z.Municipality != nil {
		m = fmt.Sprint(*z.Municipality)
	}
	return zipRow{m, z.Street, z.Number, z.District}, true
}

// TestZipsOfTheSample: the real sample's SERPRO branch gives its CEP, a
// large user's (suffix 900), so with the number.
func TestZipsOfTheSample(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	mustImport(t, d, opts(t, sampleDir(t)))
	store := db.NewStore(d, db.StoreOptions{})
	got, ok := zipOf(t, store, "70836900")
	if want := (zipRow{"5300108", "AVENIDA L2 SGAN", "601", "ASA NORTE"}); !ok || got != want {
		t.Errorf("70836900: %+v, want %+v", got, want)
	}
	if _, ok := zipOf(t, store, "70836901"); ok {
		t.Errorf("a CEP no office uses was found")
	}
}

// TestZipsOfAGeneratedDump: every postal code of a generated dump is what
// its offices, read back from the ZIPs the generator wrote, say: computed
// here apart from the SQL.
func TestZipsOfAGeneratedDump(t *testing.T) {
	t.Parallel()
	d, _ := dbtest.New(t)
	dir := generated(t, generator.Options{Companies: 4000, Seed: 11, Parts: 2})
	mustImport(t, d, importer.Options{Paths: []string{dir}})
	store := db.NewStore(d, db.StoreOptions{})
	ibge := map[string]string{}
	rows, err := d.Query(`SELECT code, coalesce(ibge::text, '') FROM cnpj.municipalities`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var code, i string
		if err := rows.Scan(&code, &i); err != nil {
			t.Fatal(err)
		}
		ibge[code] = i
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	_ = rows.Close()
	want := expectedZips(t, dir)
	kinds := map[string]int{}
	for code, w := range want {
		w.Municipality = ibge[w.Municipality]
		got, ok := zipOf(t, store, code)
		if !ok || got != w {
			t.Errorf("%s: %+v (found %v), want %+v", code, got, ok, w)
		}
		switch suffix := code[5:]; {
		case suffix >= "970":
			kinds["post office"]++
		case suffix >= "900" && suffix <= "959" && w.Number != "":
			kinds["one address"]++
		}
	}
	t.Logf("%d postal codes: %v", len(want), kinds)
	if len(want) < 1000 || kinds["post office"] == 0 || kinds["one address"] == 0 {
		t.Errorf("the dump lacks the cases: %d codes, %v", len(want), kinds)
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
		row := zipRow{Municipality: best.municipality}
		if suffix := cep[5:]; suffix < "970" {
			row.Street, row.District = best.street, best.district
			if suffix >= "900" && suffix <= "959" && top.haveNumb && top.low == top.hi {
				row.Number = top.low
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
