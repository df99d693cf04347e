// Package generator writes a synthetic Receita Federal CNPJ dump in exactly the
// published format (see shared/docs/rfb-format.md): 37 ZIPs with one
// ISO-8859-1, fully quoted, ';'-separated member each, plus a matching SIAFI
// TABMUN.CSV and a paises-m49.csv. It exists so that the importer, the
// benchmarks and `make run` have realistic data of any size without the 6 GB
// download.
//
// Everything about company i is a pure function of (Seed, i): each file draws
// from its own PCG stream seeded with (Seed, file, i). So every ZIP part can be
// written independently and in parallel, nothing is held in memory, and a
// partner that is itself a company can name the head office CNPJ and razão
// social of company j by recomputing them. Same seed, byte-identical output.
//
// Proportions (measured on 1,000,000 companies: 1,236,972 offices, 520,405
// partners, 806,454 Simples rows; offices per company ~1.24):
//   - natureza: 2135 empresário individual ~46%, 2062 limitada ~33%, 3999
//     associação 6%, EIRELI 3%, 4120 produtor rural 2%, S.A. ~2%, public
//     bodies (1xxx, with ente federativo) ~1.4%, the rest spread.
//   - offices: ~91% only the head office, ~9% 2 to 5, and "big" companies
//     (3, plus one per further 250,000 companies, from 1,000 companies on; one
//     from 100) with min(1000, N/10) + up to min(4000, N/100) offices each.
//     CompaniesForOffices inverts this for benchmarks sized in offices.
//   - one head office in ~2,000 (and company 3 always) has order 0002 and a
//     closed 0001 branch; ~3% of roots (and company 2) are alphanumeric, with
//     base-36 branch orders and start dates from July 2026.
//   - office status: 02 Ativa ~55%, 08 Baixada ~33%, 04 Inapta ~9%, 03 ~2%,
//     01 ~1%; motivo 00 when active, unknown motivo 32 on ~1% of the others;
//     ~0.3% of dates null as "", "0" or "00000000".
//   - ~0.3% of offices abroad (UF EX, município 9707, país, city abroad);
//     ~0.05% use a município code in no table, some use 1182, absent from TABMUN.
//   - partners: ~0.42 per office: none for empresários individuais and rural
//     producers, 0-3 for most others, one company in 1,000 (and every big one)
//     with 12 to 60. Of partners ~74% natural persons, 13% natural persons of
//     a shared pool (the same name and masked CPF in several companies), 6%
//     legal persons (the head office of another company of the dump), 2%
//     foreign companies (identificador 3, qualificação 37), 2% foreign
//     individuals (identificador 2, qualificação 38), 0.5% legacy qualificação
//     36, 2% minors represented by a parent; ~7% have a representative.
//   - Simples: ~0.65 rows per office: S since a date (open), N with both dates
//     (excluded), MEI S/N for empresários individuais, ~2% empty option.
//   - unknown codes: ~0.1% CNAE, ~0.1% países, motivo 32, qualificação 36.
package generator

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Options configures Generate.
type Options struct {
	Companies int    // number of companies (roots)
	Out       string // output directory, created if missing
	Seed      int64  // same seed -> byte-identical output
	Parts     int    // ZIP parts per big group (Empresas0..N-1 etc.); 0 means 10
}

// Summary tells what Generate wrote.
type Summary struct {
	Companies, Offices, Members, Simples int
	DumpDate                             time.Time // the reference date the dump pretends to be from
	Files                                []string  // paths of every file written, sorted
	Samples                              []SampleOffice
}

// SampleOffice fully describes one generated office, its company, partners and
// Simples row, as written (decoded from Latin-1 to UTF-8), so a round-trip test
// can compare the import with the source.
type SampleOffice struct {
	Why          string // which feature this sample illustrates
	TaxID        string
	Root         string
	Head         bool
	Name         string     // razão social
	Alias        string     // nome fantasia, "" if none
	Status       string     // situação cadastral code, e.g. "02"
	Municipality string     // RFB code as written
	IBGE         string     // IBGE code of the municipality per TABMUN, "" if unmapped
	Company      []string   // the Empresas row (7 fields)
	Office       []string   // the Estabelecimentos row (30 fields)
	Members      [][]string // the company's Socios rows (11 fields each)
	Simples      []string   // the Simples row (7 fields), nil if none
}

// CompaniesForOffices estimates the Companies giving about offices
// establishments (within ~1% from 100,000 offices on), for benchmarks that
// are sized in establishments like the real dump's files.
func CompaniesForOffices(offices int) int {
	return max(1, int(float64(offices)/1.2404))
}

// Generate writes the dump described by opts into opts.Out. Parts is capped
// at Companies, so a tiny dump has fewer parts.
func Generate(opts Options) (Summary, error) {
	if opts.Companies < 1 {
		return Summary{}, errors.New("generator: Companies must be at least 1")
	}
	if opts.Companies > 90_000_000 {
		return Summary{}, errors.New("generator: Companies must be at most 90,000,000 (8-digit roots)")
	}
	if opts.Out == "" {
		return Summary{}, errors.New("generator: Out is required")
	}
	if opts.Parts <= 0 {
		opts.Parts = 10
	}
	if opts.Parts > opts.Companies {
		opts.Parts = opts.Companies
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return Summary{}, err
	}
	g := newGen(opts)

	type job struct {
		name, member string // file name; ZIP member name, "" for a plain file
		rows         *int   // Summary counter to add the rows to
		cost         int    // rough size, to schedule the largest first
		write        func(w io.Writer) (int, error)
	}
	var sum Summary
	var mu sync.Mutex
	var jobs []job
	add := func(name, member string, cost int, rows *int, write func(w io.Writer) (int, error)) {
		jobs = append(jobs, job{name: name, member: member, rows: rows, cost: cost, write: write})
	}
	tag := g.dumpTag
	for p := 0; p < opts.Parts; p++ {
		lo, hi := g.partRange(p)
		add(fmt.Sprintf("Empresas%d.zip", p), fmt.Sprintf("K3241.K03200Y%d.%s.EMPRECSV", p, tag), (hi-lo)*2, &sum.Companies,
			func(w io.Writer) (int, error) { return g.writeEmpresas(w, lo, hi) })
		add(fmt.Sprintf("Estabelecimentos%d.zip", p), fmt.Sprintf("K3241.K03200Y%d.%s.ESTABELE", p, tag), g.officeCost(lo, hi)*6, &sum.Offices,
			func(w io.Writer) (int, error) { return g.writeEstabelecimentos(w, lo, hi) })
		add(fmt.Sprintf("Socios%d.zip", p), fmt.Sprintf("K3241.K03200Y%d.%s.SOCIOCSV", p, tag), (hi-lo)*2, &sum.Members,
			func(w io.Writer) (int, error) { return g.writeSocios(w, lo, hi) })
	}
	add("Simples.zip", "F.K03200$W.SIMPLES.CSV."+tag, opts.Companies*2, &sum.Simples,
		func(w io.Writer) (int, error) { return g.writeSimples(w, 0, opts.Companies) })
	tables := []struct {
		zip, ext string
		write    func(w io.Writer) (int, error)
	}{
		{"Cnaes.zip", "CNAECSV", func(w io.Writer) (int, error) { return writeCodes(w, cnaes) }},
		{"Motivos.zip", "MOTICSV", func(w io.Writer) (int, error) { return writeCodes(w, motivos) }},
		{"Municipios.zip", "MUNICCSV", writeMunicipios},
		{"Naturezas.zip", "NATJUCSV", func(w io.Writer) (int, error) { return writeCodes(w, naturezas) }},
		{"Paises.zip", "PAISCSV", writePaises},
		{"Qualificacoes.zip", "QUALSCSV", func(w io.Writer) (int, error) { return writeCodes(w, qualificacoes) }},
	}
	for _, t := range tables {
		add(t.zip, "F.K03200$Z."+tag+"."+t.ext, 1, nil, t.write)
	}
	add("TABMUN.CSV", "", 1, nil, writeTabmun)
	add("paises-m49.csv", "", 1, nil, writePaisesM49)

	// Largest first, so the long Estabelecimentos0 does not start last.
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].cost > jobs[b].cost })
	work := make(chan job)
	var wg sync.WaitGroup
	var firstErr error
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				path := filepath.Join(opts.Out, j.name)
				n, err := g.writeFile(path, j.member, j.write)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("generator: %s: %w", j.name, err)
				}
				if j.rows != nil {
					*j.rows += n
				}
				sum.Files = append(sum.Files, path)
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return Summary{}, firstErr
	}
	sort.Strings(sum.Files)
	sum.DumpDate = g.dump
	sum.Samples = g.samples()
	return sum, nil
}

// writeFile creates path and streams write into it, inside a ZIP holding the
// single member named member unless member is "".
func (g *gen) writeFile(path, member string, write func(io.Writer) (int, error)) (n int, err error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if member == "" {
		if n, err = write(bw); err != nil {
			return n, err
		}
		return n, bw.Flush()
	}
	zw := zip.NewWriter(bw)
	// BestSpeed: the dump is large and the generator must stay fast; the
	// format (Deflate) is what matters, not the ratio.
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestSpeed)
	})
	mw, err := zw.CreateHeader(&zip.FileHeader{Name: member, Method: zip.Deflate, Modified: g.modified})
	if err != nil {
		return 0, err
	}
	mbw := bufio.NewWriterSize(mw, 256<<10)
	if n, err = write(mbw); err != nil {
		return n, err
	}
	if err = mbw.Flush(); err != nil {
		return n, err
	}
	if err = zw.Close(); err != nil {
		return n, err
	}
	return n, bw.Flush()
}

// rec assembles one dump row: every field double-quoted, ';' between, LF at
// the end. With keep set it also records the fields (for samples).
type rec struct {
	buf    []byte
	n      int
	keep   bool
	fields []string   // fields of the row being kept
	rows   [][]string // rows kept so far
}

func (r *rec) f(s string) {
	if r.n > 0 {
		r.buf = append(r.buf, ';')
	}
	r.buf = append(r.buf, '"')
	r.buf = append(r.buf, s...)
	r.buf = append(r.buf, '"')
	r.n++
	if r.keep {
		r.fields = append(r.fields, fromLatin1(s))
	}
}

func (r *rec) fb(b []byte) {
	if r.n > 0 {
		r.buf = append(r.buf, ';')
	}
	r.buf = append(r.buf, '"')
	r.buf = append(r.buf, b...)
	r.buf = append(r.buf, '"')
	r.n++
	if r.keep {
		r.fields = append(r.fields, fromLatin1(string(b)))
	}
}

func (r *rec) end() {
	r.buf = append(r.buf, '\n')
	r.n = 0
	if r.keep {
		r.rows = append(r.rows, r.fields)
		r.fields = nil
	}
}

// flush writes the buffered rows once they exceed a threshold.
func (r *rec) flush(w io.Writer, force bool) error {
	if len(r.buf) < 64<<10 && !force {
		return nil
	}
	_, err := w.Write(r.buf)
	r.buf = r.buf[:0]
	return err
}

func writeCodes(w io.Writer, codes []code) (int, error) {
	var r rec
	for _, c := range codes {
		r.f(c.code)
		r.f(latin1(c.desc))
		r.end()
	}
	return len(codes), r.flush(w, true)
}

func writeMunicipios(w io.Writer) (int, error) {
	var r rec
	for _, m := range municipios {
		r.f(m.rfb)
		r.f(m.name)
		r.end()
	}
	return len(municipios), r.flush(w, true)
}

func writePaises(w io.Writer) (int, error) {
	var r rec
	for _, p := range paises {
		r.f(p.code)
		r.f(latin1(p.name))
		r.end()
	}
	return len(paises), r.flush(w, true)
}

// writeTabmun writes the SIAFI table: siafi;cnpj;name padded to 45;uf;ibge,
// Latin-1, CRLF, no quotes, only municipalities that have an IBGE code and
// are in TABMUN.
func writeTabmun(w io.Writer) (int, error) {
	var b []byte
	n := 0
	for _, m := range municipios {
		if !m.tabmun {
			continue
		}
		b = fmt.Appendf(b, "%s;%s;%-45s;%s;%s\r\n", m.rfb, prefeituraCNPJ(m.rfb), latin1(m.name), m.uf, m.ibge)
		n++
	}
	_, err := w.Write(b)
	return n, err
}

// writePaisesM49 writes the checked extract format: header, UTF-8.
func writePaisesM49(w io.Writer) (int, error) {
	b := []byte("rfb_codigo;nome;m49;iso_alpha3\n")
	for _, p := range paises {
		b = fmt.Appendf(b, "%s;%s;%d;%s\n", p.code, p.name, p.m49, p.iso3)
	}
	_, err := w.Write(b)
	return len(paises), err
}

// itoaPad appends n zero-padded to width digits.
func itoaPad(b []byte, n, width int) []byte {
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], int64(n), 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}
