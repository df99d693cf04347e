package documents

import (
	"io"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
)

// Page geometry of every certificate, in millimetres (A4 portrait).
const (
	pageW        = 210.0
	pageH        = 297.0
	margin       = 10.0
	contentW     = pageW - 2*margin
	footerH      = 12.0
	pageBottom   = pageH - margin - footerH
	labelSize    = 6.0
	valueSize    = 8.5
	lineH        = 4.0
	labelH       = 3.2
	boxPad       = 1.2
	fontFamily   = "go"
	footerFamily = "go"
	// maxRowLines is about what a page holds below its heading.
	maxRowLines = 59 // (pageBottom - margin - 20 - labelH - 2*boxPad) / lineH
)

// sheet is one PDF being drawn: fpdf with the embedded fonts, the running
// footer and the box primitives the Receita's layouts are made of.
type sheet struct {
	pdf *fpdf.Fpdf
}

// newSheet starts an A4 document. The Go fonts are embedded from the Go
// module cache at build time: they carry the Latin-1 accents Portuguese
// needs, and no font file has to be installed where the binary runs.
func newSheet(title string, issued, updated time.Time) *sheet {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.AddUTF8FontFromBytes(fontFamily, "", goregular.TTF)
	pdf.AddUTF8FontFromBytes(fontFamily, "B", gobold.TTF)
	pdf.SetTitle(title, true)
	pdf.SetAuthor("cnpjgraph", true)
	pdf.SetCreator("cnpjgraph", true)
	// Fixed dates and sorted catalogs make the same data render to the same
	// bytes, which keeps the output cacheable and testable.
	pdf.SetCreationDate(issued)
	pdf.SetModificationDate(issued)
	pdf.SetCatalogSort(true)
	pdf.SetMargins(margin, margin, margin)
	pdf.SetAutoPageBreak(false, margin)
	pdf.AliasNbPages("{nb}")
	pdf.SetFooterFunc(func() {
		pdf.SetXY(margin, pageH-margin-footerH+4)
		pdf.SetFont(footerFamily, "", 6.5)
		pdf.SetTextColor(60, 60, 60)
		pdf.CellFormat(contentW*0.75, 3.5, dataDate(updated)+" "+formatIssued(issued), "", 0, "L", false, 0, "")
		pdf.CellFormat(contentW*0.25, 3.5, "Página "+itoa(pdf.PageNo())+" de {nb}", "", 1, "R", false, 0, "")
		pdf.SetX(margin)
		pdf.CellFormat(contentW, 3.5, "Documento gerado a partir dos dados abertos do CNPJ; não substitui o comprovante emitido pela Receita Federal.", "", 0, "L", false, 0, "")
		pdf.SetTextColor(0, 0, 0)
	})
	return &sheet{pdf: pdf}
}

func (s *sheet) output(w io.Writer) error {
	if err := s.pdf.Error(); err != nil {
		return err
	}
	return s.pdf.Output(w)
}

// page starts a new page under the two-line heading of the Receita's forms.
func (s *sheet) page(heading string) {
	p := s.pdf
	p.AddPage()
	p.SetFont(fontFamily, "B", 11)
	p.CellFormat(contentW, 5.5, "REPÚBLICA FEDERATIVA DO BRASIL", "", 1, "C", false, 0, "")
	p.SetFont(fontFamily, "B", 10)
	p.CellFormat(contentW, 5, "CADASTRO NACIONAL DA PESSOA JURÍDICA", "", 1, "C", false, 0, "")
	if heading != "" {
		p.SetFont(fontFamily, "", 9)
		p.CellFormat(contentW, 5, heading, "", 1, "C", false, 0, "")
	}
	p.Ln(2)
}

// field is one boxed field: a small caption over its value.
type field struct {
	label string
	value string
	width float64 // millimetres; 0 in the last field of a row: the rest
	bold  bool    // the value in bold
	align string  // "" left, "C" centred
}

// lines wraps a value to the inside width of its box, keeping the value's
// own line breaks.
func (s *sheet) lines(f field) []string {
	s.pdf.SetFont(fontFamily, boldStyle(f.bold), valueSize)
	var out []string
	for _, para := range strings.Split(f.value, "\n") {
		if para == "" {
			out = append(out, "")
			continue
		}
		out = append(out, s.pdf.SplitText(para, f.width-2*boxPad)...)
	}
	return out
}

func boldStyle(bold bool) string {
	if bold {
		return "B"
	}
	return ""
}

// row draws fields side by side as boxes of one height, the tallest's. A
// row that does not fit below y starts a new page; a single field taller
// than a page flows over pages with its caption repeated.
func (s *sheet) row(newPage func(), fields ...field) {
	used := 0.0
	for i := range fields {
		if fields[i].width == 0 {
			fields[i].width = contentW - used
		}
		used += fields[i].width
	}
	wrapped := make([][]string, len(fields))
	n := 1
	for i, f := range fields {
		wrapped[i] = s.lines(f)
		n = max(n, len(wrapped[i]))
	}
	for first := true; ; first = false {
		room := int((pageBottom - s.pdf.GetY() - labelH - 2*boxPad) / lineH)
		// A row that would fit on a fresh page is not split.
		if room < 1 || (first && room < n && n <= maxRowLines) {
			newPage()
			continue
		}
		take := min(n, room)
		s.boxes(fields, wrapped, take, !first)
		if take == n {
			return
		}
		for i := range wrapped {
			wrapped[i] = wrapped[i][min(take, len(wrapped[i])):]
		}
		n -= take
		newPage()
	}
}

// boxes draws one band of a row: take lines of every field.
func (s *sheet) boxes(fields []field, wrapped [][]string, take int, continued bool) {
	p := s.pdf
	x, y := margin, p.GetY()
	h := labelH + float64(take)*lineH + 2*boxPad
	for i, f := range fields {
		p.SetLineWidth(0.25)
		p.Rect(x, y, f.width, h, "D")
		p.SetXY(x+boxPad, y+boxPad)
		p.SetFont(fontFamily, "", labelSize)
		label := f.label
		if continued {
			label += " (continuação)"
		}
		p.CellFormat(f.width-2*boxPad, labelH, label, "", 2, "L", false, 0, "")
		p.SetFont(fontFamily, boldStyle(f.bold), valueSize)
		for j := 0; j < take && j < len(wrapped[i]); j++ {
			p.SetX(x + boxPad)
			p.CellFormat(f.width-2*boxPad, lineH, wrapped[i][j], "", 2, f.align, false, 0, "")
		}
		x += f.width
	}
	p.SetXY(margin, y+h+0.8)
}

// text writes a paragraph across the page.
func (s *sheet) text(size float64, style, align, txt string) {
	s.pdf.SetFont(fontFamily, style, size)
	s.pdf.SetX(margin)
	s.pdf.MultiCell(contentW, size*0.5, txt, "", align, false)
}

// column of a table: its caption and width.
type column struct {
	label string
	width float64
}

// table draws rows under a header row; a row that does not fit starts a
// new page (by newPage) and the header is drawn again, so a company with
// hundreds of members flows over as many pages as it needs.
func (s *sheet) table(newPage func(), cols []column, rows [][]string) {
	p := s.pdf
	header := func() {
		p.SetFont(fontFamily, "B", 7)
		p.SetFillColor(230, 230, 230)
		y := p.GetY()
		x := margin
		for _, c := range cols {
			p.Rect(x, y, c.width, 6, "FD")
			p.SetXY(x+boxPad, y+1)
			p.CellFormat(c.width-2*boxPad, 4, c.label, "", 0, "L", false, 0, "")
			x += c.width
		}
		p.SetXY(margin, y+6)
	}
	header()
	p.SetFont(fontFamily, "", 7.5)
	for _, r := range rows {
		wrapped := make([][]string, len(cols))
		n := 1
		for i, c := range cols {
			wrapped[i] = p.SplitText(r[i], c.width-2*boxPad)
			n = max(n, len(wrapped[i]))
		}
		h := float64(n)*3.6 + 2*boxPad
		if p.GetY()+h > pageBottom {
			newPage()
			header()
			p.SetFont(fontFamily, "", 7.5)
		}
		x, y := margin, p.GetY()
		for i, c := range cols {
			p.Rect(x, y, c.width, h, "D")
			for j, line := range wrapped[i] {
				p.SetXY(x+boxPad, y+boxPad+float64(j)*3.6)
				p.CellFormat(c.width-2*boxPad, 3.6, line, "", 0, "L", false, 0, "")
			}
			x += c.width
		}
		p.SetXY(margin, y+h)
	}
	p.Ln(2)
}
