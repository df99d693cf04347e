package importer

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func records(t *testing.T, in string) ([]string, error) {
	t.Helper()
	rr := newRecordReader(strings.NewReader(in))
	var out []string
	for {
		rec, err := rr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		fields := make([]string, len(rec))
		for i, f := range rec {
			fields[i] = string(f)
		}
		out = append(out, strings.Join(fields, "|"))
	}
}

func TestRecordReader(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "\"1\";\"ab\";\"\"\n\"2\";\"cd\";\"x\"\n", "1|ab|/2|cd|x"},
		{"semicolon inside", `"1";"RUA A; LOTE 2"` + "\n", "1|RUA A; LOTE 2"},
		{"escaped quote", `"1";"O ""BOM"" BAR"` + "\n", `1|O "BOM" BAR`},
		{"stray quote", `"1";"O "BOM" BAR";"x"` + "\n", `1|O "BOM" BAR|x`},
		{"crlf", "\"1\";\"a\"\r\n\"2\";\"b\"\r\n", "1|a/2|b"},
		{"no final newline", `"1";"a"`, "1|a"},
		{"latin1", "\"S\xc3O JO\xc3O\";\"a\xe7\xe3o\"\n", "SÃO JOÃO|ação"},
		{"nul stripped", "\"1\x00\";\"a\x00b\"\n", "1|ab"},
		{"bom", "\xef\xbb\xbf\"1\";\"a\"\n", "1|a"},
		{"blank lines", "\n\"1\";\"a\"\n\n", "1|a"},
		{"unquoted", "0001;05893631000109;GUAJARA-MIRIM   ;RO;1100106\r\n", "0001|05893631000109|GUAJARA-MIRIM   |RO|1100106"},
		{"newline inside quotes", "\"1\";\"a\nb\"\n\"2\";\"c\"\n", "1|a\nb/2|c"},
		{"long ascii", `"` + strings.Repeat("abcdefgh", 20) + "\xe9\"\n", strings.Repeat("abcdefgh", 20) + "é"},
	}
	for _, c := range cases {
		got, err := records(t, c.in)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if strings.Join(got, "/") != c.want {
			t.Errorf("%s: got %q want %q", c.name, strings.Join(got, "/"), c.want)
		}
	}
}

func TestRecordReaderLines(t *testing.T) {
	rr := newRecordReader(strings.NewReader("\"1\"\n\"2\nx\"\n\"3\"\n"))
	for _, want := range []int{1, 2, 4} {
		if _, err := rr.Next(); err != nil {
			t.Fatal(err)
		}
		if rr.Line() != want {
			t.Errorf("line %d want %d", rr.Line(), want)
		}
	}
	_, err := records(t, "\"1\";\"a\"\n\"2\";\"never closed\n\"3\";\"b\n")
	if !errors.Is(err, errUnterminated) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("got %v", err)
	}
}

func TestKindOf(t *testing.T) {
	cases := map[string]kind{
		"Empresas0.zip": kindCompanies, "Estabelecimentos9.zip": kindOffices, "Socios3.zip": kindMembers,
		"Simples.zip": kindSimples, "Cnaes.zip": kindActivities, "Motivos.zip": kindReasons,
		"Municipios.zip": kindMunicipalities, "Naturezas.zip": kindNatures, "Paises.zip": kindCountries,
		"Qualificacoes.zip": kindRoles, "K3241.K03200Y0.D61108.ESTABELE": kindOffices,
		"K3241.K03200Y5.D61108.EMPRECSV": kindCompanies, "K3241.K03200Y1.D61108.SOCIOCSV": kindMembers,
		"F.K03200$W.SIMPLES.CSV.D61108": kindSimples, "F.K03200$Z.D61108.CNAECSV": kindActivities,
		"F.K03200$Z.D61108.MOTICSV": kindReasons, "F.K03200$Z.D61108.MUNICCSV": kindMunicipalities,
		"F.K03200$Z.D61108.NATJUCSV": kindNatures, "F.K03200$Z.D61108.PAISCSV": kindCountries,
		"F.K03200$Z.D61108.QUALSCSV": kindRoles, "/x/2026-01/estabelecimentos0.ZIP": kindOffices,
		"TABMUN.CSV": kindUnknown, "paises-m49.csv": kindUnknown, "README.txt": kindUnknown,
	}
	for name, want := range cases {
		if got := kindOf(name); got != want {
			t.Errorf("%s: %v want %v", name, got, want)
		}
	}
}

func TestValues(t *testing.T) {
	w := &copyWriter{}
	for _, v := range []string{"", "0", "00000000", "20240229", "19670630"} {
		if err := w.date([]byte(v), 1); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
	for _, v := range []string{"20230229", "20241301", "2024010", "abcdefgh", "00000101"} {
		if err := w.date([]byte(v), 1); err == nil {
			t.Errorf("%s accepted", v)
		}
	}
	if err := w.equity([]byte("1061004829,23")); err != nil {
		t.Fatal(err)
	}
	w.text([]byte("a\\b\tc\nd"))
	want := `\N	\N	\N	2024-02-29	1967-06-30	1061004829.23	a\\b\tc\nd`
	if string(w.buf) != want {
		t.Errorf("got %q want %q", w.buf, want)
	}
	for _, v := range []string{"1.000,00", "abc", ","} {
		if err := w.equity([]byte(v)); err == nil {
			t.Errorf("%s accepted", v)
		}
	}
}

func TestDumpMonth(t *testing.T) {
	if got := dumpMonth([]string{"/data/rfb/2026-03/Empresas0.zip"}); got != "2026-03" {
		t.Errorf("got %q", got)
	}
	if got := dumpMonth([]string{"/data/rfb/x2026-03"}); got != "" {
		t.Errorf("got %q", got)
	}
}

func BenchmarkRecordReader(b *testing.B) {
	row := `"33683111";"0002";"80";"2";"REGIONAL BRASILIA-DF";"02";"20040522";"00";"";"";"19670630";"6204000";"6201501,6202300,6203100,6209100,6311900";"AVENIDA";"L2 SGAN";"601";"MODULO G";"ASA NORTE";"70836900";"DF";"9701";"61";"33333333";"";"";"";"";"contato@serpro.gov.br";"";""` + "\n"
	data := strings.Repeat(row, 10000)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		rr := newRecordReader(strings.NewReader(data))
		for {
			if _, err := rr.Next(); err != nil {
				break
			}
		}
	}
}
