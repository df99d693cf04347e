package importer

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zip"
)

// kind is what a dump file holds.
type kind int

const (
	kindUnknown kind = iota
	kindCompanies
	kindOffices
	kindMembers
	kindSimples
	kindActivities
	kindReasons
	kindMunicipalities
	kindNatures
	kindCountries
	kindRoles
)

func (k kind) String() string {
	return [...]string{"unknown", "Empresas", "Estabelecimentos", "Socios", "Simples", "Cnaes", "Motivos", "Municipios", "Naturezas", "Paises", "Qualificacoes"}[k]
}

// columns is the number of fields a row of each kind has.
func (k kind) columns() int {
	switch k {
	case kindCompanies, kindSimples:
		return 7
	case kindOffices:
		return 30
	case kindMembers:
		return 11
	default:
		return 2
	}
}

func (k kind) codeTable() bool { return k >= kindActivities }

// namePrefixes recognize a file by a dot-separated token of its name: the
// ZIP names (Estabelecimentos3.zip) and the member names inside them
// (K3241.K03200Y0.D61108.ESTABELE, F.K03200$Z.D61108.CNAECSV).
var namePrefixes = []struct {
	prefix string
	kind   kind
}{
	{"EMPRE", kindCompanies},
	{"ESTABELE", kindOffices},
	{"SOCIO", kindMembers},
	{"SIMPLES", kindSimples},
	{"CNAE", kindActivities},
	{"MOTI", kindReasons},
	{"MUNIC", kindMunicipalities},
	{"NATJU", kindNatures},
	{"NATUREZA", kindNatures},
	{"PAIS", kindCountries},
	{"QUALS", kindRoles},
	{"QUALIFICA", kindRoles},
}

// kindOf identifies a dump file by its name; the mapping tables that may sit
// beside the ZIPs (TABMUN.CSV, paises-m49.csv) are not dump files.
func kindOf(name string) kind {
	base := strings.ToUpper(filepath.Base(name))
	if isMappingFile(base) {
		return kindUnknown
	}
	for _, tok := range strings.Split(base, ".") {
		for _, p := range namePrefixes {
			if strings.HasPrefix(tok, p.prefix) {
				return p.kind
			}
		}
	}
	return kindUnknown
}

func isMappingFile(upperBase string) bool {
	return strings.Contains(upperBase, "TABMUN") || strings.Contains(upperBase, "M49") || upperBase == "PAIS.CSV"
}

// source is one file of the dump: a ZIP member or an extracted file.
type source struct {
	name    string // shown in messages: the ZIP's name, or the file's
	path    string
	member  string // member name inside the ZIP; empty for an extracted file
	kind    kind
	size    int64 // uncompressed bytes
	modTime time.Time
}

// open returns the decompressed content; bytes read are added to counter.
func (s source) open(counter *atomic.Int64) (io.ReadCloser, error) {
	if s.member == "" {
		f, err := os.Open(s.path)
		if err != nil {
			return nil, err
		}
		return &countingReader{r: f, c: f, n: counter}, nil
	}
	z, err := zip.OpenReader(s.path)
	if err != nil {
		return nil, fmt.Errorf("not a readable ZIP file (truncated or corrupt?): %w", err)
	}
	for _, f := range z.File {
		if f.Name == s.member {
			r, err := f.Open()
			if err != nil {
				_ = z.Close()
				return nil, fmt.Errorf("open ZIP member %s: %w", f.Name, err)
			}
			return &countingReader{r: r, c: multiCloser{r, z}, n: counter}, nil
		}
	}
	_ = z.Close()
	return nil, fmt.Errorf("ZIP member %s disappeared", s.member)
}

type multiCloser []io.Closer

func (m multiCloser) Close() error {
	var errs []error
	for _, c := range m {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

type countingReader struct {
	r io.Reader
	c io.Closer
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingReader) Close() error { return c.c.Close() }

// discovery is what the given paths hold.
type discovery struct {
	sources        []source
	municipalities string // a TABMUN file found beside the ZIPs
	countries      string // an RFB->M49 table found beside the ZIPs
	skipped        []string
}

// discover expands folders and ZIPs into the dump's files. A folder's ZIPs
// are taken when it has any; otherwise its extracted member files.
func discover(paths []string) (discovery, error) {
	var d discovery
	if len(paths) == 0 {
		return d, errors.New("no dump given: pass a folder of the RFB ZIPs, ZIP files or extracted files")
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return d, err
		}
		if !st.IsDir() {
			if err := d.addFile(p); err != nil {
				return d, err
			}
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return d, err
		}
		var zips, others []string
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			full := filepath.Join(p, e.Name())
			upper := strings.ToUpper(e.Name())
			switch {
			case strings.Contains(upper, "TABMUN"):
				d.municipalities = full
			case strings.Contains(upper, "M49") || upper == "PAIS.CSV":
				d.countries = full
			case strings.HasSuffix(upper, ".ZIP"):
				zips = append(zips, full)
			default:
				others = append(others, full)
			}
		}
		if len(zips) == 0 {
			zips = others
		}
		for _, f := range zips {
			if err := d.addFile(f); err != nil {
				return d, err
			}
		}
	}
	if len(d.sources) == 0 {
		return d, fmt.Errorf("no RFB dump files (Empresas*, Estabelecimentos*, Socios*, Simples, Cnaes, ...) found in %s", strings.Join(paths, ", "))
	}
	sort.SliceStable(d.sources, func(i, j int) bool { return d.sources[i].name < d.sources[j].name })
	return d, nil
}

// complete refuses a dump without one of the four registry kinds: its
// snapshot would replace the served registry with companies but no
// offices, or offices but no members (a single ZIP given by mistake).
// Missing parts of a kind are not detected here.
func (d *discovery) complete() error {
	have := map[kind]bool{}
	for _, s := range d.sources {
		have[s.kind] = true
	}
	var missing []string
	for _, k := range []kind{kindCompanies, kindOffices, kindMembers, kindSimples} {
		if !have[k] {
			missing = append(missing, k.String())
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("the dump has no %s files: its snapshot would replace the served registry with part of it; "+
		"give the month's folder of the Receita's ZIPs (cnpjgraph download fetches it)", strings.Join(missing, ", "))
}

func (d *discovery) addFile(path string) error {
	base := filepath.Base(path)
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !isZip(path) {
		k := kindOf(base)
		if k == kindUnknown {
			d.skipped = append(d.skipped, base)
			return nil
		}
		d.sources = append(d.sources, source{name: base, path: path, kind: k, size: st.Size(), modTime: st.ModTime()})
		return nil
	}
	z, err := zip.OpenReader(path)
	if err != nil {
		return fmt.Errorf("%s: not a readable ZIP file (truncated or corrupt?): %w", base, err)
	}
	defer func() { _ = z.Close() }()
	var members []*zip.File
	for _, f := range z.File {
		if !f.FileInfo().IsDir() {
			members = append(members, f)
		}
	}
	for _, f := range members {
		k := kindOf(base)
		if k == kindUnknown {
			k = kindOf(f.Name)
		}
		if k == kindUnknown {
			d.skipped = append(d.skipped, base+":"+f.Name)
			continue
		}
		name := base
		if len(members) > 1 {
			name = base + ":" + f.Name
		}
		d.sources = append(d.sources, source{name: name, path: path, member: f.Name, kind: k,
			size: int64(f.UncompressedSize64), modTime: f.Modified})
	}
	return nil
}

// isZip tells a ZIP by its name or, for odd names, its magic number.
func isZip(path string) bool {
	if strings.EqualFold(filepath.Ext(path), ".zip") {
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == "PK\x03\x04"
}

var monthPattern = regexp.MustCompile(`^((?:19|20)\d\d)-(0[1-9]|1[0-2])$`)

// dumpMonth finds a YYYY-MM folder among the paths' components (the share
// publishes one folder per month).
func dumpMonth(paths []string) string {
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			abs = p
		}
		for _, part := range strings.Split(filepath.ToSlash(abs), "/") {
			if monthPattern.MatchString(part) {
				return part
			}
		}
	}
	return ""
}

// newest is the latest modification time among the sources.
func newest(sources []source) time.Time {
	var t time.Time
	for _, s := range sources {
		if s.modTime.After(t) {
			t = s.modTime
		}
	}
	return t
}
