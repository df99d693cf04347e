package rest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// seatsPath finds the shared IBGE seats file the tests read in place (never
// copied into the repository): MUNICIPALITY_COORDINATES when set, else the
// project's shared data folder.
func seatsPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("MUNICIPALITY_COORDINATES"); p != "" {
		return p
	}
	return filepath.Join(dbtest.SharedDir(t), "data", "municipios", "municipios-coordenadas.csv")
}

// fixtureDB is a throwaway database with the fixture loaded.
func fixtureDB(t testing.TB) *sqlx.DB {
	t.Helper()
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	return d
}

// routerWith is a router over d with the tests' clock and extra deps.
// setup adjusts the service's options and the router's dependencies.
type setup func(*service.Options, *rest.Deps)

func routerWith(t testing.TB, d *sqlx.DB, set setup) *server {
	t.Helper()
	store := db.NewStore(d, db.StoreOptions{})
	opts := service.Options{Now: func() time.Time { return now }}
	deps := rest.Deps{RequestTimeout: 5 * time.Second}
	if set != nil {
		set(&opts, &deps)
	}
	deps.Service = service.New(store, opts)
	return &server{h: rest.NewRouter(deps), db: d, roundTrips: &atomic.Int64{}}
}

// pdfText runs poppler's pdftotext (Debian package poppler-utils) on a PDF;
// pages end with form feeds.
func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	cmd := exec.Command("pdftotext", "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext (install poppler-utils): %v %s", err, stderr.String())
	}
	return string(out)
}

// writeArtifact saves a file under testdata/artifacts/ at the repository
// root (gitignored), for a person to look at.
func writeArtifact(t *testing.T, name string, body []byte) string {
	t.Helper()
	dir := filepath.Join("..", "testdata", "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// artifact renders the first page of a PDF to testdata/artifacts/name.png
// at the repository root (gitignored), for a person to look at.
func artifact(t *testing.T, name string, pdf []byte) {
	t.Helper()
	src := writeArtifact(t, name+".pdf", pdf)
	out, err := exec.Command("pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1", "-singlefile", src, strings.TrimSuffix(src, ".pdf")).CombinedOutput()
	if err != nil {
		t.Fatalf("pdftoppm (install poppler-utils): %v %s", err, out)
	}
}

// goldenText compares text with testdata/name.golden.txt (-update rewrites).
func goldenText(t *testing.T, name, text string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden.txt")
	if *update {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (run go test ./rest -update)", name, err)
	}
	if string(want) != text {
		t.Errorf("%s differs from %s:\n got:\n%s\nwant:\n%s", name, path, text, want)
	}
}

func TestRegistryCertificateSerpro(t *testing.T) {
	t.Parallel()
	s := routerWith(t, fixtureDB(t), nil)
	r := s.get(t, "/rfb/certificate?taxId="+dbtest.SerproBranch)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/pdf" {
		t.Errorf("Content-Type %q", ct)
	}
	if !bytes.HasPrefix(r.body, []byte("%PDF-")) {
		t.Fatalf("not a PDF: %.40q", r.body)
	}
	artifact(t, "certificate_serpro", r.body)
	text := pdfText(t, r.body)
	if pages := strings.Count(text, "\f"); pages != 2 {
		t.Errorf("%d pages, want 2: registration and members", pages)
	}
	for _, want := range []string{
		"33.683.111/0002-80", "FILIAL", "30/06/1967", "SERVICO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)",
		"REGIONAL BRASILIA-DF", "DEMAIS", "62.04-0-00 - Consultoria em tecnologia da informação",
		"63.11-9-00 - Tratamento de dados", "201-1 - Empresa Pública", "AVENIDA L2 SGAN", "601", "MODULO G",
		"70.836-900", "ASA NORTE", "BRASILIA", "DF", "ATIVA", "22/05/2004", "R$ 1.061.004.829,23",
		"Dados de 07/12/2025.", "Emitido no dia 16/12/2025 às 21:00:00 (data e hora de Brasília).",
		"COMPROVANTE DE INSCRIÇÃO E DE SITUAÇÃO CADASTRAL", "QUADRO DE SÓCIOS E ADMINISTRADORES",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("certificate lacks %q", want)
		}
	}
	for _, m := range dbtest.SerproMembers {
		if !strings.Contains(text, m.Person.Name) {
			t.Errorf("certificate lacks member %s", m.Person.Name)
		}
	}
	for _, role := range []string{"10-Diretor", "16-Presidente", "05-Administrador"} {
		if !strings.Contains(text, role) {
			t.Errorf("certificate lacks role %s", role)
		}
	}
	goldenText(t, "certificate_serpro", text)
}

func TestRegistryCertificatePages(t *testing.T) {
	t.Parallel()
	s := routerWith(t, fixtureDB(t), nil)
	for _, c := range []struct {
		pages      string
		want, lack string
	}{
		{"REGISTRATION", "NOME EMPRESARIAL", "QUADRO DE SÓCIOS"},
		{"MEMBERS", "QUADRO DE SÓCIOS", "DATA DE ABERTURA"},
		{"MEMBERS&pages=REGISTRATION", "QUADRO DE SÓCIOS", ""},
	} {
		r := s.get(t, "/rfb/certificate?taxId="+dbtest.SerproBranch+"&pages="+c.pages)
		if r.status != 200 {
			t.Fatalf("pages=%s: %d %s", c.pages, r.status, r.body)
		}
		text := pdfText(t, r.body)
		if !strings.Contains(text, c.want) || (c.lack != "" && strings.Contains(text, c.lack)) {
			t.Errorf("pages=%s: want %q without %q:\n%s", c.pages, c.want, c.lack, text)
		}
	}
}

// TestRegistryCertificateManyMembers gives a company hundreds of members:
// the member table flows over pages, every member on one of them.
func TestRegistryCertificateManyMembers(t *testing.T) {
	t.Parallel()
	d := fixtureDB(t)
	dbtest.MustExec(t, d, `INSERT INTO cnpj.persons
		SELECT 'extra-' || i, 'NATURAL', '***' || lpad(i::text, 6, '0') || '**', 'SÓCIA ADICIONAL ' || lpad(i::text, 3, '0'), '4', NULL
		FROM generate_series(1, 340) i`)
	dbtest.MustExec(t, d, `INSERT INTO cnpj.members
		SELECT $1, 1000 + i, 'extra-' || i, CASE WHEN i % 2 = 0 THEN '49' ELSE '22' END, '2020-01-01', NULL, NULL
		FROM generate_series(1, 340) i`, dbtest.BigRoot)
	dbtest.Fold(t, d)
	s := routerWith(t, d, nil)
	r := s.get(t, "/rfb/certificate?taxId="+dbtest.BigHead+"&pages=MEMBERS")
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	artifact(t, "certificate_many_members", r.body)
	text := pdfText(t, r.body)
	pages := strings.Count(text, "\f")
	if pages < 8 {
		t.Errorf("%d pages for 400 members, want the table to flow over several", pages)
	}
	for i := 1; i <= 340; i++ {
		if name := fmt.Sprintf("SÓCIA ADICIONAL %03d", i); !strings.Contains(text, name) {
			t.Fatalf("member %s missing", name)
		}
	}
	for _, want := range []string{"SERPRO PARTICIPACOES", "MARIA REPRESENTANTE", "05-Administrador", "49-Sócio-Administrador", "22-Sócio", fmt.Sprintf("Página %d de %d", pages, pages)} {
		if !strings.Contains(text, want) {
			t.Errorf("certificate lacks %q", want)
		}
	}
}

func TestSimplesCertificate(t *testing.T) {
	t.Parallel()
	s := routerWith(t, fixtureDB(t), nil)
	r := s.get(t, "/simples/certificate?taxId="+dbtest.AlphaTaxID)
	if r.status != 200 || r.header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("status %d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	artifact(t, "simples_alpha", r.body)
	text := pdfText(t, r.body)
	for _, want := range []string{
		"12.ABC.345/01DE-35", "ALFA NUMERICA TECNOLOGIA LTDA", "NÃO optante pelo Simples Nacional",
		"Enquadrado no SIMEI desde 01/01/2021", "Opções pelo Simples Nacional em Períodos Anteriores",
		"01/03/2018", "31/12/2020", "Enquadramentos no SIMEI em Períodos Anteriores", "01/01/2015", "31/12/2016",
		"Dados de 07/12/2025.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("certificate lacks %q:\n%s", want, text)
		}
	}
	r = s.get(t, "/simples/certificate?taxId="+dbtest.SerproBranch)
	if text := pdfText(t, r.body); !strings.Contains(text, "Optante pelo Simples Nacional desde 01/01/2014") || !strings.Contains(text, "NÃO enquadrado no SIMEI") {
		t.Errorf("SERPRO's Simples certificate:\n%s", text)
	}
}

func TestCertificateErrors(t *testing.T) {
	t.Parallel()
	s := routerWith(t, fixtureDB(t), nil)
	cases := []struct {
		target      string
		status      int
		message     string
		constraints []string
	}{
		{"/rfb/certificate?taxId=" + dbtest.SerproBranch + "&pages=REGISTRATION,FOO", 400, fault.MsgValidation, []string{"pages must contain only: REGISTRATION, MEMBERS"}},
		{"/rfb/certificate", 400, fault.MsgValidation, []string{"taxId is required"}},
		{"/simples/certificate?taxId=33683111000281", 400, fault.MsgValidation, []string{"taxId must be a valid CNPJ"}},
		{"/rfb/certificate?taxId=" + dbtest.SerproHead, 404, fault.MsgTaxIDNotFound, nil},
		{"/simples/certificate?taxId=" + dbtest.SerproHead, 404, fault.MsgTaxIDNotFound, nil},
	}
	for _, c := range cases {
		r := s.get(t, c.target)
		if r.status != c.status || r.header.Get("Content-Type") != "application/json; charset=utf-8" {
			t.Errorf("%s: %d %s, want %d JSON", c.target, r.status, r.header.Get("Content-Type"), c.status)
			continue
		}
		o := r.object(t)
		if o["message"] != c.message || fmt.Sprint(o["code"]) != fmt.Sprint(c.status) {
			t.Errorf("%s: %s", c.target, r.body)
		}
		if c.constraints != nil && fmt.Sprint(o["constraints"]) != fmt.Sprint(c.constraints) {
			t.Errorf("%s: constraints %v, want %v", c.target, o["constraints"], c.constraints)
		}
	}
}

// TestCharge checks the pricing of the document routes: each priced route
// reserves its price, an unknown tax id or an invalid request costs
// nothing in the end, and a refused reservation is the one renderer's 429.
func TestCharge(t *testing.T) {
	t.Parallel()
	meter := &priceMeter{}
	s := routerWith(t, fixtureDB(t), func(o *service.Options, _ *rest.Deps) { o.Meter = meter })
	s.get(t, "/rfb/certificate?taxId="+dbtest.SerproBranch)
	s.get(t, "/simples/certificate?taxId="+dbtest.SerproBranch)
	s.get(t, "/rfb/certificate?taxId="+dbtest.SerproHead)              // unknown: refunded
	s.get(t, "/rfb/certificate?taxId="+dbtest.SerproBranch+"&pages=X") // invalid: never reserved
	if fmt.Sprint(meter.charged()) != "[1 1]" {
		t.Errorf("charged %v, want [1 1]", meter.charged())
	}
	meter.broke.Store(true)
	r := s.get(t, "/rfb/certificate?taxId="+dbtest.SerproBranch)
	if r.status != 429 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if o := r.object(t); o["message"] != fault.MsgNoCredits || fmt.Sprint(o["required"]) != "1" || fmt.Sprint(o["remaining"]) != "0" {
		t.Errorf("body %s", r.body)
	}
}

// priceMeter admits every lookup and records what was reserved and not
// refunded; broke refuses every reservation.
type priceMeter struct {
	mu       sync.Mutex
	reserved []int
	broke    atomic.Bool
}

func (m *priceMeter) Admit(context.Context, string) error { return nil }

func (m *priceMeter) Reserve(_ context.Context, n int) error {
	if m.broke.Load() {
		required, remaining := n, 0
		return &fault.Error{Kind: fault.ResourceExhausted, Message: fault.MsgNoCredits, Required: &required, Remaining: &remaining}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reserved = append(m.reserved, n)
	return nil
}

func (m *priceMeter) Refund(_ context.Context, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.reserved) - 1; i >= 0; i-- {
		if m.reserved[i] == n {
			m.reserved = append(m.reserved[:i], m.reserved[i+1:]...)
			return
		}
	}
}

func (m *priceMeter) charged() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int(nil), m.reserved...)
}
