package service

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/model"
	"github.com/cnpjgraph/cnpjgraph/words"
)

// Search: GET /office and GET /person, GraphQL searchOffices and
// searchPersons (docs/api.md, "Search"). Both doors hand the filters over
// by their REST names ("address.state.in" → values), so one parser gives
// both the same rules and the same sentences.

// Bounds of a search page.
const (
	DefaultSearchLimit = 10
	MaxSearchLimit     = 1000
	// MaxFilterValues bounds the values of one filter.
	MaxFilterValues = 1000
	// TokenLength is the length of a page token.
	TokenLength = 32
)

// SearchSettings tune searches.
type SearchSettings struct {
	// CountLimit and CountBudget bound a search's exact count: its
	// matches up to CountLimit, counted within CountBudget. Past either,
	// the count is PostgreSQL's estimate (GraphQL countExact false).
	CountLimit  int           `env:"SEARCH_COUNT_LIMIT" envDefault:"1000"`
	CountBudget time.Duration `env:"SEARCH_COUNT_BUDGET" envDefault:"10ms"`
	// CollectBelow: a search counted exactly at most this many matches
	// is read whole and sorted on each page, never walked in key order.
	CollectBelow int `env:"SEARCH_COLLECT_BELOW" envDefault:"1000"`
	// WalkBudget is how long a page may walk the offices (or persons) in
	// key order before it is collected through its filters' indexes
	// instead; 0: walks run to their end (db.Search.WalkBudget).
	WalkBudget time.Duration `env:"SEARCH_WALK_BUDGET" envDefault:"100ms"`
	// TokenTTL is how long a page token stays valid.
	TokenTTL time.Duration `env:"SEARCH_TOKEN_TTL" envDefault:"1h"`
	// Concurrency is how many searches run at once; more wait their turn,
	// first come first served, within their request's deadline. 0: twice
	// the cores Go may use (DefaultSearchConcurrency).
	Concurrency int `env:"SEARCH_CONCURRENCY"`
}

// DefaultSearchConcurrency is twice the cores Go may use. Eight searches
// at once on 2 cores shared with PostgreSQL took turns on them, each
// slowed by all the others: interleaved with four at a time, the same
// throughput, and a p99 at 8 connections of 71 ms against 33 for a
// partner's name, 50 against 35 for a name word, 52 against 32 for a
// founding range and size (docs/benchmarks.md, "Searches four at a time").
func DefaultSearchConcurrency() int { return 2 * runtime.GOMAXPROCS(0) }

// DefaultSearchSettings are the defaults of SearchSettings.
var DefaultSearchSettings = SearchSettings{CountLimit: 1000, CountBudget: 10 * time.Millisecond, CollectBelow: 1000, WalkBudget: 100 * time.Millisecond, TokenTTL: time.Hour}

// SearchRequest is a search as a door received it: the filters by REST
// name with their values, the page size, or a page token (alone).
type SearchRequest struct {
	Filters map[string][]string
	Limit   *int
	Token   string
	// After is a cursor (a token) sent with the filters and page size of
	// the search it belongs to (GraphQL's after): the filters must be
	// that search's.
	After string
	// Cursors asks for a token after each record (GraphQL edges).
	Cursors bool
	// SizeName names the page size in sentences: "limit" (REST's, the
	// default) or "first" (GraphQL's).
	SizeName string
}

// SearchPage is a page of results.
type SearchPage[T any] struct {
	Records []T
	Next    string // "" on the last page
	Limit   int
	Count   int64
	Exact   bool     // Count is every match (false: PostgreSQL's estimate, or the count limit plus one; never below what the pages prove)
	Cursors []string // a token after each record, when asked
}

// The page token sentences.
const (
	tokenAloneRule   = "token must not be combined with any other parameter"
	tokenFormatRule  = "token must be the 32-character next token of a previous page"
	tokenUnknownRule = "token is unknown or has expired: start the search again without it"
	tokenStaleRule   = "token has expired: the registry was updated since the search began; start it again without token"
	afterFormatRule  = "after must be a cursor of a previous page of this search"
	afterOtherRule   = "after is a cursor of another search: send the filter it came with"
)

// searchKind is one of the two searches.
type searchKind struct {
	name  string // office, person
	kind  Kind
	specs []db.FilterSpec
}

var (
	officeSearch = searchKind{"office", KindSearchOffice, db.OfficeFilters}
	personSearch = searchKind{"person", KindSearchPerson, db.PersonFilters}
)

// parsedSearch is a validated search.
type parsedSearch struct {
	filters []db.Filter
	limit   int
	params  string // canonical text of the filters, kept with tokens
	token   string
	after   string
}

// parseSearch validates a request: every violated rule goes to cs.
func parseSearch(sk searchKind, r SearchRequest, cs *Constraints) parsedSearch {
	if r.Token != "" {
		if len(r.Filters) > 0 || r.Limit != nil {
			cs.Add(tokenAloneRule)
		}
		if !validToken(r.Token) {
			cs.Add(tokenFormatRule)
		}
		return parsedSearch{token: r.Token}
	}
	p := parsedSearch{limit: DefaultSearchLimit, after: r.After}
	if r.After != "" && !validToken(r.After) {
		cs.Add(afterFormatRule)
	}
	if r.Limit != nil {
		if *r.Limit < 1 || *r.Limit > MaxSearchLimit {
			cs.Add(cmp.Or(r.SizeName, "limit") + " must be an integer from 1 to " + strconv.Itoa(MaxSearchLimit))
		}
		p.limit = *r.Limit
	}
	canonical := url.Values{}
	names := make([]string, 0, len(r.Filters))
	for name := range r.Filters {
		names = append(names, name)
	}
	slices.Sort(names) // the same sentences in the same order every time
	for _, name := range names {
		values := r.Filters[name]
		f, ok := parseFilter(sk, name, values, cs)
		if ok {
			p.filters = append(p.filters, f)
			canonical[name] = values
		}
	}
	p.params = canonical.Encode()
	return p
}

func validToken(t string) bool {
	if len(t) != TokenLength {
		return false
	}
	for _, c := range []byte(t) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// parseFilter reads one filter parameter ("address.state.in").
func parseFilter(sk searchKind, name string, values []string, cs *Constraints) (db.Filter, bool) {
	dot := strings.LastIndexByte(name, '.')
	if dot < 0 {
		cs.Add(name + " is not a parameter of this search")
		return db.Filter{}, false
	}
	field, op := name[:dot], name[dot+1:]
	i := slices.IndexFunc(sk.specs, func(s db.FilterSpec) bool { return s.Field == field })
	if i < 0 || !slices.Contains(sk.specs[i].Ops, op) {
		cs.Add(name + " is not a parameter of this search")
		return db.Filter{}, false
	}
	spec := sk.specs[i]
	f := db.Filter{Field: field, Op: op}
	if len(values) == 0 {
		cs.Add(name + " must not be empty")
		return f, false
	}
	if len(values) > MaxFilterValues {
		cs.Add(name + " must contain at most " + strconv.Itoa(MaxFilterValues) + " values")
		return f, false
	}
	single := op == db.OpGte || op == db.OpLte || op == db.OpEq || op == db.OpEx
	if single && len(values) > 1 {
		cs.Add(name + " must be a single value")
		return f, false
	}
	if op == db.OpEx {
		return parseBool(name, values[0], f, cs)
	}
	before := len(*cs)
	switch spec.Type {
	case db.Words:
		for _, v := range values {
			ws := words.Of(v)
			if len(ws) == 0 {
				cs.Add(name + " values must each contain a letter or a digit")
				continue
			}
			f.Words = append(f.Words, ws)
		}
	case db.Text:
		for _, v := range values {
			f.Texts = append(f.Texts, words.Upper(v))
		}
	case db.Enum:
		for _, v := range values {
			if !slices.Contains(spec.Allowed, v) {
				cs.Add(name + " must contain only: " + strings.Join(spec.Allowed, ", "))
				continue
			}
			f.Texts = append(f.Texts, v)
		}
	case db.Int:
		for _, v := range values {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				cs.Add(name + " must contain only whole numbers")
				continue
			}
			f.Ints = append(f.Ints, n)
		}
	case db.Date:
		d, err := time.Parse(time.DateOnly, values[0])
		if err != nil {
			cs.Add(name + " must be a date in the format YYYY-MM-DD")
		}
		f.Date = d
	case db.Bool:
		return parseBool(name, values[0], f, cs)
	case db.Number:
		if _, err := strconv.ParseFloat(values[0], 64); err != nil || strings.ContainsAny(values[0], "eEnNxX") {
			cs.Add(name + " must be a decimal number, such as 100000 or 2500.50")
		}
		f.Number = values[0]
	case db.Zip:
		for _, v := range values {
			if len(v) != 8 || !cnpj.Digits(v) {
				cs.Add(name + " must contain only postal codes of 8 digits")
				continue
			}
			f.Texts = append(f.Texts, v)
		}
	case db.OfficeID:
		for _, v := range values {
			id, err := cnpj.Parse(v)
			if err != nil {
				cs.Add(name + " must contain only valid CNPJs")
				continue
			}
			f.Texts = append(f.Texts, string(id))
		}
	case db.PersonTaxID:
		for _, v := range values {
			t, ok := personTaxID(v)
			if !ok {
				cs.Add(name + " must contain only CPFs (11 digits, or masked as ***123456**) or CNPJs")
				continue
			}
			f.Texts = append(f.Texts, t)
		}
	}
	return f, len(*cs) == before
}

func parseBool(name, v string, f db.Filter, cs *Constraints) (db.Filter, bool) {
	switch v {
	case "true":
		f.Bool = true
	case "false":
	default:
		cs.Add(name + " must be true or false")
		return f, false
	}
	return f, true
}

// personTaxID is how the registry stores a partner's tax id: a CPF masked
// to its visible middle digits (***123456**), a CNPJ whole.
func personTaxID(v string) (string, bool) {
	v = strings.NewReplacer(".", "", "-", "", "/", "").Replace(v)
	switch {
	case len(v) == 11 && cnpj.Digits(v):
		return "***" + v[3:9] + "**", true
	case len(v) == 11 && strings.HasPrefix(v, "***") && strings.HasSuffix(v, "**") && cnpj.Digits(v[3:9]):
		return v, true
	}
	id, err := cnpj.Parse(v)
	return string(id), err == nil
}

// ParseSearch validates a search request for the door, so that a 400 is
// answered before the search is admitted or priced.
func ParseSearch(person bool, r SearchRequest) error {
	var cs Constraints
	sk := officeSearch
	if person {
		sk = personSearch
	}
	parseSearch(sk, r, &cs)
	return cs.Err()
}

// SearchOffices is the office search: a page of offices in the office
// lookup's shape (company with members, no Simples), in tax id order.
func (s *Service) SearchOffices(ctx context.Context, r SearchRequest) (SearchPage[model.Office], error) {
	return metered(ctx, s, KindSearchOffice, func(*bill) (SearchPage[model.Office], error) {
		done, err := s.searchTurn(ctx)
		if err != nil {
			return SearchPage[model.Office]{}, err
		}
		defer done()
		page, keys, tokens, err := s.search(ctx, officeSearch, r, s.store.SearchOffices)
		if err != nil {
			return SearchPage[model.Office]{}, err
		}
		offices, err := s.searchOffices(ctx, keys, tokens)
		return withRecords(page, offices), err
	})
}

// SearchPersons is the person search: a page of persons in the person
// lookup's shape (with their memberships), in person id order.
func (s *Service) SearchPersons(ctx context.Context, r SearchRequest) (SearchPage[model.Person], error) {
	return metered(ctx, s, KindSearchPerson, func(*bill) (SearchPage[model.Person], error) {
		done, err := s.searchTurn(ctx)
		if err != nil {
			return SearchPage[model.Person]{}, err
		}
		defer done()
		page, keys, tokens, err := s.search(ctx, personSearch, r, s.store.SearchPersons)
		if err != nil {
			return SearchPage[model.Person]{}, err
		}
		persons, err := s.searchPersons(ctx, keys, tokens)
		return withRecords(page, persons), err
	})
}

func withRecords[T any](p SearchPage[struct{}], records []T) SearchPage[T] {
	return SearchPage[T]{Records: records, Next: p.Next, Limit: p.Limit, Count: p.Count, Exact: p.Exact, Cursors: p.Cursors}
}

// search runs a validated search and mints the tokens of its page, which
// the statement of its records stores (db.Store.SearchRecords).
func (s *Service) search(ctx context.Context, sk searchKind, r SearchRequest,
	run func(context.Context, db.Search) (db.SearchPage, error)) (SearchPage[struct{}], []string, []db.SearchToken, error) {
	var cs Constraints
	p := parseSearch(sk, r, &cs)
	if err := cs.Err(); err != nil {
		return SearchPage[struct{}]{}, nil, nil, err
	}
	q := db.Search{Limit: p.limit, CountLimit: s.searchSettings.CountLimit, CountBudget: s.searchSettings.CountBudget,
		CollectBelow: s.searchSettings.CollectBelow, WalkBudget: s.searchSettings.WalkBudget}
	var out SearchPage[struct{}]
	if token := p.token + p.after; token != "" {
		t, err := s.store.SearchTokenOf(ctx, token)
		var nf *db.NotFoundError
		switch {
		case errors.As(err, &nf), err == nil && (t.Kind != sk.name || time.Since(t.CreatedAt) > s.searchSettings.TokenTTL):
			return out, nil, nil, fault.Invalid(tokenUnknownRule)
		case err != nil:
			return out, nil, nil, err
		}
		if p.after != "" {
			if t.Params != p.params {
				return out, nil, nil, fault.Invalid(afterOtherRule)
			}
		} else {
			var tcs Constraints
			values, _ := url.ParseQuery(t.Params)
			p = parseSearch(sk, SearchRequest{Filters: values, Limit: &t.Limit}, &tcs)
			if tcs.Err() != nil { // a token of an older release's rules
				return out, nil, nil, fault.Invalid(tokenUnknownRule)
			}
		}
		q.Filters, q.Limit, q.After, q.Snapshot = p.filters, p.limit, t.After, t.Snapshot
		q.Count, q.Exact, q.Collected = t.Count, t.Exact, t.Collected
	} else {
		codes, err := s.snapshot(ctx)
		if err != nil {
			return out, nil, nil, err
		}
		q.Filters, q.Snapshot = p.filters, codes.Snapshot.ID
	}
	res, err := run(ctx, q)
	if errors.Is(err, db.ErrSnapshotChanged) && q.After == "" {
		// A swap since the catalog last looked: the search starts on the
		// new snapshot.
		codes, rerr := s.store.Catalog.Refresh(ctx)
		if rerr != nil {
			return out, nil, nil, storeErr(rerr, "")
		}
		q.Snapshot = codes.Snapshot.ID
		res, err = run(ctx, q)
	}
	switch {
	case errors.Is(err, db.ErrSnapshotChanged):
		return out, nil, nil, fault.Invalid(tokenStaleRule)
	case err != nil:
		return out, nil, nil, storeErr(err, "")
	}
	out.Count, out.Exact = res.Count, res.Exact
	out.Limit = q.Limit
	tokens := make([]db.SearchToken, 0, 1)
	mint := func(after string) (string, error) {
		tok, err := newToken(time.Now())
		if err != nil {
			return "", err
		}
		tokens = append(tokens, db.SearchToken{Token: tok, Kind: sk.name, Params: p.params, Snapshot: q.Snapshot,
			After: after, Count: out.Count, Exact: out.Exact, Limit: q.Limit, Collected: res.Collected})
		return tok, nil
	}
	if r.Cursors {
		for _, k := range res.Keys {
			c, err := mint(k)
			if err != nil {
				return out, nil, nil, err
			}
			out.Cursors = append(out.Cursors, c)
		}
	}
	if res.HasNext {
		if r.Cursors {
			out.Next = out.Cursors[len(out.Cursors)-1]
		} else if out.Next, err = mint(res.Keys[len(res.Keys)-1]); err != nil {
			return out, nil, nil, err
		}
	}
	s.dropOldTokens()
	return out, res.Keys, tokens, nil
}

// newToken is a page token: the time in milliseconds (6 bytes, as a
// UUIDv7 begins) then 10 random bytes, in hexadecimal. Tokens minted later
// sort later, so each insert lands on the last page of the tokens' primary
// key, which stays in PostgreSQL's buffers; random tokens spread the
// inserts over an index of an hour's tokens (700,000 after an hour of the
// bench's searches: 71 MB), each insert reading one of its pages from
// anywhere. 80 random bits still make a token unguessable.
func newToken(now time.Time) (string, error) {
	t := make([]byte, TokenLength/2)
	binary.BigEndian.PutUint64(t, uint64(now.UnixMilli())<<16) // the top 6 bytes
	if _, err := rand.Read(t[6:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(t), nil
}

// dropOldTokens deletes expired tokens, at most once a minute per
// instance, off the request.
func (s *Service) dropOldTokens() {
	now := time.Now() // the database's clock stamps the tokens, not the lookups' (s.now)
	last := s.tokensDropped.Load()
	if now.UnixNano()-last < int64(time.Minute) || !s.tokensDropped.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := s.store.DeleteSearchTokens(ctx, now.Add(-s.searchSettings.TokenTTL)); err != nil {
			s.log.Warn("search: delete expired page tokens", "err", err)
		}
	}()
}

// searchOffices reads the offices of a page as the office lookup shows
// them, without Simples: one statement for the offices with their
// companies and members, which stores the page's tokens too (straight from
// the store: a page is one batch already, and the loaders of a REST
// request do not wait to gather keys).
func (s *Service) searchOffices(ctx context.Context, taxIDs []string, tokens []db.SearchToken) ([]model.Office, error) {
	offices, members, err := s.store.SearchRecords(ctx, taxIDs, tokens)
	if err != nil {
		return nil, storeErr(err, "")
	}
	out := make([]model.Office, len(taxIDs))
	for i, id := range taxIDs {
		o, ok := offices[id]
		if !ok {
			return nil, searchRecordErr(id)
		}
		if o.Company != nil {
			c := *o.Company
			c.Simples, c.Simei, c.Members, c.Scope = nil, nil, members[o.Root], model.ScopeOffice
			if c.Members == nil {
				c.Members = []model.Member{}
			}
			o.Company = &c
		}
		o.Scope = model.ScopeOffice
		out[i] = o
	}
	return out, nil
}

// searchPersons reads the persons of a page with their memberships, in
// one statement, which stores the page's tokens too.
func (s *Service) searchPersons(ctx context.Context, ids []string, tokens []db.SearchToken) ([]model.Person, error) {
	persons, err := s.store.PersonRecords(ctx, ids, tokens)
	if err != nil {
		return nil, storeErr(err, "")
	}
	out := make([]model.Person, len(ids))
	for i, id := range ids {
		p, ok := persons[id]
		if !ok {
			return nil, searchRecordErr(id)
		}
		p.Scope = model.ScopePerson
		out[i] = p
	}
	return out, nil
}

// searchRecordErr: a record the search found and the read after it did not
// means a swap in between; the client retries the page.
func searchRecordErr(key string) error {
	return fault.E(fault.Unavailable, "the registry was updated while this page was read; try again",
		&db.NotFoundError{What: "search record", Key: key})
}
