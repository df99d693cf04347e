// Package documents renders what the service answers besides JSON: PDF
// certificates in the layout of the Receita's forms, and map and street
// images from configured tile, geocoding and imagery providers.
package documents

import (
	"io"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/model"
)

// Pages selects the parts of the registry certificate.
type Pages struct {
	Registration bool // Comprovante de Inscrição e de Situação Cadastral
	Members      bool // Quadro de Sócios e Administradores
}

// PageNames are the values of the certificate's pages parameter.
var PageNames = []string{"REGISTRATION", "MEMBERS"}

// RegistryCertificate writes the registry certificate of an office (with
// its company and members) as a PDF. issued is the emission time printed on
// every page; the data's own date is o.Updated.
func RegistryCertificate(w io.Writer, o model.Office, pages Pages, issued time.Time) error {
	s := newSheet("Comprovante de Inscrição e de Situação Cadastral "+FormatCNPJ(o.TaxID), issued, o.Updated)
	if pages.Registration {
		registrationPage(s, o)
	}
	if pages.Members {
		membersPages(s, o)
	}
	return s.output(w)
}

// registrationPage draws the Comprovante de Inscrição e de Situação
// Cadastral: the Receita's boxed fields, in its order.
func registrationPage(s *sheet, o model.Office) {
	c := o.Company
	newPage := func() { s.page("COMPROVANTE DE INSCRIÇÃO E DE SITUAÇÃO CADASTRAL") }
	newPage()
	kind := "FILIAL"
	if o.Head {
		kind = "MATRIZ"
	}
	s.row(newPage,
		field{label: "NÚMERO DE INSCRIÇÃO", value: FormatCNPJ(o.TaxID) + "\n" + kind, width: 55, bold: true},
		field{label: "", value: "COMPROVANTE DE INSCRIÇÃO E DE\nSITUAÇÃO CADASTRAL", width: 85, bold: true, align: "C"},
		field{label: "DATA DE ABERTURA", value: formatDate(o.Founded), bold: true},
	)
	s.row(newPage, field{label: "NOME EMPRESARIAL", value: c.Name, bold: true})
	alias := ""
	if o.Alias != nil {
		alias = *o.Alias
	}
	s.row(newPage,
		field{label: "TÍTULO DO ESTABELECIMENTO (NOME DE FANTASIA)", value: orEmpty(alias), width: 145, bold: true},
		field{label: "PORTE", value: sizeText(c.Size), bold: true},
	)
	s.row(newPage, field{label: "CÓDIGO E DESCRIÇÃO DA ATIVIDADE ECONÔMICA PRINCIPAL", value: formatActivity(o.MainActivity), bold: true})
	side := make([]string, len(o.SideActivities))
	for i, a := range o.SideActivities {
		side[i] = formatActivity(a)
	}
	if len(side) == 0 {
		side = []string{"Não informada"}
	}
	s.row(newPage, field{label: "CÓDIGO E DESCRIÇÃO DAS ATIVIDADES ECONÔMICAS SECUNDÁRIAS", value: strings.Join(side, "\n"), bold: true})
	s.row(newPage, field{label: "CÓDIGO E DESCRIÇÃO DA NATUREZA JURÍDICA", value: formatNature(c.Nature), bold: true})

	a := o.Address
	details := ""
	if a.Details != nil {
		details = *a.Details
	}
	s.row(newPage,
		field{label: "LOGRADOURO", value: orEmpty(a.Street), width: 105, bold: true},
		field{label: "NÚMERO", value: orEmpty(a.Number), width: 25, bold: true},
		field{label: "COMPLEMENTO", value: orEmpty(details), bold: true},
	)
	s.row(newPage,
		field{label: "CEP", value: orEmpty(formatCEP(a.Zip)), width: 30, bold: true},
		field{label: "BAIRRO/DISTRITO", value: orEmpty(a.District), width: 70, bold: true},
		field{label: "MUNICÍPIO", value: orEmpty(a.City), width: 70, bold: true},
		field{label: "UF", value: orEmpty(a.State), bold: true},
	)
	emails := make([]string, len(o.Emails))
	for i, e := range o.Emails {
		emails[i] = e.Address
	}
	phones := make([]string, len(o.Phones))
	for i, p := range o.Phones {
		phones[i] = formatPhone(p)
	}
	s.row(newPage,
		field{label: "ENDEREÇO ELETRÔNICO", value: orEmpty(strings.Join(emails, ", ")), width: 110, bold: true},
		field{label: "TELEFONE", value: orEmpty(strings.Join(phones, " / ")), bold: true},
	)
	efr := ""
	if c.Jurisdiction != nil {
		efr = *c.Jurisdiction
	}
	s.row(newPage, field{label: "ENTE FEDERATIVO RESPONSÁVEL (EFR)", value: orEmpty(efr), bold: true})
	s.row(newPage,
		field{label: "SITUAÇÃO CADASTRAL", value: orEmpty(strings.ToUpper(o.Status.Text)), width: 120, bold: true},
		field{label: "DATA DA SITUAÇÃO CADASTRAL", value: formatDate(o.StatusDate), bold: true},
	)
	reason := ""
	if o.Status.ID != 2 && o.Reason != nil {
		reason = o.Reason.Text
	}
	s.row(newPage, field{label: "MOTIVO DE SITUAÇÃO CADASTRAL", value: orEmpty(reason), bold: true})
	special := ""
	if o.Special != nil {
		special = o.Special.Text
	}
	s.row(newPage,
		field{label: "SITUAÇÃO ESPECIAL", value: orEmpty(special), width: 120, bold: true},
		field{label: "DATA DA SITUAÇÃO ESPECIAL", value: formatDate(o.SpecialDate), bold: true},
	)
}

// membersPages draws the Quadro de Sócios e Administradores: the company,
// its capital, and one table row per member, flowing over pages.
func membersPages(s *sheet, o model.Office) {
	c := o.Company
	newPage := func() { s.page("CONSULTA QUADRO DE SÓCIOS E ADMINISTRADORES - QSA") }
	newPage()
	s.row(newPage,
		field{label: "CNPJ", value: FormatCNPJ(o.TaxID), width: 55, bold: true},
		field{label: "NOME EMPRESARIAL", value: c.Name, bold: true},
	)
	s.row(newPage, field{label: "CAPITAL SOCIAL", value: formatMoney(c.Equity), bold: true})
	s.pdf.Ln(1)
	if len(c.Members) == 0 {
		s.text(8.5, "", "L", "Não há sócios ou administradores no Quadro de Sócios e Administradores (QSA) desta empresa na base de dados do Cadastro Nacional da Pessoa Jurídica (CNPJ).")
		return
	}
	s.text(8.5, "", "L", "O Quadro de Sócios e Administradores (QSA) constante da base de dados do Cadastro Nacional da Pessoa Jurídica (CNPJ) é o seguinte:")
	s.pdf.Ln(2)
	rows := make([][]string, len(c.Members))
	for i, m := range c.Members {
		rep, repRole := "", ""
		if m.Agent != nil {
			rep, repRole = m.Agent.Person.Name, formatRole(m.Agent.Role)
		}
		rows[i] = []string{m.Person.Name, formatRole(m.Role), rep, repRole}
	}
	s.table(newPage, []column{
		{"Nome/Nome Empresarial", 66},
		{"Qualificação", 38},
		{"Representante Legal", 50},
		{"Qualificação Rep. Legal", 36},
	}, rows)
}

// SimplesCertificate writes the Simples Nacional / SIMEI certificate of an
// office's company: the current situation in both regimes and their
// previous periods. rec must carry the history.
func SimplesCertificate(w io.Writer, o model.Office, rec model.SimplesRecord, issued time.Time) error {
	s := newSheet("Consulta Optantes Simples Nacional / SIMEI "+FormatCNPJ(o.TaxID), issued, rec.Updated)
	newPage := func() { s.page("CONSULTA OPTANTES - SIMPLES NACIONAL E SIMEI") }
	newPage()
	s.row(newPage,
		field{label: "CNPJ", value: FormatCNPJ(o.TaxID), width: 55, bold: true},
		field{label: "NOME EMPRESARIAL", value: o.Company.Name, bold: true},
	)
	s.pdf.Ln(1)
	s.text(9, "B", "L", "Situação Atual")
	s.pdf.Ln(1)
	s.row(newPage, field{label: "SITUAÇÃO NO SIMPLES NACIONAL", value: regimeText(rec.Simples, "Optante pelo Simples Nacional", "NÃO optante pelo Simples Nacional"), bold: true})
	s.row(newPage, field{label: "SITUAÇÃO NO SIMEI", value: regimeText(rec.Simei, "Enquadrado no SIMEI", "NÃO enquadrado no SIMEI"), bold: true})
	s.pdf.Ln(2)
	periods(s, newPage, "Opções pelo Simples Nacional em Períodos Anteriores", rec.Simples.History)
	periods(s, newPage, "Enquadramentos no SIMEI em Períodos Anteriores", rec.Simei.History)
	return s.output(w)
}

// regimeText is the current situation in a regime: enrolled since a date,
// or not enrolled.
func regimeText(r model.Simples, yes, no string) string {
	if !r.Optant {
		return no
	}
	if r.Since == nil {
		return yes
	}
	return yes + " desde " + formatDate(r.Since)
}

// periods draws a regime's previous periods, or says there are none.
func periods(s *sheet, newPage func(), title string, history []model.SimplesPeriod) {
	if s.pdf.GetY()+20 > pageBottom {
		newPage()
	}
	s.text(9, "B", "L", title)
	s.pdf.Ln(1)
	if len(history) == 0 {
		s.text(8.5, "", "L", "Não Existem")
		s.pdf.Ln(3)
		return
	}
	rows := make([][]string, len(history))
	for i, p := range history {
		text := p.Text
		if text == "" {
			text = empty
		}
		rows[i] = []string{formatDate(&p.From), formatDate(p.Until), text}
	}
	s.table(newPage, []column{{"Data Inicial", 35}, {"Data Final", 35}, {"Detalhamento", contentW - 70}}, rows)
}
