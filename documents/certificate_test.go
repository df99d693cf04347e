package documents

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/model"
)

// pdfText extracts a PDF's text with poppler's pdftotext (Debian package
// poppler-utils); pages are separated by form feeds.
func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	cmd := exec.Command("pdftotext", "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext (install poppler-utils): %v", err)
	}
	return string(out)
}

func pageCount(text string) int { return strings.Count(text, "\f") }

func ptr[T any](v T) *T { return &v }

func sampleOffice(members int) model.Office {
	founded := time.Date(1990, 1, 15, 0, 0, 0, 0, time.UTC)
	o := model.Office{
		Updated:      time.Date(2025, 12, 7, 0, 0, 0, 0, time.UTC),
		TaxID:        "11222333000181",
		Root:         "11222333",
		Alias:        ptr("LOJA DA ESQUINA"),
		Founded:      &founded,
		Head:         true,
		StatusDate:   &founded,
		Status:       model.Code{ID: 2, Text: "Ativa"},
		Address:      model.Address{Street: "RUA DAS FLORES", Number: "101", District: "CENTRO", City: "SAO PAULO", State: "SP", Zip: "01001000"},
		Phones:       []model.Phone{{Area: "11", Number: "33334444"}},
		MainActivity: model.Code{ID: 4711302, Text: "Comércio varejista de mercadorias em geral"},
		Company: &model.Company{
			Root: "11222333", Name: "GRANDE REDE DE LOJAS S.A.", Equity: "250000.5",
			Nature: model.Code{ID: 2054, Text: "Sociedade Anônima Fechada"},
			Size:   &model.Size{ID: 5, Acronym: "DEMAIS", Text: "Demais"},
		},
	}
	for i := 0; i < members; i++ {
		m := model.Member{Person: model.Person{Name: fmt.Sprintf("SÓCIO NÚMERO %03d", i)}, Role: model.Code{ID: 22, Text: "Sócio"}}
		if i%10 == 0 {
			m.Agent = &model.Agent{Person: model.Person{Name: "MARIA REPRESENTANTE"}, Role: model.Code{ID: 5, Text: "Administrador"}}
		}
		o.Company.Members = append(o.Company.Members, m)
	}
	return o
}

func TestRegistryCertificateFlowsOverPages(t *testing.T) {
	issued := time.Date(2025, 12, 17, 13, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	if err := RegistryCertificate(&buf, sampleOffice(300), Pages{Registration: true, Members: true}, issued); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, buf.Bytes())
	if n := pageCount(text); n < 6 {
		t.Errorf("%d pages for 300 members, want the table to flow over several", n)
	}
	for _, want := range []string{
		"11.222.333/0001-81", "MATRIZ", "GRANDE REDE DE LOJAS S.A.", "LOJA DA ESQUINA",
		"47.11-3-02 - Comércio varejista", "205-4 - Sociedade Anônima Fechada", "01.001-000",
		"(11) 3333-4444", "R$ 250.000,50", "SÓCIO NÚMERO 000", "SÓCIO NÚMERO 299", "22-Sócio",
		"05-Administrador", "Emitido no dia 17/12/2025 às 10:00:00 (data e hora de Brasília).",
		"Dados de 07/12/2025.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("certificate lacks %q", want)
		}
	}
	// The table header is repeated on every page the members flow over.
	if got, pages := strings.Count(text, "Qualificação Rep. Legal"), pageCount(text)-1; got != pages {
		t.Errorf("member table header on %d pages, want %d", got, pages)
	}
}

func TestRegistryCertificatePagesAlone(t *testing.T) {
	issued := time.Date(2025, 12, 17, 13, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		pages      Pages
		want, lack string
	}{
		{Pages{Registration: true}, "COMPROVANTE DE INSCRIÇÃO", "QUADRO DE SÓCIOS"},
		{Pages{Members: true}, "QUADRO DE SÓCIOS", "COMPROVANTE DE INSCRIÇÃO"},
	} {
		var buf bytes.Buffer
		if err := RegistryCertificate(&buf, sampleOffice(2), c.pages, issued); err != nil {
			t.Fatal(err)
		}
		text := pdfText(t, buf.Bytes())
		if pageCount(text) != 1 || !strings.Contains(text, c.want) || strings.Contains(text, c.lack) {
			t.Errorf("pages %+v: %d pages, want only %q:\n%s", c.pages, pageCount(text), c.want, text)
		}
	}
}

func TestSimplesCertificate(t *testing.T) {
	since := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	until := time.Date(2020, 12, 31, 0, 0, 0, 0, time.UTC)
	rec := model.SimplesRecord{
		Updated: time.Date(2025, 12, 7, 0, 0, 0, 0, time.UTC),
		Simples: model.Simples{History: []model.SimplesPeriod{{From: time.Date(2018, 3, 1, 0, 0, 0, 0, time.UTC), Until: &until, Text: "Optante pelo Simples Nacional"}}},
		Simei:   model.Simples{Optant: true, Since: &since, History: []model.SimplesPeriod{}},
	}
	var buf bytes.Buffer
	if err := SimplesCertificate(&buf, sampleOffice(0), rec, time.Date(2025, 12, 17, 13, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, buf.Bytes())
	for _, want := range []string{
		"NÃO optante pelo Simples Nacional", "Enquadrado no SIMEI desde 01/01/2021",
		"Opções pelo Simples Nacional em Períodos Anteriores", "01/03/2018", "31/12/2020",
		"Enquadramentos no SIMEI em Períodos Anteriores", "Não Existem",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("certificate lacks %q:\n%s", want, text)
		}
	}
}

func TestFormatMoney(t *testing.T) {
	for in, want := range map[string]string{
		"1061004829.23": "R$ 1.061.004.829,23", "0": "R$ 0,00", "250000.5": "R$ 250.000,50", "999": "R$ 999,00",
	} {
		if got := formatMoney(in); got != want {
			t.Errorf("formatMoney(%q) = %q, want %q", in, got, want)
		}
	}
}
