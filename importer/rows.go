package importer

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/words"
)

// Columns of the staging tables each big file feeds, in COPY order.
var (
	companyColumns = []string{"root", "name", "nature", "responsible_role", "equity", "size", "jurisdiction", "name_words", "name_sig"}
	officeColumns  = []string{"tax_id", "root", "head", "alias", "status", "status_date", "reason", "city_abroad",
		"country", "founded", "main_activity", "side_activities", "street", "number", "details", "district", "zip",
		"state", "municipality", "phones", "email", "special", "special_date", "alias_words", "alias_sig"}
	memberColumns    = []string{"root", "position", "person_id", "role", "since", "agent_person_id", "agent_role"}
	personRowColumns = []string{"id", "type", "tax_id", "name", "age", "country", "name_words"}
	simplesColumns   = []string{"root", "simples_optant", "simples_since", "simples_until", "simei_optant", "simei_since", "simei_until"}
)

// rowError is why a row is rejected; the row is counted, not loaded.
type rowError string

func (e rowError) Error() string { return string(e) }

// validKey reports whether v is n characters of 0-9 or A-Z: roots, orders
// and check digits, alphanumeric since July 2026.
func validKey(v []byte, n int) bool {
	if len(v) != n {
		return false
	}
	for _, c := range v {
		if (c < '0' || c > '9') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

func checkRoot(v []byte) error {
	if !validKey(v, 8) {
		return rowError(fmt.Sprintf("invalid root %q", v))
	}
	return nil
}

// date writes a YYYYMMDD date as ISO text; "", "0" and "00000000" are NULL.
func (w *copyWriter) date(v []byte, col int) error {
	if nullDate(v) {
		w.null()
		return nil
	}
	if err := checkDate(v, col); err != nil {
		return err
	}
	w.sep()
	w.buf = append(w.buf, v[0], v[1], v[2], v[3], '-', v[4], v[5], '-', v[6], v[7])
	return nil
}

func nullDate(v []byte) bool {
	return len(v) == 0 || (len(v) == 1 && v[0] == '0') || string(v) == "00000000"
}

func checkDate(v []byte, col int) error {
	if nullDate(v) || len(v) == 8 && validDate(v) {
		return nil
	}
	return rowError(fmt.Sprintf("invalid date %q in column %d", v, col))
}

func validDate(v []byte) bool {
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	y, m, d := n/10000, n/100%100, n%100
	if y < 1 || m < 1 || m > 12 || d < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

// equity writes the capital social ("1061004829,23") as exact numeric text.
func (w *copyWriter) equity(v []byte) error {
	if len(v) == 0 {
		w.null()
		return nil
	}
	digits, sep := 0, 0
	for i, c := range v {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case (c == ',' || c == '.') && sep == 0:
			sep++
		case c == '-' && i == 0:
		default:
			return rowError(fmt.Sprintf("invalid capital %q", v))
		}
	}
	if digits == 0 {
		return rowError(fmt.Sprintf("invalid capital %q", v))
	}
	w.sep()
	for _, c := range v {
		if c == ',' {
			c = '.'
		}
		w.buf = append(w.buf, c)
	}
	return nil
}

// words writes the search words of a name as a text[] (package words);
// a name without any is NULL. It returns their signature.
func (w *copyWriter) words(name []byte) uint64 {
	w.sep()
	var (
		ok  bool
		sig uint64
	)
	if w.buf, sig, ok = words.AppendArray(w.buf, name); !ok {
		w.buf = append(w.buf, '\\', 'N')
	}
	return sig
}

// signature writes a words signature (words.Signature) as a bigint: the
// same 64 bits, read as signed.
func (w *copyWriter) signature(sig uint64) {
	w.sep()
	w.buf = strconv.AppendInt(w.buf, int64(sig), 10)
}

func (w *copyWriter) boolean(b bool) {
	if b {
		w.raw("t")
	} else {
		w.raw("f")
	}
}

// company writes an Empresas row.
func company(f [][]byte, w *copyWriter) error {
	if err := checkRoot(f[0]); err != nil {
		return err
	}
	w.str(f[0])
	w.str(f[1])
	w.text(f[2])
	w.text(f[3])
	if err := w.equity(f[4]); err != nil {
		return err
	}
	w.text(f[5])
	w.text(f[6])
	w.signature(w.words(f[1]))
	return nil
}

// officeRow holds per-stream scratch space for Estabelecimentos rows.
type officeRow struct {
	scratch []byte
	special map[string]struct{} // distinct "situação especial" texts
}

func (o *officeRow) write(f [][]byte, w *copyWriter) error {
	if err := checkRoot(f[0]); err != nil {
		return err
	}
	if !validKey(f[1], 4) || !validKey(f[2], 2) {
		return rowError(fmt.Sprintf("invalid order or check digits %q %q", f[1], f[2]))
	}
	w.sep()
	w.buf = append(w.buf, f[0]...)
	w.buf = append(w.buf, f[1]...)
	w.buf = append(w.buf, f[2]...)
	w.str(f[0])
	w.boolean(string(f[3]) == "1")
	w.text(f[4])
	w.text(f[5])
	if err := w.date(f[6], 6); err != nil {
		return err
	}
	w.text(f[7])
	w.text(f[8])
	w.text(f[9])
	if err := w.date(f[10], 10); err != nil {
		return err
	}
	w.text(f[11])
	o.codeList(w, f[12])
	o.street(w, f[13], f[14])
	w.text(f[15])
	w.text(f[16])
	w.text(f[17])
	o.zip(w, f[18])
	w.text(f[19])
	w.text(f[20])
	o.phones(w, f[21:25])
	w.text(bytes.TrimSpace(f[27]))
	special := bytes.TrimSpace(f[28])
	w.text(special)
	if len(special) > 0 {
		if _, ok := o.special[string(special)]; !ok {
			o.special[string(special)] = struct{}{}
		}
	}
	if err := w.date(f[29], 29); err != nil {
		return err
	}
	w.signature(w.words(f[4]))
	return nil
}

// codeList writes "6201501,6202300" as a text[] literal; empty is NULL.
func (o *officeRow) codeList(w *copyWriter, v []byte) {
	o.scratch = append(o.scratch[:0], '{')
	for len(v) > 0 {
		var item []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			item, v = v[:i], v[i+1:]
		} else {
			item, v = v, nil
		}
		item = bytes.TrimSpace(item)
		if len(item) == 0 {
			continue
		}
		if len(o.scratch) > 1 {
			o.scratch = append(o.scratch, ',')
		}
		o.scratch = appendArrayElem(o.scratch, item)
	}
	if len(o.scratch) == 1 {
		w.null()
		return
	}
	w.text(append(o.scratch, '}'))
}

// appendArrayElem quotes an array element unless it is plain alphanumeric.
func appendArrayElem(b, v []byte) []byte {
	plain := len(v) > 0 && !bytes.EqualFold(v, []byte("null"))
	for _, c := range v {
		if (c < '0' || c > '9') && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			plain = false
			break
		}
	}
	if plain {
		return append(b, v...)
	}
	b = append(b, '"')
	for _, c := range v {
		if c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return append(b, '"')
}

// street is tipo + " " + logradouro ("AVENIDA L2 SGAN").
func (o *officeRow) street(w *copyWriter, kind, name []byte) {
	kind, name = bytes.TrimSpace(kind), bytes.TrimSpace(name)
	o.scratch = append(o.scratch[:0], kind...)
	if len(kind) > 0 && len(name) > 0 {
		o.scratch = append(o.scratch, ' ')
	}
	o.scratch = append(o.scratch, name...)
	w.text(o.scratch)
}

// zip restores the leading zeros some CEPs lost.
func (o *officeRow) zip(w *copyWriter, v []byte) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || len(v) >= 8 || !allDigits(v) {
		w.text(v)
		return
	}
	o.scratch = o.scratch[:0]
	for i := len(v); i < 8; i++ {
		o.scratch = append(o.scratch, '0')
	}
	w.text(append(o.scratch, v...))
}

// phones writes the two phones (not the fax) as alternating area, number
// elements, skipping placeholders ("", "0", "0000").
func (o *officeRow) phones(w *copyWriter, f [][]byte) {
	o.scratch = append(o.scratch[:0], '{')
	for i := 0; i+1 < len(f); i += 2 {
		area, number := bytes.TrimSpace(f[i]), bytes.TrimSpace(f[i+1])
		if placeholder(number) {
			continue
		}
		if placeholder(area) {
			area = nil
		}
		if len(o.scratch) > 1 {
			o.scratch = append(o.scratch, ',')
		}
		o.scratch = appendArrayElem(o.scratch, area)
		o.scratch = append(o.scratch, ',')
		o.scratch = appendArrayElem(o.scratch, number)
	}
	if len(o.scratch) == 1 {
		w.null()
		return
	}
	w.text(append(o.scratch, '}'))
}

func placeholder(v []byte) bool {
	for _, c := range v {
		if c != '0' {
			return false
		}
	}
	return true
}

func allDigits(v []byte) bool {
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// memberRow writes a Sócios row into members and its persons (the partner
// and the legal representative) into person_rows, deduplicated after the
// load.
func memberRow(f [][]byte, line int, members, persons *copyWriter) error {
	if err := checkRoot(f[0]); err != nil {
		return err
	}
	// Validate before writing anything: the person row cannot be taken back
	// once the member row is rejected.
	if err := checkDate(f[5], 5); err != nil {
		return err
	}
	partnerID, err := person(persons, f)
	if err != nil {
		return err
	}
	members.str(f[0])
	members.sep()
	members.buf = appendInt(members.buf, line)
	members.raw(partnerID)
	members.text(f[4])
	if err := members.date(f[5], 5); err != nil {
		return err
	}
	agentCPF, agentName := bytes.TrimSpace(f[7]), bytes.TrimSpace(f[8])
	if string(agentCPF) == cnpj.NoCPF || len(agentName) == 0 {
		members.null()
	} else {
		id := cnpj.PersonID(cnpj.Natural, string(agentCPF), string(agentName))
		members.raw(id)
		persons.raw(id)
		persons.raw(string(cnpj.Natural))
		persons.text(agentCPF)
		persons.str(agentName)
		persons.null()
		persons.null()
		persons.words(agentName)
		if err := persons.end(); err != nil {
			return err
		}
	}
	if role := f[9]; len(role) == 0 || string(role) == "00" {
		members.null()
	} else {
		members.text(role)
	}
	return nil
}

// person writes the partner's person row, classified per the contract, and
// returns its id.
func person(w *copyWriter, f [][]byte) (string, error) {
	ident, name, doc, role, country, age := f[1], bytes.TrimSpace(f[2]), bytes.TrimSpace(f[3]), f[4], bytes.TrimSpace(f[6]), f[10]
	var t cnpj.PersonType
	switch string(ident) {
	case "1":
		t = cnpj.Legal
	case "2":
		t = cnpj.Natural
	case "3":
		t = cnpj.Foreign
	default:
		t = cnpj.Unknown
	}
	if string(role) == "37" || string(role) == "38" {
		t = cnpj.Foreign
	}
	id := cnpj.PersonID(t, string(doc), string(name))
	w.raw(id)
	w.raw(string(t))
	w.text(doc)
	w.str(name)
	if t != cnpj.Legal && len(age) == 1 && age[0] >= '1' && age[0] <= '9' {
		w.text(age)
	} else {
		w.null()
	}
	if t == cnpj.Foreign {
		w.text(country)
	} else {
		w.null()
	}
	w.words(name)
	return id, w.end()
}

func appendInt(b []byte, n int) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}

// simplesRow writes a Simples row.
func simplesRow(f [][]byte, w *copyWriter) error {
	if err := checkRoot(f[0]); err != nil {
		return err
	}
	w.str(f[0])
	w.boolean(string(f[1]) == "S")
	if err := w.date(f[2], 2); err != nil {
		return err
	}
	if err := w.date(f[3], 3); err != nil {
		return err
	}
	w.boolean(string(f[4]) == "S")
	if err := w.date(f[5], 5); err != nil {
		return err
	}
	return w.date(f[6], 6)
}
