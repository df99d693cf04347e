package service

import "context"

// The permissions of the contract, <verb>:<resource> (api-contract.md,
// "Accounts and credentials"). A lookup needs its kind's permission however
// it is reached; read:graphql is the door of /graphql itself.
const (
	ReadOffice      = "read:office"
	ReadCompany     = "read:company"
	ReadPerson      = "read:person"
	ReadRFB         = "read:rfb"
	ReadSimples     = "read:simples"
	ReadCertificate = "read:certificate"
	ReadMap         = "read:map"
	ReadStreet      = "read:street"
	ReadGraphQL     = "read:graphql"
	ReadCCC         = "read:ccc"
	ReadSuframa     = "read:suframa"
	SearchOffice    = "search:office"
	SearchPerson    = "search:person"
	ReadList        = "read:list"
	WriteList       = "write:list"
)

// Permissions lists every permission, in a stable order.
var Permissions = []string{ReadOffice, ReadCompany, ReadPerson, ReadRFB, ReadSimples,
	ReadCertificate, ReadMap, ReadStreet, ReadGraphQL, ReadCCC, ReadSuframa, SearchOffice, SearchPerson, ReadList, WriteList}

// Kind is a kind of lookup: what a REST route, a top-level GraphQL field or
// a nested GraphQL field that reaches it asks for. Its permission and price
// come from one table, kinds.
type Kind uint8

// Kinds of lookup.
const (
	KindOffice       Kind = iota // GET /office/:taxId, /companies/:taxId; GraphQL office, offices
	KindCompany                  // GET /company/:id; GraphQL company, Company.offices, Company.members beyond a lookup
	KindPerson                   // GET /person/:id; GraphQL person, Person.membership beyond a lookup
	KindRegistry                 // GET /rfb; GraphQL rfb
	KindSimples                  // GET /simples; GraphQL simples
	KindCertificate              // GET /rfb/certificate, /simples/certificate
	KindMap                      // GET /office/:taxId/map
	KindStreet                   // GET /office/:taxId/street
	KindCCC                      // GET /ccc
	KindSuframa                  // GET /suframa
	KindZip                      // GET /zip/:code
	KindCredit                   // GET /credit
	KindSearchOffice             // a page of GET /office; GraphQL searchOffices
	KindSearchPerson             // a page of GET /person; GraphQL searchPersons
	KindListFile                 // GET /list/{listId}/export/{exportId}/{file}
)

// kindSpec is what a kind of lookup needs and costs.
type kindSpec struct {
	name       string
	permission string
	// price is what the lookup costs whatever its answer's source; each
	// portal it fetches online costs Prices.Online on top.
	price func(Prices) int
}

func free(Prices) int { return 0 }

// kinds is the one table of permissions and prices.
var kinds = [...]kindSpec{
	KindOffice:      {"office", ReadOffice, free},
	KindCompany:     {"company", ReadCompany, free},
	KindPerson:      {"person", ReadPerson, free},
	KindRegistry:    {"rfb", ReadRFB, free},
	KindSimples:     {"simples", ReadSimples, free},
	KindCertificate: {"certificate", ReadCertificate, func(p Prices) int { return p.Certificate }},
	KindMap:         {"map", ReadMap, func(p Prices) int { return p.Map }},
	KindStreet:      {"street", ReadStreet, func(p Prices) int { return p.Street }},
	// State registrations and SUFRAMA exist only online: what they cost is
	// the portal fetched (Prices.Online), nothing when cached. Their
	// certificates are certificates (KindCertificate).
	KindCCC:     {"ccc", ReadCCC, free},
	KindSuframa: {"suframa", ReadSuframa, free},
	// Postal codes are derived from the offices' addresses: office data.
	KindZip: {"zip", ReadOffice, free},
	// Any valid credential may ask for its own credits.
	KindCredit: {"credit", "", free},
	// A page of search results costs Prices.Search, whatever its size; its
	// records are in the lookups' shapes and included.
	KindSearchOffice: {"search:office", SearchOffice, func(p Prices) int { return p.Search }},
	KindSearchPerson: {"search:person", SearchPerson, func(p Prices) int { return p.Search }},
	// A list's routes are free; an export pays for what it looks up, as
	// the list's account (service.ExportTaxIDs, ExportOffice).
	KindListFile: {"list", ReadList, free},
}

func (k Kind) String() string { return kinds[k].name }

// Permission is the permission the kind of lookup needs; "" is none
// beyond a valid credential.
func (k Kind) Permission() string { return kinds[k].permission }

// Price is what the kind of lookup costs before any online fetch.
func (k Kind) Price(p Prices) int { return kinds[k].price(p) }

// Prices are the credits the priced work costs (api-contract.md: cached
// answers are free; an answer that ends in an error is refunded).
type Prices struct {
	Online      int `env:"COST_ONLINE" envDefault:"1"`      // each portal fetched online (registry, Simples, registrations, SUFRAMA), each geocoder search
	Certificate int `env:"COST_CERTIFICATE" envDefault:"1"` // a PDF certificate
	Map         int `env:"COST_MAP" envDefault:"3"`         // an aerial map image
	Street      int `env:"COST_STREET" envDefault:"10"`     // a street-view image
	Search      int `env:"COST_SEARCH" envDefault:"1"`      // a page of search results
}

// DefaultPrices are the contract's defaults.
var DefaultPrices = Prices{Online: 1, Certificate: 1, Map: 3, Street: 10, Search: 1}

// Meter accounts lookups to whoever asks (package auth implements it for
// the request's credential). Requests without a caller, such as the
// command line's, are the meter's to let through.
type Meter interface {
	// Admit lets one lookup that needs permission run for the caller,
	// counting it against the caller's per-minute rate, or refuses it
	// (not enough privileges, rate limit exceeded, ...).
	Admit(ctx context.Context, permission string) error
	// Reserve takes credits from the caller before the work they pay for,
	// or refuses (not enough credits) and takes nothing.
	Reserve(ctx context.Context, credits int) error
	// Refund gives reserved credits back: the work failed.
	Refund(ctx context.Context, credits int)
}

// Free is the meter of a service without accounts: everything is allowed
// and costs nothing.
type Free struct{}

// Admit allows every lookup.
func (Free) Admit(context.Context, string) error { return nil }

// Reserve takes nothing.
func (Free) Reserve(context.Context, int) error { return nil }

// Refund gives nothing back.
func (Free) Refund(context.Context, int) {}

// bill is what one lookup has reserved, so that an error gives it back.
type bill struct {
	meter    Meter
	reserved int
}

// admit lets a lookup of kind run and reserves its price.
func (s *Service) admit(ctx context.Context, kind Kind) (*bill, error) {
	if err := s.meter.Admit(ctx, kind.Permission()); err != nil {
		return nil, err
	}
	b := &bill{meter: s.meter}
	if err := b.reserve(ctx, kind.Price(s.prices)); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *bill) reserve(ctx context.Context, credits int) error {
	if credits <= 0 {
		return nil
	}
	if err := b.meter.Reserve(ctx, credits); err != nil {
		return err
	}
	b.reserved += credits
	return nil
}

func (b *bill) refund(ctx context.Context, credits int) {
	credits = min(credits, b.reserved)
	if credits <= 0 {
		return
	}
	b.meter.Refund(ctx, credits)
	b.reserved -= credits
}

// settle gives everything back when the lookup failed.
func (b *bill) settle(ctx context.Context, err error) {
	if err != nil {
		b.refund(ctx, b.reserved)
	}
}

// metered runs one lookup of kind: admitted and priced first, refunded
// when it fails.
func metered[T any](ctx context.Context, s *Service, kind Kind, do func(*bill) (T, error)) (T, error) {
	b, err := s.admit(ctx, kind)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := do(b)
	b.settle(ctx, err)
	return v, err
}
