package listfile

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/cnpjgraph/cnpjgraph/model"
	"github.com/cnpjgraph/cnpjgraph/wire"
)

func day(y int, m time.Month, d int) *time.Time {
	t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return &t
}

func ptr[T any](v T) *T { return &v }

// full has everything set: Simples asked for, members, registrations.
func full() model.Office {
	return model.Office{
		Updated:    time.Date(2026, 3, 4, 5, 6, 7, 890e6, time.UTC),
		TaxID:      "00000000000191",
		Root:       "00000000",
		Alias:      ptr("Direção Geral"),
		Founded:    day(1966, 8, 1),
		Head:       true,
		StatusDate: day(2005, 11, 3),
		Status:     model.Code{ID: 2, Text: "Ativa"},
		Address: model.Address{
			Municipality: ptr(5300108),
			Street:       "Quadra SAUN Quadra 5 Lote B",
			Number:       "S/N",
			Details:      ptr("Andar 1 a 16"),
			District:     "Asa Norte",
			City:         "Brasília",
			State:        "DF",
			Zip:          "07002900",
			Country:      model.Country{ID: 76, Name: "Brasil"},
		},
		Phones:         []model.Phone{{Area: "61", Number: "34939002"}, {Area: "61", Number: "34931040"}},
		Emails:         []model.Email{{Address: "secex@bb.com.br", Domain: "bb.com.br"}},
		MainActivity:   model.Code{ID: 6422100, Text: "Bancos múltiplos, com carteira comercial"},
		SideActivities: []model.Code{{ID: 6435201, Text: "Sociedades de crédito imobiliário"}, {ID: 6499999}},
		SpecialDate:    day(2020, 1, 2),
		Special:        &model.Special{ID: 3, Text: "Intervenção"},
		Registrations:  []model.Registration{{State: "DF", Number: "0731311400140", Enabled: true}, {State: "SP", Number: "110042490114"}},
		Company: &model.Company{
			Root:    "00000000",
			Name:    "BANCO DO BRASIL SA",
			Equity:  "120000000000.50",
			Nature:  model.Code{ID: 2038, Text: "Sociedade de Economia Mista"},
			Size:    &model.Size{ID: 5, Acronym: "DEMAIS", Text: "Demais"},
			Simples: &model.Simples{Optant: true, Since: day(2007, 7, 1)},
			Simei:   &model.Simples{Optant: false},
			Members: []model.Member{
				{
					Since:  day(2021, 3, 29),
					Person: model.Person{Type: "NATURAL", Name: "FAUSTO DE ANDRADE RIBEIRO", TaxID: ptr("***123456**"), Age: ptr("41-50")},
					Role:   model.Code{ID: 10, Text: "Diretor"},
				},
				{
					Person: model.Person{Type: "LEGAL", Name: "UNIÃO FEDERAL", TaxID: ptr("00394460000141")},
					Role:   model.Code{ID: 22, Text: "Sócio"},
				},
			},
		},
	}
}

// bare has every field that can be nil or empty left so, Simples not
// asked for and no members.
func bare() model.Office {
	return model.Office{
		TaxID:  "12ABC34501DE35",
		Root:   "12ABC345",
		Status: model.Code{ID: 8, Text: "Baixada"},
		Company: &model.Company{
			Root:   "12ABC345",
			Name:   "EMPRESA SEM DADOS",
			Equity: "0",
			Nature: model.Code{ID: 2135},
		},
	}
}

// third is a second company with one member whose fields are mostly nil.
func third() model.Office {
	return model.Office{
		Updated:      time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC),
		TaxID:        "01234567000120",
		Root:         "01234567",
		Status:       model.Code{ID: 2, Text: "Ativa"},
		MainActivity: model.Code{ID: 111301, Text: "Cultivo de arroz"},
		Company: &model.Company{
			Root:   "01234567",
			Name:   "ARROZ LTDA",
			Equity: "5000",
			Nature: model.Code{ID: 2062, Text: "Sociedade Empresária Limitada"},
			Members: []model.Member{
				{Person: model.Person{Type: "FOREIGN", Name: "JOHN DOE"}, Role: model.Code{ID: 37}},
			},
		},
	}
}

func offices() []wire.Office {
	return []wire.Office{wire.OfficeOf(full()), wire.OfficeOf(bare()), wire.OfficeOf(third())}
}

func writeExcel(t *testing.T, list []wire.Office, setup func(*Excel)) *excelize.File {
	t.Helper()
	var buf bytes.Buffer
	e, err := NewExcel(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(e)
	}
	for _, o := range list {
		if err := e.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

var officeHeaders = []string{
	"taxId", "company.name", "alias", "head", "founded", "status.text", "statusDate",
	"reason.text", "special.text", "specialDate", "company.nature.id", "company.nature.text",
	"company.size.acronym", "company.equity", "company.simples.optant", "company.simples.since",
	"company.simei.optant", "company.simei.since", "mainActivity.id", "mainActivity.text",
	"sideActivities", "address.street", "address.number", "address.details", "address.district",
	"address.municipality", "address.city", "address.state", "address.zip", "address.country.name",
	"phones", "emails", "registrations", "updated",
}

// at is the cell of the named column of the offices sheet in row n.
func at(t *testing.T, header string, n int) string {
	t.Helper()
	i := slices.Index(officeHeaders, header)
	if i < 0 {
		t.Fatalf("no column %s", header)
	}
	c, err := excelize.CoordinatesToCellName(i+1, n)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestExcel(t *testing.T) {
	f := writeExcel(t, offices(), nil)
	if got := f.GetSheetList(); !slices.Equal(got, []string{"offices", "members"}) {
		t.Fatalf("sheets %v", got)
	}
	rows, err := f.GetRows("offices")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d office rows, want header and 3", len(rows))
	}
	if !slices.Equal(rows[0], officeHeaders) {
		t.Errorf("headers\n got %q\nwant %q", rows[0], officeHeaders)
	}
	want := []string{
		"00000000000191", "BANCO DO BRASIL SA", "Direção Geral", "TRUE", "1966-08-01", "Ativa", "2005-11-03",
		"", "Intervenção", "2020-01-02", "2038", "Sociedade de Economia Mista",
		"DEMAIS", "120000000000.5", "TRUE", "2007-07-01",
		"FALSE", "", "6422100", "Bancos múltiplos, com carteira comercial",
		"6435201, 6499999", "Quadra SAUN Quadra 5 Lote B", "S/N", "Andar 1 a 16", "Asa Norte",
		"5300108", "Brasília", "DF", "07002900", "Brasil",
		"(61) 34939002, (61) 34931040", "secex@bb.com.br", "DF 0731311400140, SP 110042490114", "2026-03-04T05:06:07.890Z",
	}
	if !slices.Equal(rows[1], want) {
		t.Errorf("full office\n got %q\nwant %q", rows[1], want)
	}
	// bare: GetRows trims the trailing empty cells.
	want = []string{
		"12ABC34501DE35", "EMPRESA SEM DADOS", "", "FALSE", "", "Baixada", "",
		"", "", "", "2135", "",
		"", "0", "", "",
		"", "", "0",
	}
	if !slices.Equal(rows[2], want) {
		t.Errorf("bare office\n got %q\nwant %q", rows[2], want)
	}

	types := []struct {
		cell string
		want excelize.CellType
	}{
		{at(t, "taxId", 2), excelize.CellTypeInlineString},
		{at(t, "taxId", 4), excelize.CellTypeInlineString},
		{at(t, "address.zip", 2), excelize.CellTypeInlineString},
		{at(t, "founded", 2), excelize.CellTypeInlineString},
		{at(t, "head", 2), excelize.CellTypeBool},
		{at(t, "head", 3), excelize.CellTypeBool},
		{at(t, "company.simples.optant", 2), excelize.CellTypeBool},
		// A number cell has no type attribute, which excelize reports as
		// Unset, like a missing cell: the raw values below tell them apart.
		{at(t, "company.equity", 2), excelize.CellTypeUnset},
		{at(t, "company.nature.id", 2), excelize.CellTypeUnset},
		{at(t, "address.municipality", 2), excelize.CellTypeUnset},
		// Unset and nil: no cell at all.
		{at(t, "company.simples.optant", 3), excelize.CellTypeUnset},
		{at(t, "alias", 3), excelize.CellTypeUnset},
		{at(t, "reason.text", 3), excelize.CellTypeUnset},
		{at(t, "updated", 3), excelize.CellTypeUnset},
	}
	for _, c := range types {
		got, err := f.GetCellType("offices", c.cell)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("type of %s: %v, want %v", c.cell, got, c.want)
		}
	}
	// The raw value keeps the leading zeros and the equity's decimals.
	for cell, want := range map[string]string{
		at(t, "taxId", 2):                "00000000000191",
		at(t, "taxId", 4):                "01234567000120",
		at(t, "company.equity", 2):       "120000000000.5",
		at(t, "company.nature.id", 2):    "2038",
		at(t, "address.municipality", 2): "5300108",
		at(t, "head", 2):                 "1",
		at(t, "alias", 3):                "",
	} {
		got, err := f.GetCellValue("offices", cell, excelize.Options{RawCellValue: true})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("raw %s: %q, want %q", cell, got, want)
		}
	}

	members, err := f.GetRows("members")
	if err != nil {
		t.Fatal(err)
	}
	wantMembers := [][]string{
		{"taxId", "company.name", "person.name", "person.type", "person.taxId", "role.text", "since", "person.age"},
		{"00000000000191", "BANCO DO BRASIL SA", "FAUSTO DE ANDRADE RIBEIRO", "NATURAL", "***123456**", "Diretor", "2021-03-29", "41-50"},
		{"00000000000191", "BANCO DO BRASIL SA", "UNIÃO FEDERAL", "LEGAL", "00394460000141", "Sócio"},
		{"01234567000120", "ARROZ LTDA", "JOHN DOE", "FOREIGN"},
	}
	if len(members) != len(wantMembers) {
		t.Fatalf("members %q", members)
	}
	for i := range wantMembers {
		if !slices.Equal(members[i], wantMembers[i]) {
			t.Errorf("members row %d\n got %q\nwant %q", i+1, members[i], wantMembers[i])
		}
	}
	if typ, _ := f.GetCellType("members", "E3"); typ != excelize.CellTypeInlineString {
		t.Errorf("member tax id type %v", typ)
	}
}

func TestExcelMembersCut(t *testing.T) {
	two := wire.OfficeOf(full()) // two members
	f := writeExcel(t, []wire.Office{two, two, two}, func(e *Excel) { e.memberMax = 4 })
	offices, err := f.GetRows("offices")
	if err != nil {
		t.Fatal(err)
	}
	if len(offices) != 4 {
		t.Errorf("%d office rows, want 4: offices are never cut", len(offices))
	}
	members, err := f.GetRows("members")
	if err != nil {
		t.Fatal(err)
	}
	if len(members) != 5 {
		t.Fatalf("%d member rows, want header, 3 members and the note: %q", len(members), members)
	}
	if got := members[3][2]; got != "FAUSTO DE ANDRADE RIBEIRO" {
		t.Errorf("row 4 %q", members[3])
	}
	if !slices.Equal(members[4], []string{membersCutNote}) {
		t.Errorf("row 5 %q, want the note", members[4])
	}
}

func TestExcelClosed(t *testing.T) {
	e, err := NewExcel(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Add(wire.OfficeOf(full())); err == nil {
		t.Error("Add after Close succeeded")
	}
	if err := e.Close(); err == nil {
		t.Error("second Close succeeded")
	}
}

func TestJSONZip(t *testing.T) {
	var buf bytes.Buffer
	z := NewJSONZip(&buf)
	type entry struct {
		name string
		body []byte
	}
	var want []entry
	for _, o := range offices() {
		body, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := z.Add(o.TaxID, body); err != nil {
			t.Fatal(err)
		}
		want = append(want, entry{o.TaxID + ".json", body})
	}
	// Not necessarily JSON and not re-encoded: bytes in, same bytes out.
	odd := []byte("{\"taxId\":\"99\" , \"x\":1}\n")
	if err := z.Add("99", odd); err != nil {
		t.Fatal(err)
	}
	want = append(want, entry{"99.json", odd})
	for _, bad := range []string{"", "../etc", `a\b`} {
		if err := z.Add(bad, odd); err == nil {
			t.Errorf("Add(%q) succeeded", bad)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}

	r, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.File) != len(want) {
		t.Fatalf("%d entries, want %d", len(r.File), len(want))
	}
	for i, f := range r.File {
		if f.Name != want[i].name {
			t.Errorf("entry %d: %s, want %s", i, f.Name, want[i].name)
		}
		if f.Method != zip.Deflate {
			t.Errorf("%s: method %d, want Deflate", f.Name, f.Method)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want[i].body) {
			t.Errorf("%s:\n got %s\nwant %s", f.Name, got, want[i].body)
		}
	}
}

const benchOffices = 10_000

// BenchmarkExcel writes a workbook of 10,000 offices of two members each;
// ns/office times 1,000,000 is the cost of a full list's export.
func BenchmarkExcel(b *testing.B) {
	o := wire.OfficeOf(full())
	var out int64
	for b.Loop() {
		w := &counter{}
		e, err := NewExcel(w)
		if err != nil {
			b.Fatal(err)
		}
		for i := range benchOffices {
			o.TaxID = strconv.Itoa(10_000_000_000_000 + i)
			if err := e.Add(o); err != nil {
				b.Fatal(err)
			}
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		out = w.n
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchOffices), "ns/office")
	b.ReportMetric(float64(out)/benchOffices, "B/office")
}

// BenchmarkJSONZip is BenchmarkExcel's counterpart for the JSON_ZIP file.
func BenchmarkJSONZip(b *testing.B) {
	body, err := json.Marshal(wire.OfficeOf(full()))
	if err != nil {
		b.Fatal(err)
	}
	var out int64
	for b.Loop() {
		w := &counter{}
		z := NewJSONZip(w)
		for i := range benchOffices {
			if err := z.Add(strconv.Itoa(10_000_000_000_000+i), body); err != nil {
				b.Fatal(err)
			}
		}
		if err := z.Close(); err != nil {
			b.Fatal(err)
		}
		out = w.n
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchOffices), "ns/office")
	b.ReportMetric(float64(out)/benchOffices, "B/office")
}

// counter is io.Discard that counts: the file's size.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
