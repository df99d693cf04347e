package importer_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/importer"
)

// TestReadCountries: both layouts the import takes (the shared
// paises-m49.csv, and Comex Stat's PAIS.csv as published: Latin-1, quoted),
// placeholder codes left out, and the errors an operator can meet.
func TestReadCountries(t *testing.T) {
	real, err := importer.ReadCountries(filepath.Join(dbtest.SharedDir(t), "data", "paises", "paises-m49.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// 274 codes, Brasil among them.
	if len(real) != 274 || real["105"] != (importer.Country{Name: "BRASIL", M49: 76}) || real["13"].M49 != 4 {
		t.Errorf("paises-m49.csv: %d countries, 105 %+v, 13 %+v", len(real), real["105"], real["13"])
	}

	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// "Afeganistão" and "Åland" in Latin-1; 999 is a placeholder without an M49 id.
	latin1 := []byte("\"CO_PAIS\";\"CO_PAIS_ISON3\";\"CO_PAIS_ISOA3\";\"NO_PAIS\"\r\n" +
		"\"013\";\"004\";\"AFG\";\"Afeganist\xe3o\"\r\n" +
		"\"015\";\"248\";\"ALA\";\"\xc5land, Ilhas\"\r\n" +
		"\"999\";\"000\";\"ZZZ\";\"A designar\"\r\n")
	comex, err := importer.ReadCountries(write("PAIS.csv", latin1))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]importer.Country{"105": {Name: "BRASIL", M49: 76},
		"13": {Name: "Afeganistão", M49: 4}, "15": {Name: "Åland, Ilhas", M49: 248}}
	if len(comex) != len(want) {
		t.Errorf("PAIS.csv: %v, want %v", comex, want)
	}
	for k, c := range want {
		if comex[k] != c {
			t.Errorf("PAIS.csv: %s is %+v, want %+v", k, comex[k], c)
		}
	}
	// UTF-8 with a byte-order mark, as a spreadsheet saves it.
	bom, err := importer.ReadCountries(write("bom.csv", []byte("\xef\xbb\xbfrfb_codigo;nome;m49\n013;Afeganistão;4\n")))
	if err != nil || bom["13"] != (importer.Country{Name: "Afeganistão", M49: 4}) {
		t.Errorf("a file with a BOM: %v %v", bom, err)
	}

	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.csv"), "get PAIS.csv from https://"},
		{write("other.csv", []byte("code;name\n013;x\n")), "expected a header with rfb_codigo and m49"},
	} {
		if _, err := importer.ReadCountries(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", filepath.Base(c.path), err, c.want)
		}
	}
}
