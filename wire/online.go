package wire

import (
	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// The shapes of the CNPJá routes beyond the spec: GET /ccc, /suframa,
// /zip/:code, /credit, and the office lookup's suframa and links. Taken
// from the official client's types (@cnpja/sdk 1.8.1, dist/cnpja/cnpja.dto.d.ts:
// CccDto, RegistrationDto, SuframaDto, OfficeSuframaDto, OfficeLinkDto,
// ZipDto, CreditoDto), fields in their order. As everywhere, text a source
// left empty is null.

// CCC is an office's record at the Cadastro Centralizado de Contribuintes.
type CCC struct {
	TaxID         string         `json:"taxId"`
	Updated       Stamp          `json:"updated"`
	Name          *string        `json:"name"`
	OriginState   *string        `json:"originState"`
	Registrations []Registration `json:"registrations"`
}

// CCCOf is the answer of GET /ccc.
func CCCOf(c model.CCC) CCC {
	return CCC{
		TaxID:         c.TaxID,
		Updated:       StampOf(c.Updated),
		Name:          textOf(c.Name),
		OriginState:   textOf(c.OriginState),
		Registrations: registrationsOf(c.Registrations),
	}
}

// Model is the record the answer describes.
func (w *CCC) Model() model.CCC {
	return model.CCC{
		Updated:       w.Updated.T,
		TaxID:         w.TaxID,
		Name:          deref(w.Name),
		OriginState:   deref(w.OriginState),
		Registrations: registrationsModel(w.Registrations),
	}
}

// SuframaActivity is an activity declared to the SUFRAMA.
type SuframaActivity struct {
	ID        int     `json:"id"`
	Text      *string `json:"text"`
	Performed bool    `json:"performed"`
}

// SuframaIncentive is a tax incentive of a SUFRAMA registration.
type SuframaIncentive struct {
	Tribute *string `json:"tribute"`
	Benefit *string `json:"benefit"`
	Purpose *string `json:"purpose"`
	Basis   *string `json:"basis"`
}

// Suframa is an office's registration at the SUFRAMA (GET /suframa).
type Suframa struct {
	TaxID          string             `json:"taxId"`
	Updated        Stamp              `json:"updated"`
	Number         *string            `json:"number"`
	Name           *string            `json:"name"`
	Since          *Date              `json:"since"`
	Head           bool               `json:"head"`
	Approved       bool               `json:"approved"`
	ApprovalDate   *Date              `json:"approvalDate"`
	Status         Code               `json:"status"`
	Nature         Code               `json:"nature"`
	Address        Address            `json:"address"`
	Phones         []Phone            `json:"phones"`
	Emails         []Email            `json:"emails"`
	MainActivity   *SuframaActivity   `json:"mainActivity"`
	SideActivities []SuframaActivity  `json:"sideActivities"`
	Incentives     []SuframaIncentive `json:"incentives"`
}

func suframaActivityOf(a model.SuframaActivity) SuframaActivity {
	return SuframaActivity{ID: a.ID, Text: textOf(a.Text), Performed: a.Performed}
}

func incentivesOf(is []model.SuframaIncentive) []SuframaIncentive {
	out := make([]SuframaIncentive, len(is))
	for i, v := range is {
		out[i] = SuframaIncentive{Tribute: textOf(v.Tribute), Benefit: textOf(v.Benefit), Purpose: textOf(v.Purpose), Basis: textOf(v.Basis)}
	}
	return out
}

// SuframaOf is the answer of GET /suframa.
func SuframaOf(s model.Suframa) Suframa {
	out := Suframa{
		TaxID:          s.TaxID,
		Updated:        StampOf(s.Updated),
		Number:         textOf(s.Number),
		Name:           textOf(s.Name),
		Since:          DateOf(s.Since),
		Head:           s.Head,
		Approved:       s.Approved,
		ApprovalDate:   DateOf(s.ApprovalDate),
		Status:         CodeOf(s.Status),
		Nature:         CodeOf(s.Nature),
		Address:        addressOf(s.Address),
		Phones:         phonesOf(s.Phones),
		Emails:         emailsOf(s.Emails),
		SideActivities: make([]SuframaActivity, len(s.SideActivities)),
		Incentives:     incentivesOf(s.Incentives),
	}
	if s.MainActivity != (model.SuframaActivity{}) {
		a := suframaActivityOf(s.MainActivity)
		out.MainActivity = &a
	}
	for i, a := range s.SideActivities {
		out.SideActivities[i] = suframaActivityOf(a)
	}
	return out
}

// Model is the registration the answer describes, for the office taxID.
func (w *Suframa) Model(taxID cnpj.CNPJ) model.Suframa {
	out := model.Suframa{
		Updated:        w.Updated.T,
		TaxID:          string(taxID),
		Number:         deref(w.Number),
		Name:           deref(w.Name),
		Since:          w.Since.Time(),
		Head:           w.Head,
		Approved:       w.Approved,
		ApprovalDate:   w.ApprovalDate.Time(),
		Status:         w.Status.Model(),
		Nature:         w.Nature.Model(),
		Address:        w.Address.model(),
		Phones:         make([]model.Phone, len(w.Phones)),
		Emails:         make([]model.Email, len(w.Emails)),
		SideActivities: make([]model.SuframaActivity, len(w.SideActivities)),
		Incentives:     make([]model.SuframaIncentive, len(w.Incentives)),
	}
	if a := w.MainActivity; a != nil {
		out.MainActivity = model.SuframaActivity{ID: a.ID, Text: deref(a.Text), Performed: a.Performed}
	}
	for i, a := range w.SideActivities {
		out.SideActivities[i] = model.SuframaActivity{ID: a.ID, Text: deref(a.Text), Performed: a.Performed}
	}
	for i, p := range w.Phones {
		out.Phones[i] = model.Phone{Area: p.Area, Number: p.Number}
	}
	for i, e := range w.Emails {
		out.Emails[i] = model.Email{Address: e.Address, Domain: e.Domain}
	}
	for i, v := range w.Incentives {
		out.Incentives[i] = model.SuframaIncentive{Tribute: deref(v.Tribute), Benefit: deref(v.Benefit), Purpose: deref(v.Purpose), Basis: deref(v.Basis)}
	}
	return out
}

// OfficeSuframa is a SUFRAMA registration in the office lookup.
type OfficeSuframa struct {
	Number       *string            `json:"number"`
	Since        *Date              `json:"since"`
	Approved     bool               `json:"approved"`
	ApprovalDate *Date              `json:"approvalDate"`
	Status       Code               `json:"status"`
	Incentives   []SuframaIncentive `json:"incentives"`
}

// SuframaList is the office lookup's suframa: absent unless asked for.
type SuframaList = Optional[[]OfficeSuframa]

// officeSuframaOf lists an office's registrations; nil (not asked for) is
// absent.
func officeSuframaOf(list []model.Suframa) SuframaList {
	if list == nil {
		return SuframaList{}
	}
	out := make([]OfficeSuframa, len(list))
	for i, s := range list {
		out[i] = OfficeSuframa{Number: textOf(s.Number), Since: DateOf(s.Since), Approved: s.Approved,
			ApprovalDate: DateOf(s.ApprovalDate), Status: CodeOf(s.Status), Incentives: incentivesOf(s.Incentives)}
	}
	return Some(&out)
}

// Link is a public link to a file about an office.
type Link struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// linksOf lists the links; nil (not asked for) is absent.
func linksOf(ls []model.Link) Optional[[]Link] {
	if ls == nil {
		return Optional[[]Link]{}
	}
	out := make([]Link, len(ls))
	for i, l := range ls {
		out[i] = Link{Type: l.Type, URL: l.URL}
	}
	return Some(&out)
}

// Zip is a postal code (GET /zip/:code).
type Zip struct {
	Updated      Stamp   `json:"updated"`
	Code         string  `json:"code"`
	Municipality *int    `json:"municipality"`
	Street       *string `json:"street"`
	Number       *string `json:"number"`
	District     *string `json:"district"`
	City         *string `json:"city"`
	State        *string `json:"state"`
}

// ZipOf is the answer of GET /zip/:code.
func ZipOf(z model.Zip) Zip {
	return Zip{
		Updated:      StampOf(z.Updated),
		Code:         z.Code,
		Municipality: z.Municipality,
		Street:       textOf(z.Street),
		Number:       textOf(z.Number),
		District:     textOf(z.District),
		City:         textOf(z.City),
		State:        textOf(z.State),
	}
}

// Credit is the caller's credits (GET /credit).
type Credit struct {
	Perpetual int64 `json:"perpetual"`
	Transient int64 `json:"transient"`
}

// CreditOf is the answer of GET /credit.
func CreditOf(c model.Credits) Credit { return Credit{Perpetual: c.Perpetual, Transient: c.Transient} }
