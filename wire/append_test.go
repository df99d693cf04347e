package wire

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/model"
)

func ptr[T any](v T) *T { return &v }

// sampleOffice has every optional part set, and text that needs escaping.
func sampleOffice() model.Office {
	day := time.Date(2019, 2, 11, 0, 0, 0, 0, time.UTC)
	ibge := 5300108
	return model.Office{
		Updated: time.Date(2025, 12, 7, 13, 4, 5, 678e6, time.FixedZone("BRT", -3*3600)),
		TaxID:   "33683111000280", Alias: ptr(`A "B" <C> & \D/ é ` + "\u2028\x01\t\xff"),
		Founded: &day, Head: false, StatusDate: &day,
		Status: model.Code{ID: 8, Text: "Baixada"}, Reason: &model.Code{ID: 1, Text: ""},
		SpecialDate: &day, Special: &model.Special{ID: 2, Text: "RECUPERACAO JUDICIAL"},
		Address: model.Address{Municipality: &ibge, Street: "AVENIDA L2 SGAN", Number: "601", Details: ptr("MODULO G"),
			City: "BRASILIA", State: "DF", Zip: "70836900", Country: model.Country{ID: 76, Name: "Brasil"}},
		Phones:         []model.Phone{{Area: "61", Number: "20210000"}},
		Emails:         []model.Email{{Address: "a@b.gov.br", Domain: "b.gov.br"}},
		MainActivity:   model.Code{ID: 6204000, Text: "Consultoria em tecnologia da informação"},
		SideActivities: []model.Code{{ID: 6201501, Text: "Desenvolvimento"}, {ID: 1}},
		Registrations:  []model.Registration{{State: "DF", Number: "07", Enabled: true}},
		Company: &model.Company{
			Root: "33683111", Name: "SERPRO", Equity: "1061004829.23", Nature: model.Code{ID: 2011, Text: "Empresa Pública"},
			Size:    &model.Size{ID: 5, Acronym: "DEMAIS", Text: "Demais"},
			Simples: &model.Simples{Optant: true, Since: &day, History: []model.SimplesPeriod{{From: day, Until: &day, Text: "x"}, {From: day}}},
			Simei:   &model.Simples{},
			Members: []model.Member{
				{Since: &day, Role: model.Code{ID: 10, Text: "Diretor"},
					Person: model.Person{ID: "p1", Name: "ANDRE", Type: "NATURAL", TaxID: ptr("***220050**"), Age: ptr("51-60")},
					Agent:  &model.Agent{Role: model.Code{ID: 17}, Person: model.Person{ID: "p2", Name: "MARIA", Type: "NATURAL"}}},
				{Person: model.Person{ID: "p3", Name: "ACME", Type: "FOREIGN", Country: &model.Country{Name: "PAIS"}}},
				{Person: model.Person{ID: "p4", Name: "JOHN", Type: "FOREIGN", Age: ptr("41-50")}},
				{Person: model.Person{ID: "p5", Name: "HOLDING", Type: "LEGAL", TaxID: ptr("33683111000280")}},
			},
		},
	}
}

func sameAsMarshal(t *testing.T, o model.Office) {
	t.Helper()
	want, werr := json.Marshal(OfficeOf(o))
	got, gerr := AppendOffice(nil, o)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("errors differ: Marshal %v, AppendOffice %v", werr, gerr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendOffice differs from json.Marshal:\n got %s\nwant %s", got, want)
	}
}

func TestAppendOfficeIsMarshal(t *testing.T) {
	o := sampleOffice()
	sameAsMarshal(t, o)

	// The other branches: active status, no special, nothing optional.
	o.Status, o.Reason, o.SpecialDate, o.Special = model.Code{ID: 2, Text: "Ativa"}, nil, nil, nil
	o.Registrations, o.Company.Simples, o.Company.Simei, o.Company.Size = nil, nil, nil, nil
	o.Company.Root, o.Company.Equity = "12ABC345", ""
	o.Alias, o.Founded, o.Address = nil, nil, model.Address{}
	sameAsMarshal(t, o)
	o.SpecialDate = o.StatusDate // a date without a text
	o.Phones, o.Emails, o.SideActivities, o.Company.Members = nil, []model.Email{}, nil, nil
	sameAsMarshal(t, o)
	o.Company.Equity = "12,5" // not a number: both refuse
	sameAsMarshal(t, o)

	// The rare options go through encoding/json.
	o = sampleOffice()
	o.Links = []model.Link{}
	o.Address.Coordinates = &model.Coordinates{Latitude: -15.78, Longitude: -47.88}
	want, _ := json.Marshal(OfficeOf(o))
	if got, err := MarshalOffice(nil, o); err != nil || !bytes.Equal(got, want) {
		t.Errorf("MarshalOffice with links and coordinates:\n got %s\nwant %s", got, want)
	}
}

func FuzzAppendOffice(f *testing.F) {
	f.Add("REGIONAL BRASILIA-DF", "AVENIDA L2", "1061004829.23", "33683111")
	f.Add("<script>&\"\\", "\u2028\u2029\x00\x7f", "-0.5e+3", "12ABC345")
	f.Add("\xff\xfe", "ção", "01", "")
	f.Fuzz(func(t *testing.T, text, street, equity, root string) {
		o := sampleOffice()
		o.Alias, o.Address.Street, o.Company.Equity, o.Company.Root = &text, street, equity, root
		o.Company.Members[0].Person.Name, o.MainActivity.Text = text, street
		sameAsMarshal(t, o)
	})
}

func BenchmarkOfficeJSON(b *testing.B) {
	o := sampleOffice()
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(OfficeOf(o)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendOffice", func(b *testing.B) {
		buf := make([]byte, 0, 4096)
		for b.Loop() {
			var err error
			if buf, err = AppendOffice(buf[:0], o); err != nil {
				b.Fatal(err)
			}
		}
	})
}
