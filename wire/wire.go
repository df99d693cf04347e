// Package wire holds the JSON shapes of the CNPJá API: what REST writes
// (Of functions, from the domain model) and what the upstream client reads
// from a source speaking the same API (Model methods, back to the domain
// model). One set of types for both, so an edge instance in front of
// another cnpjgraph cannot drift from what that instance writes.
//
// Field order follows interface-spec.md. Presence rules are spelled out
// with omitzero: a field of type Optional is absent when unset and null
// when set to nil. Reading is lenient: a field a source leaves out keeps
// its zero value rather than failing the fetch.
package wire

import (
	"encoding/json"
	"time"

	"github.com/cnpjgraph/cnpjgraph/model"
)

// Optional is a field whose presence is decided apart from its value.
type Optional[T any] struct {
	Set bool
	V   *T
}

// Some is a present field holding v (nil: null).
func Some[T any](v *T) Optional[T] { return Optional[T]{Set: true, V: v} }

// IsZero reports an absent field, for omitzero.
func (o Optional[T]) IsZero() bool { return !o.Set }

// MarshalJSON writes the value, or null.
func (o Optional[T]) MarshalJSON() ([]byte, error) { return json.Marshal(o.V) }

// UnmarshalJSON reads a present field.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	return json.Unmarshal(b, &o.V)
}

// Value is the field's value, nil when absent or null.
func (o Optional[T]) Value() *T { return o.V }

// DateLayout is the text of a calendar date.
const DateLayout = "2006-01-02"

// StampLayout is the text of an `updated` timestamp: UTC with
// milliseconds, as the contract's clients parse it.
const StampLayout = "2006-01-02T15:04:05.000Z"

// Date is a calendar date "YYYY-MM-DD"; a *Date that is nil is null.
type Date struct{ T time.Time }

// MarshalText rather than MarshalJSON: encoding/json re-scans and compacts
// what a MarshalJSON returns, which dominated big answers.
func (d Date) MarshalText() ([]byte, error) {
	return d.T.AppendFormat(make([]byte, 0, 10), DateLayout), nil
}

// UnmarshalText reads a date; an empty one is the zero date (DateOf gives
// nil for it), and a full timestamp where a date is meant is cut to its day,
// as some sources send.
func (d *Date) UnmarshalText(b []byte) error {
	s := string(b)
	if s == "" {
		d.T = time.Time{}
		return nil
	}
	if len(s) > 10 {
		s = s[:10]
	}
	t, err := time.Parse(DateLayout, s)
	if err != nil {
		return err
	}
	d.T = t
	return nil
}

// DateOf is a date field of t; nil is null.
func DateOf(t *time.Time) *Date {
	if t == nil {
		return nil
	}
	return &Date{*t}
}

// Time is the date a field read, nil when null or empty.
func (d *Date) Time() *time.Time {
	if d == nil || d.T.IsZero() {
		return nil
	}
	t := d.T
	return &t
}

// Stamp is the `updated` timestamp (ISO 8601 UTC). Reading accepts it with
// or without milliseconds; anything unreadable is the zero time, and the
// reader's own clock stands in.
type Stamp struct{ T time.Time }

// StampOf is the stamp of t.
func StampOf(t time.Time) Stamp { return Stamp{t} }

// MarshalText writes UTC with milliseconds.
func (s Stamp) MarshalText() ([]byte, error) {
	return s.T.UTC().AppendFormat(make([]byte, 0, 24), StampLayout), nil
}

// UnmarshalJSON reads a timestamp leniently.
func (s *Stamp) UnmarshalJSON(b []byte) error {
	var v *string
	if err := json.Unmarshal(b, &v); err != nil || v == nil {
		return nil //nolint:nilerr // an unreadable stamp is no stamp: the caller's clock stands in
	}
	if t, err := time.Parse(time.RFC3339Nano, *v); err == nil {
		s.T = t.UTC()
	}
	return nil
}

// textOf is a code's text, null when the registry's table lacks the code.
func textOf(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Code is an entry of a code table: status, reason, activity, nature, role.
type Code struct {
	ID   int     `json:"id"`
	Text *string `json:"text"`
}

// CodeOf is the wire code of c.
func CodeOf(c model.Code) Code { return Code{ID: c.ID, Text: textOf(c.Text)} }

// Model is the domain code.
func (c Code) Model() model.Code { return model.Code{ID: c.ID, Text: deref(c.Text)} }

func codePtr(c *model.Code) *Code {
	if c == nil {
		return nil
	}
	v := CodeOf(*c)
	return &v
}

func codesOf(cs []model.Code) []Code {
	out := make([]Code, len(cs))
	for i, c := range cs {
		out[i] = CodeOf(c)
	}
	return out
}

// Size is a company's size (porte).
type Size struct {
	ID      int    `json:"id"`
	Acronym string `json:"acronym"`
	Text    string `json:"text"`
}

func sizeOf(s *model.Size) *Size {
	if s == nil {
		return nil
	}
	return &Size{ID: s.ID, Acronym: s.Acronym, Text: s.Text}
}

func (s *Size) model() *model.Size {
	if s == nil {
		return nil
	}
	return &model.Size{ID: s.ID, Acronym: s.Acronym, Text: s.Text}
}

// Country is a country by UN M49 code; id is null when the registry's code
// has no M49 equivalent.
type Country struct {
	ID   *int    `json:"id"`
	Name *string `json:"name"`
}

func countryOf(c model.Country) Country {
	out := Country{Name: textOf(c.Name)}
	if c.ID != 0 {
		id := c.ID
		out.ID = &id
	}
	return out
}

func (c *Country) model() model.Country {
	if c == nil {
		return model.Country{}
	}
	out := model.Country{Name: deref(c.Name)}
	if c.ID != nil {
		out.ID = *c.ID
	}
	return out
}

// Phone is a phone number with its area code.
type Phone struct {
	Area   string `json:"area"`
	Number string `json:"number"`
}

// Email is an e-mail address with its domain.
type Email struct {
	Address string `json:"address"`
	Domain  string `json:"domain"`
}

// Registration is a state registration; the CCC's status and type are
// present when the source gave them.
type Registration struct {
	State      string `json:"state"`
	Number     string `json:"number"`
	Enabled    bool   `json:"enabled"`
	StatusDate *Date  `json:"statusDate,omitempty"`
	Status     *Code  `json:"status,omitempty"`
	Type       *Code  `json:"type,omitempty"`
}

// Special is the special situation of an office.
type Special struct {
	ID   int    `json:"id"`
	Text string `json:"text"`
}

// Error is the contract's error body.
type Error struct {
	Code        int      `json:"code"`
	Message     string   `json:"message"`
	Constraints []string `json:"constraints,omitempty"`
	Reason      string   `json:"reason,omitempty"`
	Permission  string   `json:"permission,omitempty"`
	Required    *int     `json:"required,omitempty"`
	Remaining   *int     `json:"remaining,omitempty"`
}
