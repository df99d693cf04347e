package listfile

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zip"
	"github.com/xuri/excelize/v2"

	"github.com/cnpjgraph/cnpjgraph/wire"
)

// Sheet names.
const (
	officesSheet = "offices"
	membersSheet = "members"
)

// membersCutNote is the text of the row that ends the members sheet when
// the list's members do not fit in Excel's 1,048,576 rows.
const membersCutNote = "Cut at Excel's limit of 1,048,576 rows: the members of the remaining offices are not listed here; the list's JSON_ZIP export has them all."

var errClosed = errors.New("listfile: file already closed")

// column is one column of a sheet: its header is the JSON path of the
// field, so a reader can map the workbook back onto the lookup's answer.
type column[T any] struct {
	header string
	width  float64
	value  func(*T) any // nil: empty cell
}

// memberRow is what a members row is made of.
type memberRow struct {
	office *wire.Office
	member *wire.Member
}

var officeColumns = []column[wire.Office]{
	{"taxId", 16, func(o *wire.Office) any { return text(o.TaxID) }},
	{"company.name", 40, func(o *wire.Office) any { return text(o.Company.Name) }},
	{"alias", 30, func(o *wire.Office) any { return textPtr(o.Alias) }},
	{"head", 7, func(o *wire.Office) any { return o.Head }},
	{"founded", 11, func(o *wire.Office) any { return date(o.Founded) }},
	{"status.text", 10, func(o *wire.Office) any { return textPtr(o.Status.Text) }},
	{"statusDate", 11, func(o *wire.Office) any { return date(o.StatusDate) }},
	{"reason.text", 20, func(o *wire.Office) any {
		if r := o.Reason.Value(); r != nil && *r != nil {
			return textPtr((*r).Text)
		}
		return nil
	}},
	{"special.text", 20, func(o *wire.Office) any {
		if s := o.Special.Value(); s != nil && *s != nil {
			return text((*s).Text)
		}
		return nil
	}},
	{"specialDate", 11, func(o *wire.Office) any { return date(o.SpecialDate) }},
	{"company.nature.id", 8, func(o *wire.Office) any { return o.Company.Nature.ID }},
	{"company.nature.text", 30, func(o *wire.Office) any { return textPtr(o.Company.Nature.Text) }},
	{"company.size.acronym", 8, func(o *wire.Office) any {
		if o.Company.Size == nil {
			return nil
		}
		return text(o.Company.Size.Acronym)
	}},
	{"company.equity", 14, func(o *wire.Office) any { return number(o.Company.Equity) }},
	{"company.simples.optant", 8, func(o *wire.Office) any { return optant(o.Company.Simples) }},
	{"company.simples.since", 11, func(o *wire.Office) any { return since(o.Company.Simples) }},
	{"company.simei.optant", 8, func(o *wire.Office) any { return optant(o.Company.Simei) }},
	{"company.simei.since", 11, func(o *wire.Office) any { return since(o.Company.Simei) }},
	{"mainActivity.id", 9, func(o *wire.Office) any { return o.MainActivity.ID }},
	{"mainActivity.text", 40, func(o *wire.Office) any { return textPtr(o.MainActivity.Text) }},
	{"sideActivities", 30, func(o *wire.Office) any {
		return join(o.SideActivities, func(b *strings.Builder, c wire.Code) { b.WriteString(strconv.Itoa(c.ID)) })
	}},
	{"address.street", 30, func(o *wire.Office) any { return textPtr(o.Address.Street) }},
	{"address.number", 8, func(o *wire.Office) any { return textPtr(o.Address.Number) }},
	{"address.details", 20, func(o *wire.Office) any { return textPtr(o.Address.Details) }},
	{"address.district", 20, func(o *wire.Office) any { return textPtr(o.Address.District) }},
	{"address.municipality", 10, func(o *wire.Office) any {
		if o.Address.Municipality == nil {
			return nil
		}
		return *o.Address.Municipality
	}},
	{"address.city", 20, func(o *wire.Office) any { return textPtr(o.Address.City) }},
	{"address.state", 6, func(o *wire.Office) any { return textPtr(o.Address.State) }},
	{"address.zip", 10, func(o *wire.Office) any { return textPtr(o.Address.Zip) }},
	{"address.country.name", 12, func(o *wire.Office) any {
		if o.Address.Country == nil {
			return nil
		}
		return textPtr(o.Address.Country.Name)
	}},
	{"phones", 20, func(o *wire.Office) any {
		return join(o.Phones, func(b *strings.Builder, p wire.Phone) {
			b.WriteByte('(')
			b.WriteString(p.Area)
			b.WriteString(") ")
			b.WriteString(p.Number)
		})
	}},
	{"emails", 30, func(o *wire.Office) any {
		return join(o.Emails, func(b *strings.Builder, e wire.Email) { b.WriteString(e.Address) })
	}},
	{"registrations", 20, func(o *wire.Office) any {
		regs := o.Registrations.Value()
		if regs == nil {
			return nil
		}
		return join(*regs, func(b *strings.Builder, r wire.Registration) {
			b.WriteString(r.State)
			b.WriteByte(' ')
			b.WriteString(r.Number)
		})
	}},
	{"updated", 25, func(o *wire.Office) any {
		if o.Updated.T.IsZero() {
			return nil
		}
		return o.Updated.T.UTC().Format(wire.StampLayout)
	}},
}

var memberColumns = []column[memberRow]{
	{"taxId", 16, func(r *memberRow) any { return text(r.office.TaxID) }},
	{"company.name", 40, func(r *memberRow) any { return text(r.office.Company.Name) }},
	{"person.name", 40, func(r *memberRow) any { return text(r.member.Person.Name) }},
	{"person.type", 10, func(r *memberRow) any { return text(r.member.Person.Type) }},
	{"person.taxId", 16, func(r *memberRow) any { return textPtr(r.member.Person.TaxID) }},
	{"role.text", 30, func(r *memberRow) any { return textPtr(r.member.Role.Text) }},
	{"since", 11, func(r *memberRow) any { return date(r.member.Since) }},
	{"person.age", 8, func(r *memberRow) any { return textPtr(r.member.Person.Age.Value()) }},
}

// Excel writes an .xlsx workbook: sheet "offices", one row per office, and
// sheet "members", one row per member of each office's company. Rows go
// to temporary files (excelize's stream writers spill to os.TempDir past
// 16 MB a sheet) and the workbook is zipped straight onto w at Close.
//
// A sheet ends at Excel's 1,048,576 rows. Offices, at most 1,000,000 in a
// list, always fit; members past row 1,048,575 are left out, and a note in
// the last row says so.
type Excel struct {
	w         io.Writer
	f         *excelize.File
	offices   *excelize.StreamWriter
	members   *excelize.StreamWriter
	officeRow int // last row written
	memberRow int
	memberMax int // last row a member may take; the one after is the note's
	cut       bool
	closed    bool
	row       []any // reused between rows
}

// NewExcel starts a workbook for w; nothing is written to w before Close.
// Close must be called even after a failed Add, to remove the temporary
// files.
func NewExcel(w io.Writer) (*Excel, error) {
	f := excelize.NewFile()
	e := &Excel{w: w, f: f, memberMax: excelize.TotalRows - 1}
	if err := e.start(); err != nil {
		_ = f.Close()
		return nil, err
	}
	return e, nil
}

func (e *Excel) start() error {
	f := e.f
	// excelize builds the archive in a bytes.Buffer it then copies to the
	// writer, the whole file in memory; handing it a zip writer on w
	// instead streams the archive out (the buffer stays empty).
	f.SetZipWriter(func(io.Writer) excelize.ZipWriter { return zip.NewWriter(e.w) })
	if err := f.SetSheetName("Sheet1", officesSheet); err != nil {
		return err
	}
	if _, err := f.NewSheet(membersSheet); err != nil {
		return err
	}
	bold, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}})
	if err != nil {
		return err
	}
	if e.offices, err = f.NewStreamWriter(officesSheet); err != nil {
		return err
	}
	if e.members, err = f.NewStreamWriter(membersSheet); err != nil {
		return err
	}
	if err := header(e.offices, officeColumns, bold); err != nil {
		return err
	}
	if err := header(e.members, memberColumns, bold); err != nil {
		return err
	}
	e.officeRow, e.memberRow = 1, 1
	e.row = make([]any, len(officeColumns))
	return nil
}

// header sizes the columns, freezes the header row so it stays in view,
// and writes it.
func header[T any](sw *excelize.StreamWriter, cols []column[T], style int) error {
	row := make([]any, len(cols))
	for i, c := range cols {
		if err := sw.SetColWidth(i+1, i+1, c.width); err != nil {
			return err
		}
		row[i] = excelize.Cell{StyleID: style, Value: c.header}
	}
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	return sw.SetRow("A1", row)
}

// Add writes the office's row and its company's members' rows.
func (e *Excel) Add(o wire.Office) error {
	if e.closed {
		return errClosed
	}
	if e.officeRow >= excelize.TotalRows {
		return errors.New("listfile: more offices than an Excel sheet holds")
	}
	e.officeRow++
	if err := setRow(e.offices, e.officeRow, officeColumns, &o, e.row); err != nil {
		return err
	}
	for i := range o.Company.Members {
		if e.cut {
			return nil
		}
		if e.memberRow == e.memberMax {
			e.cut = true
			e.memberRow++
			return e.members.SetRow(cell(e.memberRow), []any{membersCutNote})
		}
		e.memberRow++
		r := memberRow{office: &o, member: &o.Company.Members[i]}
		if err := setRow(e.members, e.memberRow, memberColumns, &r, e.row); err != nil {
			return err
		}
	}
	return nil
}

func setRow[T any](sw *excelize.StreamWriter, n int, cols []column[T], v *T, row []any) error {
	row = row[:len(cols)]
	for i, c := range cols {
		row[i] = c.value(v)
	}
	return sw.SetRow(cell(n), row)
}

// cell is the first cell of row n.
func cell(n int) string { return "A" + strconv.Itoa(n) }

// Close ends both sheets, writes the workbook to w and removes the
// temporary files. It does not close w.
func (e *Excel) Close() error {
	if e.closed {
		return errClosed
	}
	e.closed = true
	err := e.offices.Flush()
	if err == nil {
		err = e.members.Flush()
	}
	if err == nil {
		err = e.f.Write(e.w)
	}
	return errors.Join(err, e.f.Close())
}

// text is s, or an empty cell for "": an empty inline string is a cell
// that is not empty to Excel (COUNTBLANK, Ctrl+arrow).
func text(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func textPtr(s *string) any {
	if s == nil {
		return nil
	}
	return text(*s)
}

// date is the date as the JSON has it; text, not an Excel date, so it
// reads the same in every locale and compares with the JSON.
func date(d *wire.Date) any {
	if d == nil || d.T.IsZero() {
		return nil
	}
	return d.T.Format(wire.DateLayout)
}

// number is a decimal as a number cell, or as text when it does not
// parse, rather than lose it.
func number(n json.Number) any {
	if n == "" {
		return nil
	}
	if f, err := strconv.ParseFloat(string(n), 64); err == nil {
		return f
	}
	return string(n)
}

func optant(s wire.Optional[wire.Simples]) any {
	if v := s.Value(); v != nil {
		return v.Optant
	}
	return nil
}

func since(s wire.Optional[wire.Simples]) any {
	if v := s.Value(); v != nil {
		return date(v.Since)
	}
	return nil
}

// join writes each item with add, ", " between; none is an empty cell.
func join[T any](items []T, add func(*strings.Builder, T)) any {
	if len(items) == 0 {
		return nil
	}
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		add(&b, it)
	}
	return b.String()
}
