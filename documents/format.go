package documents

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/model"
)

// brasilia is the Receita's clock for "data e hora de Brasília": UTC-3, no
// daylight saving since 2019. A fixed zone keeps the binary free of tzdata.
var brasilia = time.FixedZone("BRT", -3*60*60)

// FormatCNPJ punctuates a 14-character tax id: 33.683.111/0002-80.
func FormatCNPJ(s string) string {
	if len(s) != 14 {
		return s
	}
	return s[0:2] + "." + s[2:5] + "." + s[5:8] + "/" + s[8:12] + "-" + s[12:14]
}

// formatCEP punctuates a postal code: 70.836-900, as the comprovante does.
func formatCEP(s string) string {
	if len(s) != 8 {
		return s
	}
	return s[0:2] + "." + s[2:5] + "-" + s[5:8]
}

// formatDate is a calendar date as dd/mm/yyyy; nil is the comprovante's
// mark for an empty field.
func formatDate(t *time.Time) string {
	if t == nil {
		return empty
	}
	return t.Format("02/01/2006")
}

// empty is what the Receita prints in a field without data.
const empty = "********"

// orEmpty returns s, or the empty-field mark.
func orEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return empty
	}
	return s
}

// formatActivity is a CNAE subclass as 62.04-0-00 followed by its text.
func formatActivity(c model.Code) string {
	code := fmt.Sprintf("%07d", c.ID)
	return code[0:2] + "." + code[2:4] + "-" + code[4:5] + "-" + code[5:7] + " - " + orEmpty(c.Text)
}

// formatNature is a legal nature as 201-1 followed by its text.
func formatNature(c model.Code) string {
	code := fmt.Sprintf("%04d", c.ID)
	return code[0:3] + "-" + code[3:4] + " - " + orEmpty(c.Text)
}

// formatRole is a member qualification as 10-Diretor.
func formatRole(c model.Code) string {
	if c.Text == "" {
		return fmt.Sprintf("%02d", c.ID)
	}
	return fmt.Sprintf("%02d-%s", c.ID, c.Text)
}

// formatPhone is (61) 2021-0000 or (11) 97156-4144.
func formatPhone(p model.Phone) string {
	n := p.Number
	if len(n) >= 8 {
		n = n[:len(n)-4] + "-" + n[len(n)-4:]
	}
	if p.Area == "" {
		return n
	}
	return "(" + p.Area + ") " + n
}

// formatMoney writes an exact decimal ("1061004829.23") the Brazilian way:
// R$ 1.061.004.829,23. The text is never parsed as a float.
func formatMoney(decimal string) string {
	neg := strings.HasPrefix(decimal, "-")
	decimal = strings.TrimPrefix(decimal, "-")
	whole, frac, _ := strings.Cut(decimal, ".")
	if whole == "" {
		whole = "0"
	}
	frac = (frac + "00")[:2]
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	s := "R$ " + b.String() + "," + frac
	if neg {
		s = "-" + s
	}
	return s
}

// formatIssued is the comprovante's emission line.
func formatIssued(t time.Time) string {
	t = t.In(brasilia)
	return "Emitido no dia " + t.Format("02/01/2006") + " às " + t.Format("15:04:05") + " (data e hora de Brasília)."
}

// dataDate is the date of the data a certificate shows.
func dataDate(updated time.Time) string {
	return "Dados de " + updated.UTC().Format("02/01/2006") + "."
}

// sizeText is the porte as the comprovante prints it.
func sizeText(s *model.Size) string {
	if s == nil {
		return empty
	}
	return s.Acronym
}

// itoa is strconv.Itoa, short.
func itoa(n int) string { return strconv.Itoa(n) }
