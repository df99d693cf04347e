package importer

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tabmunURL is where operators get the SIAFI municipality table.
const tabmunURL = "https://www.tesourotransparente.gov.br/ckan/dataset/abb968cb-3710-4f85-89cf-875c91b9c7f6/resource/eebb3bc6-9eea-4496-8bcf-304f33155282/download/TABMUN.CSV"

// countriesURL is the Comex Stat country table (CO_PAIS;CO_PAIS_ISON3;...).
const countriesURL = "https://balanca.economia.gov.br/balanca/bd/tabelas/PAIS.csv"

// municipality is a TABMUN row.
type municipality struct {
	name  string
	state string
	ibge  int
}

// readTABMUN reads the Tesouro Nacional SIAFI table
// (siafi;cnpj;name;uf;ibge, Latin-1, no header), keyed by the 4-digit code.
func readTABMUN(path string) (map[string]municipality, error) {
	if path == "" {
		return nil, fmt.Errorf("the municipality table is required to map RFB municipality codes to IBGE: pass --municipalities PATH to a TABMUN.CSV (Tesouro Nacional SIAFI table, %s)", tabmunURL)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("municipality table: %w (get TABMUN.CSV from %s)", err, tabmunURL)
	}
	defer func() { _ = f.Close() }()
	out := make(map[string]municipality, 6000)
	rr := newRecordReader(f)
	for {
		rec, err := rr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("municipality table %s: %w", path, err)
		}
		if len(rec) < 5 {
			return nil, fmt.Errorf("municipality table %s: line %d: expected 5 columns (siafi;cnpj;name;uf;ibge), got %d", path, rr.Line(), len(rec))
		}
		code := padCode(string(bytes.TrimSpace(rec[0])), 4)
		ibge, err := strconv.Atoi(string(bytes.TrimSpace(rec[4])))
		if err != nil {
			continue // exterior and retired codes carry no IBGE code
		}
		out[code] = municipality{name: string(bytes.TrimSpace(rec[2])), state: string(bytes.TrimSpace(rec[3])), ibge: ibge}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("municipality table %s has no rows", path)
	}
	return out, nil
}

// country is an RFB country mapped to UN M49.
type country struct {
	name string
	m49  int
}

// readCountries reads an RFB->M49 table: the layout of paises-m49.csv
// (rfb_codigo;nome;m49;...) or Comex Stat's PAIS.csv (CO_PAIS;CO_PAIS_ISON3;
// ...;NO_PAIS). Without a file only Brasil is mapped. Keys are the RFB code
// without leading zeros.
func readCountries(path string) (map[string]country, error) {
	out := map[string]country{"105": {name: "BRASIL", m49: 76}}
	if path == "" {
		return out, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("country table: %w (get PAIS.csv from %s)", err, countriesURL)
	}
	raw = bytes.TrimPrefix(raw, []byte{0xEF, 0xBB, 0xBF})
	if !utf8.Valid(raw) {
		raw = latin1ToUTF8(raw)
	}
	r := csv.NewReader(bytes.NewReader(raw))
	r.Comma = ';'
	r.LazyQuotes = true
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("country table %s: %w", path, err)
	}
	col := func(names ...string) int {
		for i, h := range header {
			for _, n := range names {
				if strings.EqualFold(strings.TrimSpace(h), n) {
					return i
				}
			}
		}
		return -1
	}
	codeCol, nameCol, m49Col := col("rfb_codigo", "CO_PAIS"), col("nome", "NO_PAIS"), col("m49", "CO_PAIS_ISON3")
	if codeCol < 0 || m49Col < 0 {
		return nil, fmt.Errorf("country table %s: expected a header with rfb_codigo and m49 (or CO_PAIS and CO_PAIS_ISON3)", path)
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("country table %s: %w", path, err)
		}
		if codeCol >= len(rec) || m49Col >= len(rec) {
			continue
		}
		m49, err := strconv.Atoi(strings.TrimSpace(rec[m49Col]))
		if err != nil || m49 <= 0 {
			continue // placeholder codes have no M49 id
		}
		c := country{m49: m49}
		if nameCol >= 0 && nameCol < len(rec) {
			c.name = strings.TrimSpace(rec[nameCol])
		}
		out[countryKey(rec[codeCol])] = c
	}
	return out, nil
}

func countryKey(code string) string {
	k := strings.TrimLeft(strings.TrimSpace(code), "0")
	if k == "" {
		return "0"
	}
	return k
}

func padCode(s string, n int) string {
	if len(s) >= n || !allDigits([]byte(s)) {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}

func latin1ToUTF8(b []byte) []byte {
	rr := recordReader{}
	rr.appendLatin1(b)
	return rr.buf
}

// codeTables holds the dump's small tables, read before the big files.
type codeTables map[kind]map[string]string

// readCodes reads a 2-column code table (code;description).
func readCodes(r io.Reader, into map[string]string) (rows, rejected int, err error) {
	rr := newRecordReader(r)
	for {
		rec, err := rr.Next()
		if errors.Is(err, io.EOF) {
			return rows, rejected, nil
		}
		if err != nil {
			return rows, rejected, err
		}
		rows++
		if len(rec) != 2 || len(bytes.TrimSpace(rec[0])) == 0 {
			rejected++
			continue
		}
		into[string(bytes.TrimSpace(rec[0]))] = string(bytes.TrimSpace(rec[1]))
	}
}

// writeCodes COPYs a code table; municipalities and countries are joined
// with their mapping tables on the code (never on names), and mapped codes
// missing from the dump's own table are added with the mapping's name.
func writeCodes(k kind, codes map[string]string, tabmun map[string]municipality, countries map[string]country) func(*copyWriter) error {
	return func(w *copyWriter) error {
		keys := make([]string, 0, len(codes))
		for c := range codes {
			keys = append(keys, c)
		}
		switch k {
		case kindMunicipalities:
			seen := make(map[string]bool, len(codes))
			for _, c := range keys {
				seen[padCode(c, 4)] = true
			}
			for c, m := range tabmun {
				if !seen[c] {
					codes[c] = m.name
					keys = append(keys, c)
				}
			}
		case kindCountries:
			seen := make(map[string]bool, len(codes))
			for _, c := range keys {
				seen[countryKey(c)] = true
			}
			for c, m := range countries {
				if !seen[c] {
					code := padCode(c, 3)
					codes[code] = m.name
					keys = append(keys, code)
				}
			}
		}
		sort.Strings(keys)
		for _, c := range keys {
			w.str([]byte(c))
			w.text([]byte(codes[c]))
			switch k {
			case kindMunicipalities:
				if m, ok := tabmun[padCode(c, 4)]; ok {
					w.raw(strconv.Itoa(m.ibge))
					w.text([]byte(m.state))
				} else {
					w.null()
					w.null()
				}
			case kindCountries:
				if m, ok := countries[countryKey(c)]; ok {
					w.raw(strconv.Itoa(m.m49))
				} else {
					w.null()
				}
			}
			if err := w.end(); err != nil {
				return err
			}
		}
		return nil
	}
}

// codeTableNames maps a code table kind to its staging table and columns.
func codeTable(k kind) (string, []string, error) {
	switch k {
	case kindActivities:
		return "activities", []string{"code", "text"}, nil
	case kindNatures:
		return "natures", []string{"code", "text"}, nil
	case kindReasons:
		return "reasons", []string{"code", "text"}, nil
	case kindRoles:
		return "roles", []string{"code", "text"}, nil
	case kindCountries:
		return "countries", []string{"code", "text", "m49"}, nil
	case kindMunicipalities:
		return "municipalities", []string{"code", "text", "ibge", "state"}, nil
	}
	return "", nil, errors.New("not a code table")
}
