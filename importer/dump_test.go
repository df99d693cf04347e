package importer_test

import (
	"archive/zip"
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// sharedDir is the project's shared folder with the real registry files.
func sharedDir(t testing.TB) string { return dbtest.SharedDir(t) }

func tabmun(t testing.TB) string {
	return filepath.Join(sharedDir(t), "data", "municipios", "TABMUN.CSV")
}

func countriesFile(t testing.TB) string {
	return filepath.Join(sharedDir(t), "data", "paises", "paises-m49.csv")
}

func sampleDir(t testing.TB) string {
	return filepath.Join(sharedDir(t), "data", "rfb-sample")
}

// zipWriter writes one dump ZIP holding a single member, in Latin-1.
type zipWriter struct {
	f *os.File
	z *zip.Writer
	w *bufio.Writer
}

func newZip(t testing.TB, dir, name string) *zipWriter {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	m, err := z.CreateHeader(&zip.FileHeader{Name: "K3241.K03200Y0.D61108." + name, Method: zip.Deflate,
		Modified: time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return &zipWriter{f: f, z: z, w: bufio.NewWriterSize(m, 1<<16)}
}

// emptyKinds writes empty ZIPs of the registry kinds dir lacks (Empresas,
// Estabelecimentos, Socios, Simples), for a test about one kind: an import
// refuses a dump without one of them.
func emptyKinds(t testing.TB, dir string) {
	t.Helper()
	for _, name := range []string{"Empresas0", "Estabelecimentos0", "Socios0", "Simples"} {
		if _, err := os.Stat(filepath.Join(dir, name+".zip")); err == nil {
			continue
		}
		newZip(t, dir, name).close(t)
	}
}

// row writes quoted fields; strings are written byte for byte, so pass
// Latin-1 ("JOS\xc9").
func (w *zipWriter) row(fields ...string) {
	for i, f := range fields {
		if i > 0 {
			_ = w.w.WriteByte(';')
		}
		_ = w.w.WriteByte('"')
		_, _ = w.w.WriteString(f)
		_ = w.w.WriteByte('"')
	}
	_ = w.w.WriteByte('\n')
}

func (w *zipWriter) raw(s string) { _, _ = w.w.WriteString(s) }

func (w *zipWriter) close(t testing.TB) {
	t.Helper()
	if err := w.w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.f.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeDump writes a synthetic dump of n companies in two parts per big
// group: about 1.1 offices, 1.2 partners (some shared, some with agents,
// some foreign) and 0.7 Simples rows per company, plus code tables.
func writeDump(t testing.TB, dir string, n int) {
	t.Helper()
	codes := map[string][][2]string{
		"Cnaes":         {{"6204000", "Consultoria em tecnologia da informa\xe7\xe3o"}, {"4711302", "Com\xe9rcio varejista; supermercados"}},
		"Motivos":       {{"00", "SEM MOTIVO"}, {"01", "EXTINCAO"}},
		"Municipios":    {{"9701", "BRASILIA"}, {"7107", "SAO PAULO"}},
		"Naturezas":     {{"2062", "Sociedade Empres\xe1ria Limitada"}, {"2135", "Empres\xe1rio (Individual)"}},
		"Paises":        {{"105", "BRASIL"}, {"249", "ESTADOS UNIDOS"}},
		"Qualificacoes": {{"49", "S\xf3cio-Administrador"}, {"37", "S\xf3cio Pessoa Jur\xeddica Domiciliado no Exterior"}},
	}
	for name, rows := range codes {
		z := newZip(t, dir, name)
		for _, r := range rows {
			z.row(r[0], r[1])
		}
		z.close(t)
	}
	const parts = 2
	var emp, est, soc [parts]*zipWriter
	for p := range parts {
		emp[p] = newZip(t, dir, fmt.Sprintf("Empresas%d", p))
		est[p] = newZip(t, dir, fmt.Sprintf("Estabelecimentos%d", p))
		soc[p] = newZip(t, dir, fmt.Sprintf("Socios%d", p))
	}
	sim := newZip(t, dir, "Simples")
	for i := range n {
		p := i % parts
		root := fmt.Sprintf("%08d", 10000000+i)
		emp[p].row(root, fmt.Sprintf("EMPRESA N\xdaMERO %d LTDA", i), "2062", "49", fmt.Sprintf("%d,%02d", i*100, i%100), "01", "")
		offices := 1
		if i%10 == 0 {
			offices = 2
		}
		for o := 1; o <= offices; o++ {
			head := "1"
			if o > 1 {
				head = "2"
			}
			special, specialDate := "", ""
			switch i % 1000 {
			case 0:
				special, specialDate = "RECUPERACAO JUDICIAL", "20200101"
			case 500:
				special, specialDate = "EM LIQUIDA\xc7\xc3O", "20210101"
			}
			est[p].row(root, fmt.Sprintf("%04d", o), "00", head, "FANTASIA; "+root, "02", "20200101", "00", "", "",
				"20100315", "6204000", "4711302,6204000", "RUA", fmt.Sprintf("DAS FLORES %d", i), "123", "SALA 1",
				"CENTRO", "1234567", "SP", "7107", "11", "33334444", "0", "0", "", "", "contato@example.com", special, specialDate)
		}
		soc[p].row(root, "2", fmt.Sprintf("JOS\xc9 DA SILVA %d", i%5000), fmt.Sprintf("***%06d**", i%5000), "49", "20150101", "",
			"***000000**", "", "00", fmt.Sprint(i%10))
		if i%5 == 0 {
			soc[p].row(root, "1", fmt.Sprintf("EMPRESA N\xdaMERO %d LTDA", i+1), fmt.Sprintf("%08d000100", 10000000+i+1), "22", "20180101", "",
				"***123456**", "MARIA REPRESENTANTE", "05", "0")
		}
		if i%50 == 0 {
			soc[p].row(root, "3", "FOREIGN HOLDING INC", "", "37", "20190101", "249", "***000000**", "", "00", "0")
		}
		switch i % 10 {
		case 0, 1, 2, 3:
			sim.row(root, "S", "20180101", "00000000", "N", "00000000", "00000000")
		case 4, 5:
			sim.row(root, "N", "20100101", "20151231", "S", "20160101", "0")
		case 6:
			sim.row(root, "N", "", "", "N", "", "")
		}
	}
	for p := range parts {
		emp[p].close(t)
		est[p].close(t)
		soc[p].close(t)
	}
	sim.close(t)
}
