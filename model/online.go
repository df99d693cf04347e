package model

import "time"

// The records only an online source knows (state registrations through
// the CCC, SUFRAMA), the postal codes derived from the dump, the credits
// of an account, and what the office lookup adds on request (links to
// files, coordinates).

// CCC is an office's record in the Cadastro Centralizado de Contribuintes
// (CCC): its state registrations, every state.
type CCC struct {
	Updated       time.Time
	TaxID         string
	Name          string // legal name, or the rural producer's name
	OriginState   string // the UF of the office's address
	Registrations []Registration
}

// Suframa is an office's registration at the SUFRAMA (Superintendência da
// Zona Franca de Manaus).
type Suframa struct {
	Updated        time.Time
	TaxID          string
	Number         string
	Name           string
	Since          *time.Time
	Head           bool
	Approved       bool
	ApprovalDate   *time.Time
	Status         Code // 1 Ativa, 2 Inativa, 3 Bloqueada, 4 Cancelada, 5 Cancelada Ag. Rec.
	Nature         Code
	Address        Address
	Phones         []Phone
	Emails         []Email
	MainActivity   SuframaActivity
	SideActivities []SuframaActivity
	Incentives     []SuframaIncentive
}

// SuframaActivity is an activity declared to the SUFRAMA.
type SuframaActivity struct {
	ID        int
	Text      string
	Performed bool
}

// SuframaIncentive is a tax incentive of a SUFRAMA registration.
type SuframaIncentive struct {
	Tribute string // ICMS, IPI
	Benefit string
	Purpose string
	Basis   string
}

// Zip is a postal code (CEP) as the dump's offices use it: the most
// common address among the offices that give it.
type Zip struct {
	Updated      time.Time
	Code         string
	Municipality *int // IBGE code
	Street       string
	Number       string // only when the code belongs to one address
	District     string
	City         string
	State        string
}

// Credits are what an account may still spend: Transient is what is left
// of today's allowance, Perpetual what does not reset.
type Credits struct {
	Perpetual int64
	Transient int64
}

// Link is a public link to a file about an office (a certificate, a map,
// a street view), signed for whoever asked.
type Link struct {
	Type string // RFB_CERTIFICATE, SIMPLES_CERTIFICATE, ...
	URL  string
}

// Coordinates place an address (WGS 84 degrees).
type Coordinates struct {
	Latitude  float64
	Longitude float64
}

// Latitude is the geocoder's latitude of the address, nil when not asked
// for or not found.
func (a Address) Latitude() *float64 {
	if a.Coordinates == nil {
		return nil
	}
	return &a.Coordinates.Latitude
}

// Longitude is the geocoder's longitude of the address, nil when not asked
// for or not found.
func (a Address) Longitude() *float64 {
	if a.Coordinates == nil {
		return nil
	}
	return &a.Coordinates.Longitude
}
