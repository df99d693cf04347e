// Package scalars holds the marshalers of the GraphQL schema's own scalars
// (Date, DateTime, Decimal), bound in gqlgen.yml. They write exactly what
// REST writes, so a client reads the same text through either API.
package scalars

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
)

// DateLayout is the text of a calendar date.
const DateLayout = "2006-01-02"

// TimestampLayout is the text of an `updated` timestamp: UTC with
// milliseconds, as REST writes it and the contract's clients parse it.
const TimestampLayout = "2006-01-02T15:04:05.000Z"

// MarshalDate writes a calendar date as "YYYY-MM-DD".
func MarshalDate(t time.Time) graphql.Marshaler {
	return quoted(t.Format(DateLayout))
}

// InputError is an input value a scalar cannot read. Rule ends a sentence
// whose subject is where the value was sent, which only the error's path
// says: the error presenter names it ("founded.gte must be a date in the
// format YYYY-MM-DD", as REST words it) and answers BAD_REQUEST.
type InputError struct{ Rule string }

func (e *InputError) Error() string { return "the value " + e.Rule }

// The rules of the scalars' input values.
var (
	errDate     = &InputError{"must be a date in the format YYYY-MM-DD"}
	errDateTime = &InputError{"must be an RFC 3339 timestamp"}
	errDecimal  = &InputError{"must be a decimal number, such as 100000 or 2500.50"}
)

// UnmarshalDate reads a "YYYY-MM-DD" date.
func UnmarshalDate(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, errDate
	}
	t, err := time.Parse(DateLayout, s)
	if err != nil {
		return time.Time{}, errDate
	}
	return t, nil
}

// MarshalDateTime writes a timestamp in UTC with milliseconds.
func MarshalDateTime(t time.Time) graphql.Marshaler {
	return quoted(t.UTC().Format(TimestampLayout))
}

// UnmarshalDateTime reads an RFC 3339 timestamp.
func UnmarshalDateTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, errDateTime
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errDateTime
	}
	return t.UTC(), nil
}

// MarshalDecimal writes the exact numeric text as a JSON number: share
// capital is a PostgreSQL numeric, and a float would round it. Text that is
// not a plain decimal (it never is, the store normalizes it) becomes 0
// rather than invalid JSON.
func MarshalDecimal(s string) graphql.Marshaler {
	if !plainDecimal(s) {
		s = "0"
	}
	return graphql.WriterFunc(func(w io.Writer) { _, _ = io.WriteString(w, s) })
}

// UnmarshalDecimal reads a decimal given as a JSON number or a string.
func UnmarshalDecimal(v any) (string, error) {
	var s string
	switch n := v.(type) {
	case string:
		s = n
	case int:
		s = strconv.Itoa(n)
	case int64:
		s = strconv.FormatInt(n, 10)
	case float64:
		s = strconv.FormatFloat(n, 'f', -1, 64)
	case fmt.Stringer: // json.Number
		s = n.String()
	}
	if !plainDecimal(s) {
		return "", errDecimal
	}
	return s, nil
}

// plainDecimal accepts -?digits(.digits)?, the only form JSON and
// PostgreSQL agree on without rounding.
func plainDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	return cnpj.Digits(intPart) && (!hasFrac || cnpj.Digits(frac))
}

func quoted(s string) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(s)) })
}
