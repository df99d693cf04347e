package wire

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// AppendOffice appends the office lookup's answer for o to dst: exactly the
// bytes json.Marshal(OfficeOf(o)) writes (a test compares them), without
// reflection or the intermediate values. The office lookup is the request
// sent by the million; encoding/json was a tenth of its CPU. It covers the
// answers of the options that are asked by the million (simples,
// registrations); one with suframa, links or coordinates goes through
// json.Marshal (see MarshalOffice).
func AppendOffice(dst []byte, o model.Office) ([]byte, error) {
	dst = append(dst, `{"updated":"`...)
	dst = o.Updated.UTC().AppendFormat(dst, StampLayout)
	dst = append(dst, `","taxId":`...)
	dst = appendString(dst, o.TaxID)
	dst = append(dst, `,"alias":`...)
	dst = appendStringPtr(dst, o.Alias)
	dst = append(dst, `,"founded":`...)
	dst = appendDate(dst, o.Founded)
	dst = append(dst, `,"head":`...)
	dst = strconv.AppendBool(dst, o.Head)
	dst = append(dst, `,"company":`...)
	var err error
	if dst, err = appendCompany(dst, o.Company); err != nil {
		return nil, err
	}
	dst = append(dst, `,"statusDate":`...)
	dst = appendDate(dst, o.StatusDate)
	dst = append(dst, `,"status":`...)
	dst = appendCode(dst, o.Status)
	if o.Status.ID != 2 {
		dst = append(dst, `,"reason":`...)
		dst = appendCodePtr(dst, o.Reason)
	}
	dst = append(dst, `,"specialDate":`...)
	dst = appendDate(dst, o.SpecialDate)
	if o.SpecialDate != nil {
		dst = append(dst, `,"special":`...)
		if o.Special == nil {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, `{"id":`...)
			dst = strconv.AppendInt(dst, int64(o.Special.ID), 10)
			dst = append(dst, `,"text":`...)
			dst = appendString(dst, o.Special.Text)
			dst = append(dst, '}')
		}
	}
	dst = append(dst, `,"address":`...)
	dst = appendAddress(dst, o.Address)
	dst = append(dst, `,"phones":[`...)
	for i, p := range o.Phones {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"area":`...)
		dst = appendString(dst, p.Area)
		dst = append(dst, `,"number":`...)
		dst = appendString(dst, p.Number)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"emails":[`...)
	for i, e := range o.Emails {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"address":`...)
		dst = appendString(dst, e.Address)
		dst = append(dst, `,"domain":`...)
		dst = appendString(dst, e.Domain)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"mainActivity":`...)
	dst = appendCode(dst, o.MainActivity)
	dst = append(dst, `,"sideActivities":[`...)
	for i, c := range o.SideActivities {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendCode(dst, c)
	}
	dst = append(dst, ']')
	if o.Registrations != nil {
		dst = append(dst, `,"registrations":[`...)
		for i, r := range o.Registrations {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"state":`...)
			dst = appendString(dst, r.State)
			dst = append(dst, `,"number":`...)
			dst = appendString(dst, r.Number)
			dst = append(dst, `,"enabled":`...)
			dst = strconv.AppendBool(dst, r.Enabled)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), nil
}

// MarshalOffice is the office lookup's answer for o, appended to dst.
func MarshalOffice(dst []byte, o model.Office) ([]byte, error) {
	if o.Suframa != nil || o.Links != nil || o.Address.Coordinates != nil {
		b, err := json.Marshal(OfficeOf(o))
		return append(dst, b...), err
	}
	return AppendOffice(dst, o)
}

// errNumber is json.Marshal's refusal of a json.Number that is not one.
var errNumber = errors.New("json: invalid number literal")

func appendCompany(dst []byte, c *model.Company) ([]byte, error) {
	if c == nil {
		c = &model.Company{}
	}
	dst = append(dst, `{"id":`...)
	if n, ok := cnpj.Root(c.Root).Int(); ok {
		dst = strconv.AppendInt(dst, n, 10)
	} else {
		dst = appendString(dst, c.Root)
	}
	dst = append(dst, `,"name":`...)
	dst = appendString(dst, c.Name)
	dst = append(dst, `,"equity":`...)
	equity := c.Equity
	if equity == "" {
		equity = "0" // as encoding/json writes an empty json.Number
	}
	if !validNumber(equity) {
		return nil, errNumber
	}
	dst = append(dst, equity...)
	dst = append(dst, `,"nature":`...)
	dst = appendCode(dst, c.Nature)
	dst = append(dst, `,"size":`...)
	if c.Size == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, `{"id":`...)
		dst = strconv.AppendInt(dst, int64(c.Size.ID), 10)
		dst = append(dst, `,"acronym":`...)
		dst = appendString(dst, c.Size.Acronym)
		dst = append(dst, `,"text":`...)
		dst = appendString(dst, c.Size.Text)
		dst = append(dst, '}')
	}
	if c.Simples != nil {
		dst = append(dst, `,"simples":`...)
		dst = appendSimples(dst, c.Simples)
	}
	if c.Simei != nil {
		dst = append(dst, `,"simei":`...)
		dst = appendSimples(dst, c.Simei)
	}
	dst = append(dst, `,"members":[`...)
	for i, m := range c.Members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"since":`...)
		dst = appendDate(dst, m.Since)
		dst = append(dst, `,"person":`...)
		dst = appendPerson(dst, &m.Person)
		dst = append(dst, `,"role":`...)
		dst = appendCode(dst, m.Role)
		if m.Agent != nil {
			dst = append(dst, `,"agent":{"person":`...)
			dst = appendPerson(dst, &m.Agent.Person)
			dst = append(dst, `,"role":`...)
			dst = appendCode(dst, m.Agent.Role)
			dst = append(dst, '}')
		}
		dst = append(dst, '}')
	}
	return append(dst, "]}"...), nil
}

func appendPerson(dst []byte, p *model.Person) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendString(dst, p.ID)
	dst = append(dst, `,"name":`...)
	dst = appendString(dst, p.Name)
	dst = append(dst, `,"type":`...)
	dst = appendString(dst, p.Type)
	dst = append(dst, `,"taxId":`...)
	dst = appendStringPtr(dst, p.TaxID)
	if p.HasAge() {
		dst = append(dst, `,"age":`...)
		dst = appendStringPtr(dst, p.Age)
	}
	if p.Type == "FOREIGN" {
		dst = append(dst, `,"country":`...)
		if p.Country == nil {
			dst = append(dst, "null"...)
		} else {
			dst = appendCountry(dst, *p.Country)
		}
	}
	return append(dst, '}')
}

func appendSimples(dst []byte, s *model.Simples) []byte {
	dst = append(dst, `{"optant":`...)
	dst = strconv.AppendBool(dst, s.Optant)
	dst = append(dst, `,"since":`...)
	dst = appendDate(dst, s.Since)
	if s.History != nil {
		dst = append(dst, `,"history":[`...)
		for i, p := range s.History {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"from":"`...)
			dst = p.From.AppendFormat(dst, DateLayout)
			dst = append(dst, `","until":`...)
			dst = appendDate(dst, p.Until)
			dst = append(dst, `,"text":`...)
			dst = appendText(dst, p.Text)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

func appendAddress(dst []byte, a model.Address) []byte {
	dst = append(dst, `{"municipality":`...)
	if a.Municipality == nil {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, int64(*a.Municipality), 10)
	}
	dst = append(dst, `,"street":`...)
	dst = appendText(dst, a.Street)
	dst = append(dst, `,"number":`...)
	dst = appendText(dst, a.Number)
	dst = append(dst, `,"details":`...)
	dst = appendStringPtr(dst, a.Details)
	dst = append(dst, `,"district":`...)
	dst = appendText(dst, a.District)
	dst = append(dst, `,"city":`...)
	dst = appendText(dst, a.City)
	dst = append(dst, `,"state":`...)
	dst = appendText(dst, a.State)
	dst = append(dst, `,"zip":`...)
	dst = appendText(dst, a.Zip)
	dst = append(dst, `,"country":`...)
	dst = appendCountry(dst, a.Country)
	return append(dst, '}')
}

func appendCountry(dst []byte, c model.Country) []byte {
	dst = append(dst, `{"id":`...)
	if c.ID == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, int64(c.ID), 10)
	}
	dst = append(dst, `,"name":`...)
	dst = appendText(dst, c.Name)
	return append(dst, '}')
}

func appendCode(dst []byte, c model.Code) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, int64(c.ID), 10)
	dst = append(dst, `,"text":`...)
	dst = appendText(dst, c.Text)
	return append(dst, '}')
}

func appendCodePtr(dst []byte, c *model.Code) []byte {
	if c == nil {
		return append(dst, "null"...)
	}
	return appendCode(dst, *c)
}

// appendDate writes a date, null for nil.
func appendDate(dst []byte, t *time.Time) []byte {
	if t == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, DateLayout)
	return append(dst, '"')
}

// appendText writes text, null when empty (the answers' rule).
func appendText(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return appendString(dst, s)
}

func appendStringPtr(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return appendString(dst, *s)
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as encoding/json does (HTML-escaping on): the
// bytes must be the same, not merely equivalent.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// validNumber reports whether s is a JSON number literal, as encoding/json
// checks a json.Number.
func validNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
		if s == "" {
			return false
		}
	}
	switch {
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		s = s[1:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	default:
		return false
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = s[2:]
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			s = s[1:]
			if s == "" {
				return false
			}
		}
		for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
			s = s[1:]
		}
	}
	return s == ""
}
