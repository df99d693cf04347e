package generator

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
)

const testCompanies = 20000

var (
	shared struct {
		dir string
		sum Summary
		err error
	}
	sharedOne sync.Once
)

// dump generates the shared test dump once.
func dump(t *testing.T) (string, Summary) {
	t.Helper()
	sharedOne.Do(func() {
		dir, err := os.MkdirTemp("", "generator-test-")
		if err != nil {
			shared.err = err
			return
		}
		shared.dir = dir
		shared.sum, shared.err = Generate(Options{Companies: testCompanies, Out: dir, Seed: 42})
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.dir, shared.sum
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// member reads the single member of a ZIP, failing unless there is exactly one.
func member(t *testing.T, path string) (string, []byte) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 {
		t.Fatalf("%s: %d members, want 1", path, len(zr.File))
	}
	f := zr.File[0]
	if f.Method != zip.Deflate {
		t.Errorf("%s: method %d, want Deflate", path, f.Method)
	}
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return f.Name, b
}

// rows splits a member into rows of fields, checking the physical format:
// LF endings, every field double-quoted, no quote inside a field, Latin-1.
func rows(t *testing.T, name string, data []byte, cols int) [][]string {
	t.Helper()
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("%s: does not end with LF", name)
	}
	for i := 0; i+1 < len(data); i++ {
		c := data[i]
		if c == '\r' || c == 0 || (c >= 0x80 && c < 0xA0) {
			t.Fatalf("%s: byte %#x at %d (CR, NUL or C1 control)", name, c, i)
		}
		if (c == 0xC2 || c == 0xC3) && data[i+1] >= 0x80 && data[i+1] < 0xC0 {
			t.Fatalf("%s: UTF-8 sequence %#x %#x at %d, want Latin-1", name, c, data[i+1], i)
		}
	}
	var out [][]string
	for n, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if len(line) < 2 || line[0] != '"' || line[len(line)-1] != '"' {
			t.Fatalf("%s:%d: not quoted: %q", name, n+1, line)
		}
		f := strings.Split(line[1:len(line)-1], `";"`)
		if len(f) != cols {
			t.Fatalf("%s:%d: %d columns, want %d: %q", name, n+1, len(f), cols, line)
		}
		for _, s := range f {
			if strings.Contains(s, `"`) {
				t.Fatalf("%s:%d: quote inside a field: %q", name, n+1, line)
			}
		}
		out = append(out, f)
	}
	return out
}

// table holds every row of a file group, decoded.
type table struct {
	rows   [][]string
	raw    []byte
	member []string
}

func readGroup(t *testing.T, dir, prefix string, parts, cols int) table {
	t.Helper()
	var tb table
	for p := 0; p < parts; p++ {
		file := prefix + ".zip"
		if parts > 1 {
			file = fmt.Sprintf("%s%d.zip", prefix, p)
		}
		name, data := member(t, filepath.Join(dir, file))
		tb.member = append(tb.member, name)
		tb.rows = append(tb.rows, rows(t, file, data, cols)...)
		tb.raw = append(tb.raw, data...)
	}
	return tb
}

type dumpData struct {
	emp, est, soc, sim                  table
	cnae, moti, muni, natju, pais, qual table
	codes                               map[string]map[string]bool // table -> codes
}

var (
	readOnce sync.Once
	read     dumpData
)

func load(t *testing.T) dumpData {
	dir, _ := dump(t)
	readOnce.Do(func() {
		read.emp = readGroup(t, dir, "Empresas", 10, 7)
		read.est = readGroup(t, dir, "Estabelecimentos", 10, 30)
		read.soc = readGroup(t, dir, "Socios", 10, 11)
		read.sim = readGroup(t, dir, "Simples", 1, 7)
		read.codes = map[string]map[string]bool{}
		for _, c := range []struct {
			dst  *table
			name string
		}{{&read.cnae, "Cnaes"}, {&read.moti, "Motivos"}, {&read.muni, "Municipios"}, {&read.natju, "Naturezas"}, {&read.pais, "Paises"}, {&read.qual, "Qualificacoes"}} {
			*c.dst = readGroup(t, dir, c.name, 1, 2)
			read.codes[c.name] = map[string]bool{}
			for _, r := range c.dst.rows {
				read.codes[c.name][r[0]] = true
			}
		}
	})
	return read
}

func TestFilesAndMembers(t *testing.T) {
	dir, sum := dump(t)
	d := load(t)
	want := []string{"Cnaes.zip", "Motivos.zip", "Municipios.zip", "Naturezas.zip", "Paises.zip", "Qualificacoes.zip", "Simples.zip", "TABMUN.CSV", "paises-m49.csv"}
	for p := 0; p < 10; p++ {
		want = append(want, fmt.Sprintf("Empresas%d.zip", p), fmt.Sprintf("Estabelecimentos%d.zip", p), fmt.Sprintf("Socios%d.zip", p))
	}
	if len(sum.Files) != len(want) {
		t.Errorf("Summary.Files has %d files, want %d", len(sum.Files), len(want))
	}
	for _, w := range want {
		if _, err := os.Stat(filepath.Join(dir, w)); err != nil {
			t.Error(err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(want) {
		t.Errorf("%d files in Out, want %d", len(entries), len(want))
	}
	tag := regexp.QuoteMeta(sum.DumpDate.Format("D") + sum.DumpDate.Format("2006")[3:] + sum.DumpDate.Format("0102"))
	checks := []struct {
		names []string
		re    string
	}{
		{d.emp.member, `^K3241\.K03200Y\d\.` + tag + `\.EMPRECSV$`},
		{d.est.member, `^K3241\.K03200Y\d\.` + tag + `\.ESTABELE$`},
		{d.soc.member, `^K3241\.K03200Y\d\.` + tag + `\.SOCIOCSV$`},
		{d.sim.member, `^F\.K03200\$W\.SIMPLES\.CSV\.` + tag + `$`},
		{d.cnae.member, `^F\.K03200\$Z\.` + tag + `\.CNAECSV$`},
		{d.moti.member, `^F\.K03200\$Z\.` + tag + `\.MOTICSV$`},
		{d.muni.member, `^F\.K03200\$Z\.` + tag + `\.MUNICCSV$`},
		{d.natju.member, `^F\.K03200\$Z\.` + tag + `\.NATJUCSV$`},
		{d.pais.member, `^F\.K03200\$Z\.` + tag + `\.PAISCSV$`},
		{d.qual.member, `^F\.K03200\$Z\.` + tag + `\.QUALSCSV$`},
	}
	for _, c := range checks {
		for _, n := range c.names {
			if !regexp.MustCompile(c.re).MatchString(n) {
				t.Errorf("member %q does not match %s", n, c.re)
			}
		}
	}
	// Part 0 several times larger than the others.
	st0, _ := os.Stat(filepath.Join(dir, "Empresas0.zip"))
	st1, _ := os.Stat(filepath.Join(dir, "Empresas1.zip"))
	if st0.Size() < 3*st1.Size() {
		t.Errorf("Empresas0 is %d bytes, Empresas1 %d: part 0 should be several times larger", st0.Size(), st1.Size())
	}
	zr, _ := zip.OpenReader(filepath.Join(dir, "Empresas3.zip"))
	defer zr.Close()
	if m := zr.File[0].Modified.UTC(); !m.Before(sum.DumpDate) || m.Before(sum.DumpDate.AddDate(0, 0, -7)) {
		t.Errorf("member modified %v, want a few days before the dump date %v", m, sum.DumpDate)
	}
}

func TestSummaryCounts(t *testing.T) {
	_, sum := dump(t)
	d := load(t)
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"companies", sum.Companies, len(d.emp.rows)},
		{"offices", sum.Offices, len(d.est.rows)},
		{"members", sum.Members, len(d.soc.rows)},
		{"simples", sum.Simples, len(d.sim.rows)},
	} {
		if c.got != c.want {
			t.Errorf("Summary %s = %d, rows written %d", c.name, c.got, c.want)
		}
	}
	if sum.Companies != testCompanies {
		t.Errorf("Companies = %d, want %d", sum.Companies, testCompanies)
	}
}

func TestLatin1AndAccents(t *testing.T) {
	d := load(t)
	for name, raw := range map[string][]byte{"Empresas": d.emp.raw, "Estabelecimentos": d.est.raw, "Socios": d.soc.raw, "Cnaes": d.cnae.raw, "Naturezas": d.natju.raw, "Qualificacoes": d.qual.raw} {
		if utf8.Valid(raw) {
			t.Errorf("%s is valid UTF-8, want Latin-1 with accents", name)
		}
		if name == "Qualificacoes" || name == "Naturezas" {
			continue
		}
		for _, accent := range []string{"ç", "ã", "é", "í", "ô"} {
			if !bytes.Contains(raw, []byte(latin1(accent))) && !bytes.Contains(raw, []byte(latin1(strings.ToUpper(accent)))) {
				t.Errorf("%s has no %s", name, accent)
			}
		}
	}
	if !bytes.Contains(d.soc.raw, []byte(latin1("Ü"))) {
		t.Error("Socios has no ü")
	}
	semicolon := func(rows [][]string, col int) bool {
		for _, r := range rows {
			if strings.Contains(r[col], ";") {
				return true
			}
		}
		return false
	}
	if !semicolon(d.emp.rows, 1) || !semicolon(d.est.rows, 16) || !semicolon(d.est.rows, 17) || !semicolon(d.cnae.rows, 1) {
		t.Error("want ';' inside names, complements, bairros and CNAE descriptions")
	}
}

func validDate(s string, dump time.Time) bool {
	if s == "" || s == "0" || s == "00000000" {
		return true
	}
	d, err := time.Parse("20060102", s)
	return err == nil && !d.After(dump) && d.Year() >= 1900
}

func TestFieldsValid(t *testing.T) {
	_, sum := dump(t)
	d := load(t)
	roots := map[string]bool{}
	for _, r := range d.emp.rows {
		if _, err := cnpj.ParseRoot(r[0]); err != nil || len(r[0]) != 8 {
			t.Fatalf("bad root %q", r[0])
		}
		if roots[r[0]] {
			t.Fatalf("duplicate root %q", r[0])
		}
		roots[r[0]] = true
		if !regexp.MustCompile(`^\d+,\d\d$`).MatchString(r[4]) {
			t.Errorf("capital %q", r[4])
		}
		if (r[6] != "") != (r[2][0] == '1') {
			t.Errorf("ente federativo %q with natureza %s", r[6], r[2])
		}
	}
	nulls := map[string]bool{}
	for _, r := range d.est.rows {
		if _, err := cnpj.Parse(r[0] + r[1] + r[2]); err != nil {
			t.Fatalf("office %s%s%s: %v", r[0], r[1], r[2], err)
		}
		if !roots[r[0]] {
			t.Fatalf("office of unknown root %s", r[0])
		}
		if r[3] != "1" && r[3] != "2" {
			t.Fatalf("matriz/filial %q", r[3])
		}
		for _, c := range []int{6, 10, 29} {
			if !validDate(r[c], sum.DumpDate) {
				t.Fatalf("bad date %q in column %d", r[c], c)
			}
			if r[c] == "" || r[c] == "0" || r[c] == "00000000" {
				nulls[r[c]] = true
			}
		}
		if r[27] != strings.ToLower(r[27]) {
			t.Errorf("e-mail not lowercase: %q", r[27])
		}
		if len(r[11]) != 7 {
			t.Errorf("CNAE %q", r[11])
		}
		if (r[19] == "EX") != (r[20] == "9707") || (r[19] == "EX") != (r[9] != "" && r[9] != "105") {
			t.Errorf("abroad office inconsistent: UF %s município %s país %s", r[19], r[20], r[9])
		}
	}
	for _, n := range []string{"", "0", "00000000"} {
		if !nulls[n] {
			t.Errorf("null date form %q never used in Estabelecimentos", n)
		}
	}
	for _, r := range d.soc.rows {
		if !roots[r[0]] {
			t.Fatalf("partner of unknown root %s", r[0])
		}
		if !validDate(r[5], sum.DumpDate) {
			t.Fatalf("bad date %q", r[5])
		}
		switch r[1] {
		case "1":
			if !cnpj.Valid(r[3]) {
				t.Fatalf("legal partner with bad CNPJ %q", r[3])
			}
		case "2":
			if !cnpj.MaskedCPF(r[3]) {
				t.Fatalf("natural partner with document %q", r[3])
			}
		case "3":
			if r[3] != "" || r[6] == "" {
				t.Fatalf("foreign partner: document %q, país %q", r[3], r[6])
			}
		default:
			t.Fatalf("identificador %q", r[1])
		}
		if !cnpj.MaskedCPF(r[7]) || (r[7] == "***000000**") != (r[8] == "" && r[9] == "00") {
			t.Fatalf("representative %q %q %q", r[7], r[8], r[9])
		}
		if len(r[10]) != 1 || r[10][0] < '0' || r[10][0] > '9' {
			t.Fatalf("faixa etária %q", r[10])
		}
	}
	for _, r := range d.sim.rows {
		if !roots[r[0]] {
			t.Fatalf("Simples row of unknown root %s", r[0])
		}
		for _, c := range []int{2, 3, 5, 6} {
			if !validDate(r[c], sum.DumpDate) {
				t.Fatalf("bad Simples date %q", r[c])
			}
		}
	}
}

func TestTabmunAndPaises(t *testing.T) {
	dir, _ := dump(t)
	d := load(t)
	data, err := os.ReadFile(filepath.Join(dir, "TABMUN.CSV"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("\r\n")) {
		t.Fatal("TABMUN does not end with CRLF")
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\r\n"), "\r\n")
	inTab := map[string]bool{}
	ufs := map[string]bool{}
	for _, l := range lines {
		f := strings.Split(l, ";")
		if len(f) != 5 || len(f[0]) != 4 || len(f[2]) != 45 || len(f[3]) != 2 || len(f[4]) != 7 || !cnpj.Valid(f[1]) {
			t.Fatalf("TABMUN line %q", l)
		}
		if strings.Contains(l, "\n") {
			t.Fatalf("bare LF in TABMUN line %q", l)
		}
		inTab[f[0]] = true
		ufs[f[3]] = true
	}
	if len(ufs) != 27 || len(lines) < 250 {
		t.Errorf("TABMUN: %d lines over %d UFs, want ~300 over 27", len(lines), len(ufs))
	}
	if !strings.Contains(string(data), "9701;") || !strings.Contains(string(data), ";DF;5300108\r\n") {
		t.Error("TABMUN lacks 9701 BRASILIA -> 5300108")
	}
	for code := range d.codes["Municipios"] {
		if !inTab[code] && code != exteriorMunicipio && code != newMunicipio {
			t.Errorf("município %s not in TABMUN", code)
		}
	}
	if inTab[exteriorMunicipio] || inTab[newMunicipio] {
		t.Error("9707 and 1182 must be absent from TABMUN")
	}
	m49, err := os.ReadFile(filepath.Join(dir, "paises-m49.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(m49) || !strings.HasPrefix(string(m49), "rfb_codigo;nome;m49;iso_alpha3\n") {
		t.Error("paises-m49.csv: want UTF-8 with the rfb_codigo;nome;m49;iso_alpha3 header")
	}
	m49Lines := strings.Split(strings.TrimSpace(string(m49)), "\n")[1:]
	if len(m49Lines) != len(d.pais.rows) {
		t.Errorf("paises-m49 has %d countries, Paises %d", len(m49Lines), len(d.pais.rows))
	}
	for i, l := range m49Lines {
		f := strings.Split(l, ";")
		if f[0] != d.pais.rows[i][0] || f[1] != fromLatin1(d.pais.rows[i][1]) {
			t.Errorf("paises-m49 %q does not match Paises %v", l, d.pais.rows[i])
		}
	}
	for _, c := range []string{"105", "249", "493"} {
		if !d.codes["Paises"][c] {
			t.Errorf("Paises lacks %s", c)
		}
	}
}

func TestProportions(t *testing.T) {
	_, sum := dump(t)
	d := load(t)
	ratio := func(name string, num, den int, lo, hi float64) {
		t.Helper()
		r := float64(num) / float64(den)
		if r < lo || r > hi {
			t.Errorf("%s = %.3f, want within [%.2f, %.2f]", name, r, lo, hi)
		} else {
			t.Logf("%s = %.3f", name, r)
		}
	}
	ratio("offices per company", sum.Offices, sum.Companies, 1.1, 1.5)
	ratio("members per office", sum.Members, sum.Offices, 0.3, 0.55)
	ratio("simples per office", sum.Simples, sum.Offices, 0.5, 0.8)
	perRoot := map[string]int{}
	status := map[string]int{}
	for _, r := range d.est.rows {
		perRoot[r[0]]++
		status[r[5]]++
	}
	multi, big := 0, 0
	for _, n := range perRoot {
		if n >= 2 && n <= 5 {
			multi++
		}
		if n >= 1000 {
			big++
		}
	}
	ratio("companies with 2-5 offices", multi, sum.Companies, 0.06, 0.14)
	if big < 3 {
		t.Errorf("%d companies with thousands of offices, want at least 3", big)
	}
	ratio("active offices", status["02"], sum.Offices, 0.45, 0.65)
	for _, s := range []string{"01", "03", "04", "08"} {
		if status[s] == 0 {
			t.Errorf("no office with status %s", s)
		}
	}
	alpha := 0
	for _, r := range d.emp.rows {
		if !cnpj.Root(r[0]).Numeric() {
			alpha++
		}
	}
	ratio("alphanumeric roots", alpha, sum.Companies, 0.01, 0.06)
	perCompany := map[string]int{}
	for _, r := range d.soc.rows {
		perCompany[r[0]]++
	}
	dozens := 0
	for _, n := range perCompany {
		if n >= 12 {
			dozens++
		}
	}
	if dozens == 0 {
		t.Error("no company with dozens of partners")
	}
}

func TestFeatures(t *testing.T) {
	d := load(t)
	heads := map[string]string{} // head office CNPJ -> root
	orders := map[string]bool{}
	var abroad, lostZero, placeholder, special, unknownCNAE, unknownMun, unknownPaisOffice, motivo32 bool
	for _, r := range d.est.rows {
		if r[3] == "1" {
			heads[r[0]+r[1]+r[2]] = r[0]
			orders[r[1]] = true
		}
		abroad = abroad || (r[19] == "EX" && r[8] != "" && r[20] == "9707")
		lostZero = lostZero || len(r[18]) == 7
		placeholder = placeholder || r[22] == "0" || r[22] == "0000"
		special = special || (r[28] != "" && r[29] != "")
		unknownCNAE = unknownCNAE || !d.codes["Cnaes"][r[11]]
		unknownMun = unknownMun || (!d.codes["Municipios"][r[20]] && r[19] != "EX")
		unknownPaisOffice = unknownPaisOffice || (r[9] != "" && !d.codes["Paises"][r[9]])
		motivo32 = motivo32 || r[7] == "32"
	}
	for name, ok := range map[string]bool{
		"office abroad (EX, 9707, city)": abroad, "CEP with 7 digits": lostZero, "placeholder phone": placeholder,
		"situação especial with date": special, "unknown CNAE": unknownCNAE, "unknown município": unknownMun,
		"unknown país in an office": unknownPaisOffice, "motivo 32": motivo32,
		"head office with order other than 0001": len(orders) > 1,
	} {
		if !ok {
			t.Errorf("missing feature: %s", name)
		}
	}
	if d.codes["Motivos"]["32"] || d.codes["Qualificacoes"]["36"] {
		t.Error("motivo 32 and qualificação 36 must be absent from the tables")
	}
	persons := map[string]map[string]bool{} // name+cpf -> roots
	var legal, foreign3, foreign38, agent, noAgent, legacy36, band0, unknownPais bool
	for _, r := range d.soc.rows {
		switch {
		case r[1] == "1":
			if _, ok := heads[r[3]]; !ok {
				t.Errorf("legal partner %s is not a head office of the dump", r[3])
			}
			legal = true
		case r[1] == "3" && r[4] == "37" && r[6] != "":
			foreign3 = true
		case r[1] == "2" && r[4] == "38" && r[6] != "":
			foreign38 = true
		case r[1] == "2":
			k := r[2] + "|" + r[3]
			if persons[k] == nil {
				persons[k] = map[string]bool{}
			}
			persons[k][r[0]] = true
			band0 = band0 || r[10] == "0"
		}
		agent = agent || (r[7] != "***000000**" && r[8] != "" && r[9] != "00")
		noAgent = noAgent || (r[7] == "***000000**" && r[8] == "" && r[9] == "00")
		legacy36 = legacy36 || r[4] == "36"
		unknownPais = unknownPais || (r[6] != "" && !d.codes["Paises"][r[6]])
	}
	sharedPersons := 0
	for _, roots := range persons {
		if len(roots) > 1 {
			sharedPersons++
		}
	}
	for name, ok := range map[string]bool{
		"legal-person partner": legal, "foreign partner (3, 37)": foreign3, "foreign individual (2, 38)": foreign38,
		"partner with representative": agent, "partner without representative": noAgent, "qualificação 36": legacy36,
		"faixa etária 0": band0, "unknown país in a partner": unknownPais, "person in several companies": sharedPersons > 10,
	} {
		if !ok {
			t.Errorf("missing feature: %s", name)
		}
	}
	var sOpen, nClosed, mei, empty bool
	for _, r := range d.sim.rows {
		sOpen = sOpen || (r[1] == "S" && len(r[2]) == 8 && r[2] != "00000000" && r[3] == "00000000")
		nClosed = nClosed || (r[1] == "N" && r[2] != "00000000" && r[3] != "00000000")
		mei = mei || r[4] == "S"
		empty = empty || r[1] == ""
	}
	if !sOpen || !nClosed || !mei || !empty {
		t.Errorf("Simples kinds: S open %v, N closed %v, MEI %v, empty %v", sOpen, nClosed, mei, empty)
	}
	portes := map[string]bool{}
	var cents, ente bool
	for _, r := range d.emp.rows {
		portes[r[5]] = true
		cents = cents || !strings.HasSuffix(r[4], ",00")
		ente = ente || r[6] != ""
	}
	if len(portes) != 4 || !portes["00"] || !portes["01"] || !portes["03"] || !portes["05"] || !cents || !ente {
		t.Errorf("portes %v, capital with cents %v, ente federativo %v", portes, cents, ente)
	}
}

func TestSamplesMatchFiles(t *testing.T) {
	_, sum := dump(t)
	d := load(t)
	if len(sum.Samples) < 6 {
		t.Fatalf("%d samples", len(sum.Samples))
	}
	lines := map[string]bool{}
	for _, raw := range [][]byte{d.emp.raw, d.est.raw, d.soc.raw, d.sim.raw} {
		for _, l := range strings.SplitAfter(string(raw), "\n") {
			lines[l] = true
		}
	}
	line := func(f []string) string { return `"` + latin1(strings.Join(f, `";"`)) + `"` + "\n" }
	for _, s := range sum.Samples {
		if !cnpj.Valid(s.TaxID) || s.Root != s.TaxID[:8] {
			t.Errorf("%s: tax id %q root %q", s.Why, s.TaxID, s.Root)
		}
		if !lines[line(s.Office)] {
			t.Errorf("%s: office row not in the dump: %v", s.Why, s.Office)
		}
		if !lines[line(s.Company)] {
			t.Errorf("%s: company row not in the dump", s.Why)
		}
		for _, m := range s.Members {
			if !lines[line(m)] {
				t.Errorf("%s: member row not in the dump: %v", s.Why, m)
			}
		}
		if s.Simples != nil && !lines[line(s.Simples)] {
			t.Errorf("%s: Simples row not in the dump", s.Why)
		}
	}
}

func hashes(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

func TestDeterministic(t *testing.T) {
	gen := func(seed int64) map[string][32]byte {
		dir := t.TempDir()
		if _, err := Generate(Options{Companies: 3000, Out: dir, Seed: seed, Parts: 3}); err != nil {
			t.Fatal(err)
		}
		return hashes(t, dir)
	}
	a, b, c := gen(7), gen(7), gen(8)
	if len(a) != 3*3+6+1+2 {
		t.Errorf("%d files with 3 parts", len(a))
	}
	for name, h := range a {
		if b[name] != h {
			t.Errorf("%s differs between two runs with the same seed", name)
		}
	}
	if a["Estabelecimentos0.zip"] == c["Estabelecimentos0.zip"] || a["Socios1.zip"] == c["Socios1.zip"] {
		t.Error("a different seed gave the same data")
	}
}

func TestOptions(t *testing.T) {
	if _, err := Generate(Options{Companies: 0, Out: t.TempDir()}); err == nil {
		t.Error("Companies 0 accepted")
	}
	if _, err := Generate(Options{Companies: 10}); err == nil {
		t.Error("empty Out accepted")
	}
	dir := filepath.Join(t.TempDir(), "new", "dir")
	sum, err := Generate(Options{Companies: 5, Out: dir, Seed: -3, Parts: 1})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Companies != 5 || len(sum.Files) != 3+7+2 {
		t.Errorf("tiny dump: %d companies, %d files", sum.Companies, len(sum.Files))
	}
}
