package service

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/fault"
)

// Strategy says where an answer may come from (api-contract.md, "Cache
// parameters").
type Strategy string

// Strategies.
const (
	Cache        Strategy = "CACHE"          // cache only
	CacheIfFresh Strategy = "CACHE_IF_FRESH" // cache younger than maxAge, else online
	CacheIfError Strategy = "CACHE_IF_ERROR" // as CACHE_IF_FRESH; stale cache if online fails
	Online       Strategy = "ONLINE"         // always online
)

// Strategies lists the accepted values, in the order error messages name them.
var Strategies = []Strategy{Cache, CacheIfFresh, CacheIfError, Online}

// Defaults and bounds of the cache parameters, in days.
const (
	DefaultMaxAge   = 30
	DefaultMaxStale = 365
	MaxDays         = 3650
)

// CacheQuery is the parsed strategy, maxAge and maxStale of a lookup.
type CacheQuery struct {
	Strategy Strategy
	MaxAge   int  // days
	MaxStale int  // days
	AgeSet   bool // maxAge was sent (an error with ONLINE)
}

// DefaultCache is what a lookup without cache parameters uses.
func DefaultCache() CacheQuery {
	return CacheQuery{Strategy: CacheIfError, MaxAge: DefaultMaxAge, MaxStale: DefaultMaxStale}
}

// States are the UFs a registrations list may name, besides BR (all).
var States = []string{"AC", "AL", "AM", "AP", "BA", "CE", "DF", "ES", "GO", "MA", "MG", "MS", "MT",
	"PA", "PB", "PE", "PI", "PR", "RJ", "RN", "RO", "RR", "RS", "SC", "SP", "SE", "TO"}

// RegistrationValues are the values the registrations list accepts: BR (also
// ALL) for every state, ORIGIN for the office's own state, or UFs.
var RegistrationValues = append([]string{"BR"}, States...)

// OfficeQuery is a parsed office lookup.
type OfficeQuery struct {
	TaxID          cnpj.CNPJ
	Simples        bool
	SimplesHistory bool     // with Simples: the regimes' history too
	Registrations  []string // UFs, BR (all) or ORIGIN; empty: not requested
	Cache          CacheQuery
	Suframa        bool     // the SUFRAMA registrations too
	Geocoding      bool     // the address's coordinates too
	Links          []string // links to these files (LinkTypes); nil: none
}

// RegistryQuery is a parsed federal registry record lookup.
type RegistryQuery struct {
	TaxID cnpj.CNPJ
	Cache CacheQuery
}

// SimplesQuery is a parsed Simples lookup.
type SimplesQuery struct {
	TaxID   cnpj.CNPJ
	History bool
	Cache   CacheQuery
}

// Limits of list arguments.
const (
	// MaxOffices is how many tax ids one GraphQL `offices` field may ask for.
	MaxOffices = 100
	// DefaultPageSize and MaxPageSize bound the pages of a company's
	// offices and of a person's memberships.
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// OfficesRule is the sentence for an `offices` list that is too long.
var OfficesRule = "taxIds must contain at most " + strconv.Itoa(MaxOffices) + " tax ids"

// OfficePageQuery asks for a page of a company's offices: First offices
// after the tax id After ("" for the first page), in tax id order. Full
// reads the whole offices instead of their summaries.
type OfficePageQuery struct {
	First int
	After string
	Full  bool
}

// MembershipPageQuery asks for a page of a person's memberships: First
// memberships after the one in company AfterRoot at AfterPosition ("" for
// the first page), in company and position order.
type MembershipPageQuery struct {
	First         int
	AfterRoot     string
	AfterPosition int
	// NoTotal and NoSimples: the caller will not show the person's
	// membership count, or the companies' Simples (db.MembershipPageKey).
	NoTotal, NoSimples bool
}

// Constraints collects one readable sentence per violated rule, so that a
// 400 names every problem at once. REST and GraphQL share the sentences.
type Constraints []string

// Add records a violated rule once.
func (c *Constraints) Add(rule string) {
	if !slices.Contains(*c, rule) {
		*c = append(*c, rule)
	}
}

// Err is the 400 naming every violated rule, or nil when there is none.
func (c Constraints) Err() error {
	if len(c) == 0 {
		return nil
	}
	return fault.Invalid(c...)
}

// ParseTaxID validates a CNPJ parameter named name.
func (c *Constraints) ParseTaxID(name, s string) cnpj.CNPJ {
	id, err := cnpj.Parse(s)
	if err != nil {
		c.Add(name + " must be a valid CNPJ")
		return ""
	}
	return id
}

// ParseRoot validates a company id.
func (c *Constraints) ParseRoot(name, s string) cnpj.Root {
	r, err := cnpj.ParseRoot(s)
	if err != nil {
		c.Add(name + " must be a company id: 1 to 8 digits, or 8 characters of digits and uppercase letters")
		return ""
	}
	return r
}

// ParsePersonID validates a person id: a 36-character UUID. Ids are issued
// in lowercase; an uppercased copy is accepted.
func (c *Constraints) ParsePersonID(name, s string) string {
	if !validUUID(s) {
		c.Add(name + " must be a person id of 36 characters")
		return ""
	}
	return strings.ToLower(s)
}

// validUUID reports a UUID of 36 characters, in either case.
func validUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		ch := s[i]
		switch i {
		case 8, 13, 18, 23:
			if ch != '-' {
				return false
			}
		default:
			if !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f' || ch >= 'A' && ch <= 'F') {
				return false
			}
		}
	}
	return true
}

// ParseStrategy validates a strategy value; empty means the default.
func (c *Constraints) ParseStrategy(name, s string) Strategy {
	if s == "" {
		return CacheIfError
	}
	for _, v := range Strategies {
		if string(v) == s {
			return v
		}
	}
	c.Add(name + " must be one of: CACHE, CACHE_IF_FRESH, CACHE_IF_ERROR, ONLINE")
	return CacheIfError
}

// ParseDays validates a number of days within 1..MaxDays.
func (c *Constraints) ParseDays(name, s string) (int, bool) {
	n, err := strconv.Atoi(s)
	switch {
	case err != nil && !cnpj.Digits(s):
		c.Add(name + " must be an integer")
		return 0, false
	case err != nil || n > MaxDays: // digits too many for an int are also too large
		c.Add(name + " must not be greater than " + strconv.Itoa(MaxDays))
		return 0, false
	case n < 1:
		c.Add(name + " must not be less than 1")
		return 0, false
	}
	return n, true
}

// ParsePageSize reads a page's size; nil is the default.
func (c *Constraints) ParsePageSize(name string, first *int) int {
	if first == nil {
		return DefaultPageSize
	}
	if *first < 1 || *first > MaxPageSize {
		c.Add(name + " must be an integer from 1 to " + strconv.Itoa(MaxPageSize))
	}
	return *first
}

// CheckCache applies the rules between the cache parameters.
func (c *Constraints) CheckCache(q CacheQuery) {
	if q.Strategy == Online && q.AgeSet {
		c.Add("maxAge must not be sent with strategy ONLINE")
	}
}

// ParseRegistrations validates a list of registration states: BR or ALL for
// every state, ORIGIN for the office's state, or UFs. It returns them
// deduplicated, in the order given, with ALL spelled BR.
func (c *Constraints) ParseRegistrations(name string, values []string) []string {
	var out []string
	bad := false
	for _, v := range values {
		switch {
		case v == "ALL":
			v = "BR"
		case v == "ORIGIN", v == "BR", isState(v):
		default:
			bad = true
			continue
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if bad {
		c.Add(name + " must contain only: " + strings.Join(RegistrationValues, ", "))
	}
	return out
}

func isState(s string) bool { return slices.Contains(States, s) }

// days is a number of days as a duration.
func days(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }
