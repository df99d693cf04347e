package service

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/words"
)

// Limits of lists (CNPJá's list service, as its client documents them).
const (
	MaxLists           = 1000      // lists an account holds
	MaxListItems       = 1_000_000 // tax ids of one list, or a search's limit
	MaxListTitle       = 50        // characters
	MaxListDescription = 2000      // characters
	MaxListPageSize    = 1000      // lists or exports a page of GET /list holds
)

// Owners tells whose lists a request touches, and runs an export as the
// account that asked for it. package auth implements it; nil is a server
// without accounts, whose lists all belong to account 0.
type Owners interface {
	// Owner is the account of the caller of ctx; false: no caller.
	Owner(ctx context.Context) (int64, bool)
	// AsAccount is a context whose lookups are admitted and priced as the
	// account's (its permissions and credits, no per-minute rate), or the
	// reason the account may not run them (suspended, gone).
	AsAccount(ctx context.Context, account int64) (context.Context, error)
	// Record writes the usage-ledger row of work run in an AsAccount
	// context: what it cost, as one request of route answered status.
	Record(ctx context.Context, route string, status int)
}

func (s *Service) owner(ctx context.Context) int64 {
	if s.owners == nil {
		return 0
	}
	id, _ := s.owners.Owner(ctx)
	return id
}

// ListInput is a list's fields as a create or an update sends them; nil
// fields were not sent.
type ListInput struct {
	Title       *string
	Description *string
	Limit       *int
	Items       []string // nil: not sent
	Query       map[string]json.RawMessage
}

// ListView is a list as its owner reads it.
type ListView struct {
	List  db.List
	Query map[string][]string // the search, its values as lists; nil: none
}

// ListPageView is a page of an account's lists or a list's exports.
type ListPageView[T any] struct {
	Records []T
	Next    string
	Limit   int
	Count   int
}

// PageRequest is a page of GET /list or GET /list/{listId}/export: either
// a token alone, or a size and (for lists) a search term.
type PageRequest struct {
	Token     string
	Limit     *int
	Search    *string
	TokenOnly bool  // the token came without any other parameter
	Problem   error // the request could not be read: answered once the caller may list
}

func (s *Service) lists() db.Lists { return db.Lists{DB: s.store.DB} }

func listErr(err error) error {
	var nf *db.NotFoundError
	if errors.As(err, &nf) {
		return fault.E(fault.NotFound, nf.What+" not found", err)
	}
	return err
}

// CreateList adds a list to the caller's account.
func (s *Service) CreateList(ctx context.Context, in ListInput) (ListView, error) {
	if err := s.meter.Admit(ctx, WriteList); err != nil {
		return ListView{}, err
	}
	var cs Constraints
	if in.Title == nil {
		cs.Add("title is required")
	}
	l := db.List{ID: uuid.NewString(), AccountID: s.owner(ctx)}
	s.checkListFields(&cs, in, &l)
	if in.Items != nil && in.Query != nil {
		cs.Add("items and query are mutually exclusive")
	}
	if in.Limit != nil && in.Query == nil {
		cs.Add("limit must be sent only with query")
	}
	var filters map[string][]string
	if in.Query != nil {
		filters = parseListQuery(in.Query, &cs)
		if in.Limit == nil {
			cs.Add("limit is required with query")
		} else if *in.Limit < 1 || *in.Limit > MaxListItems {
			cs.Add("limit must be an integer from 1 to " + strconv.Itoa(MaxListItems))
		} else {
			l.Limit = sql.NullInt32{Int32: int32(*in.Limit), Valid: true}
		}
		l.Query, _ = json.Marshal(filters)
	}
	if err := cs.Err(); err != nil {
		return ListView{}, err
	}
	owned, err := s.lists().CountLists(ctx, l.AccountID)
	if err != nil {
		return ListView{}, err
	}
	if owned >= MaxLists {
		return ListView{}, fault.Invalid(fmt.Sprintf("an account holds at most %d lists: delete one first", MaxLists))
	}
	l.Created = s.now().UTC()
	l.Updated = l.Created
	if l.Items == nil {
		l.Items = []string{}
	}
	l.Size = len(l.Items)
	if err := s.lists().CreateList(ctx, l); err != nil {
		return ListView{}, err
	}
	return ListView{List: l, Query: filters}, nil
}

// checkListFields validates title, description and items into l.
func (s *Service) checkListFields(cs *Constraints, in ListInput, l *db.List) {
	if in.Title != nil {
		if t := strings.TrimSpace(*in.Title); t == "" || len([]rune(t)) > MaxListTitle {
			cs.Add("title must be 1 to " + strconv.Itoa(MaxListTitle) + " characters, not only spaces")
		} else {
			l.Title = t
		}
	}
	if in.Description != nil {
		if d := strings.TrimSpace(*in.Description); d == "" || len([]rune(d)) > MaxListDescription {
			cs.Add("description must be 1 to " + strconv.Itoa(MaxListDescription) + " characters, not only spaces")
		} else {
			l.Description = sql.NullString{String: d, Valid: true}
		}
	}
	if in.Items != nil {
		l.Items = parseItems(in.Items, cs)
	}
}

// parseItems validates tax ids, deduplicated in the order given.
func parseItems(items []string, cs *Constraints) []string {
	if len(items) == 0 || len(items) > MaxListItems {
		cs.Add("items must hold 1 to " + strconv.Itoa(MaxListItems) + " tax ids")
		return nil
	}
	seen := make(map[cnpj.CNPJ]struct{}, len(items))
	out := make([]string, 0, len(items))
	bad := 0
	for _, v := range items {
		id, err := cnpj.Parse(v)
		if err != nil {
			if bad++; bad <= 3 {
				cs.Add("items must be CNPJs of 14 characters without punctuation: " + strconv.Quote(v) + " is not")
			}
			continue
		}
		if _, dup := seen[id]; !dup {
			seen[id] = struct{}{}
			out = append(out, string(id))
		}
	}
	if bad > 3 {
		cs.Add(fmt.Sprintf("items hold %d invalid CNPJs in all", bad))
	}
	return out
}

// parseListQuery reads a list's search: the office search's parameters
// (GET /office's names, values as JSON lists or single values; a text
// value is comma-separated as in a query string), validated by the office
// search's own rules.
func parseListQuery(q map[string]json.RawMessage, cs *Constraints) map[string][]string {
	filters := make(map[string][]string, len(q))
	for name, raw := range q {
		var values []string
		var list []any
		if err := json.Unmarshal(raw, &list); err != nil {
			var one any
			if err := json.Unmarshal(raw, &one); err != nil || one == nil {
				cs.Add("query." + name + " must be a list or a single value")
				continue
			}
			list = []any{one}
		}
		for _, v := range list {
			switch v := v.(type) {
			case string:
				for item := range strings.SplitSeq(v, ",") {
					if item = strings.TrimSpace(item); item != "" {
						values = append(values, item)
					}
				}
			case float64:
				values = append(values, strconv.FormatFloat(v, 'f', -1, 64))
			case bool:
				values = append(values, strconv.FormatBool(v))
			default:
				cs.Add("query." + name + " must hold text, numbers or booleans")
			}
		}
		filters[name] = values
	}
	if len(filters) == 0 {
		cs.Add("query must hold at least one filter of the office search")
		return filters
	}
	if err := ParseSearch(false, SearchRequest{Filters: filters}); err != nil {
		var f *fault.Error
		if errors.As(err, &f) {
			for _, c := range f.Constraints {
				cs.Add("query: " + c)
			}
		}
	}
	return filters
}

func viewOf(l db.List) ListView {
	v := ListView{List: l}
	if l.Query != nil {
		_ = json.Unmarshal(l.Query, &v.Query)
	}
	return v
}

// ReadList is one of the caller's lists with its items.
func (s *Service) ReadList(ctx context.Context, id string) (ListView, error) {
	if err := s.meter.Admit(ctx, ReadList); err != nil {
		return ListView{}, err
	}
	if err := validListID("listId", id); err != nil {
		return ListView{}, err
	}
	l, err := s.lists().List(ctx, s.owner(ctx), id, true)
	if err != nil {
		return ListView{}, listErr(err)
	}
	return viewOf(l), nil
}

func validListID(name, id string) error {
	if !validUUID(id) {
		what := "a list id"
		if name == "exportId" {
			what = "an export id"
		}
		return fault.Invalid(name + " must be " + what + ": a UUID of 36 characters")
	}
	return nil
}

// UpdateList changes the title, description or items of one of the
// caller's lists.
func (s *Service) UpdateList(ctx context.Context, id string, in ListInput) (ListView, error) {
	if err := s.meter.Admit(ctx, WriteList); err != nil {
		return ListView{}, err
	}
	if err := validListID("listId", id); err != nil {
		return ListView{}, err
	}
	var cs Constraints
	var l db.List
	s.checkListFields(&cs, in, &l)
	if in.Query != nil || in.Limit != nil {
		cs.Add("query and limit cannot be changed: create another list")
	}
	if err := cs.Err(); err != nil {
		return ListView{}, err
	}
	owner := s.owner(ctx)
	if in.Items != nil {
		cur, err := s.lists().List(ctx, owner, id, false)
		if err != nil {
			return ListView{}, listErr(err)
		}
		if cur.Query != nil {
			return ListView{}, fault.Invalid("items cannot be changed on a list made from a query")
		}
	}
	c := db.ListChange{Items: l.Items}
	if in.Title != nil {
		c.Title = &l.Title
	}
	if in.Description != nil {
		c.Description = &l.Description.String
	}
	if err := s.lists().UpdateList(ctx, owner, id, c, s.now().UTC()); err != nil {
		return ListView{}, listErr(err)
	}
	got, err := s.lists().List(ctx, owner, id, true)
	if err != nil {
		return ListView{}, listErr(err)
	}
	return viewOf(got), nil
}

// DeleteList removes one of the caller's lists with its exports.
func (s *Service) DeleteList(ctx context.Context, id string) (ListView, error) {
	if err := s.meter.Admit(ctx, WriteList); err != nil {
		return ListView{}, err
	}
	if err := validListID("listId", id); err != nil {
		return ListView{}, err
	}
	l, err := s.lists().DeleteList(ctx, s.owner(ctx), id)
	if err != nil {
		return ListView{}, listErr(err)
	}
	return viewOf(l), nil
}

// pageStart reads a page request: its size, search and where it starts.
func (s *Service) pageStart(ctx context.Context, r PageRequest, listID *string) (db.ListPage, error) {
	p := db.ListPage{AccountID: s.owner(ctx), ListID: listID, Limit: 10}
	if r.Problem != nil {
		return p, r.Problem
	}
	if r.Token != "" {
		if !r.TokenOnly {
			return p, fault.Invalid(tokenAloneRule)
		}
		if !validToken(r.Token) {
			return p, fault.Invalid(tokenFormatRule)
		}
		got, ok, err := s.lists().Page(ctx, p.AccountID, r.Token)
		if err != nil {
			return p, err
		}
		if !ok || (listID == nil) != (got.ListID == nil) || (listID != nil && !strings.EqualFold(*got.ListID, *listID)) {
			return p, fault.Invalid("token is unknown or expired (tokens last a day): start from the first page again")
		}
		return got, nil
	}
	var cs Constraints
	if r.Limit != nil {
		if *r.Limit < 1 || *r.Limit > MaxListPageSize {
			cs.Add("limit must be an integer from 1 to " + strconv.Itoa(MaxListPageSize))
		}
		p.Limit = *r.Limit
	}
	if r.Search != nil {
		if strings.TrimSpace(*r.Search) == "" {
			cs.Add("search must not be empty")
		}
		p.Search = *r.Search
	}
	return p, cs.Err()
}

// nextPage mints the token of the page after last, or "" when there is none.
func (s *Service) nextPage(ctx context.Context, p db.ListPage, more bool, lastCreated time.Time, lastID string) (string, error) {
	if !more {
		return "", nil
	}
	token, err := newToken(s.now())
	if err != nil {
		return "", err
	}
	p.Token, p.AfterCreated, p.AfterID = token, lastCreated, lastID
	if err := s.lists().SavePage(ctx, p); err != nil {
		return "", err
	}
	return token, nil
}

// SearchLists is a page of the caller's lists, oldest first; search keeps
// those whose title or description has a word beginning with each of its
// words (case and accents aside).
func (s *Service) SearchLists(ctx context.Context, r PageRequest) (ListPageView[ListView], error) {
	if err := s.meter.Admit(ctx, ReadList); err != nil {
		return ListPageView[ListView]{}, err
	}
	p, err := s.pageStart(ctx, r, nil)
	if err != nil {
		return ListPageView[ListView]{}, err
	}
	all, err := s.lists().AccountLists(ctx, p.AccountID)
	if err != nil {
		return ListPageView[ListView]{}, err
	}
	terms := words.Of(p.Search)
	matched := all[:0]
	for _, l := range all {
		if listMatches(l, terms) {
			matched = append(matched, l)
		}
	}
	page := ListPageView[ListView]{Limit: p.Limit, Count: len(matched)}
	start := 0
	if p.Token != "" {
		start = len(matched)
		for i, l := range matched {
			if l.Created.After(p.AfterCreated) || l.Created.Equal(p.AfterCreated) && l.ID > p.AfterID {
				start = i
				break
			}
		}
	}
	end := min(start+p.Limit, len(matched))
	for _, l := range matched[start:end] {
		page.Records = append(page.Records, viewOf(l))
	}
	if end > start {
		last := matched[end-1]
		page.Next, err = s.nextPage(ctx, p, end < len(matched), last.Created, last.ID)
	}
	return page, err
}

func listMatches(l db.List, terms []string) bool {
	if len(terms) == 0 {
		return true
	}
	have := words.Of(l.Title + " " + l.Description.String)
	for _, t := range terms {
		if !slices.ContainsFunc(have, func(w string) bool { return strings.HasPrefix(w, t) }) {
			return false
		}
	}
	return true
}
