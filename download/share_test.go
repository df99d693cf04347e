package download

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/webdav"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/importer/generator"
)

const testToken = "T0kenOfTheTestShare"

// generated is a small dump made once per test binary: its 37 ZIPs (no
// mapping tables: the share has none) and the tax ids it holds.
var generated struct {
	once   sync.Once
	dir    string
	taxIDs []string
	err    error
}

func generatedDump(t testing.TB) (dir string, taxIDs []string) {
	t.Helper()
	generated.once.Do(func() {
		generated.dir, generated.err = os.MkdirTemp("", "cnpjgraph-download-test-")
		if generated.err != nil {
			return
		}
		var sum generator.Summary
		sum, generated.err = generator.Generate(generator.Options{Companies: 300, Out: generated.dir, Seed: 11})
		for _, s := range sum.Samples {
			generated.taxIDs = append(generated.taxIDs, s.TaxID)
		}
		for _, f := range []string{"TABMUN.CSV", "paises-m49.csv"} {
			_ = os.Remove(filepath.Join(generated.dir, f))
		}
	})
	if generated.err != nil {
		t.Fatalf("generate the test dump: %v", generated.err)
	}
	return generated.dir, generated.taxIDs
}

func TestMain(m *testing.M) {
	code := m.Run()
	if generated.dir != "" {
		_ = os.RemoveAll(generated.dir)
	}
	os.Exit(code)
}

// fault answers a request instead of the share when it returns true; n is
// the request's number among the GETs of its path, from 1.
type fault func(w http.ResponseWriter, r *http.Request, n int) bool

// testShare is a Nextcloud-like public share on loopback: x/net/webdav over
// a temporary folder at /public.php/webdav/, the share token as basic-auth
// user, the mapping tables at /tables/, and faults injected per path.
type testShare struct {
	t    testing.TB
	root string // the share's folder: one YYYY-MM folder per month
	srv  *httptest.Server

	mu        sync.Mutex
	gets      map[string]int      // GETs per path below the share ("2026-10/Cnaes.zip")
	ranges    map[string][]string // the Range header of each of them ("" for none)
	propfinds int
	faults    map[string]fault // by path below the share; "PROPFIND" for listings
}

func newTestShare(t testing.TB, months ...string) *testShare {
	t.Helper()
	s := &testShare{t: t, root: t.TempDir(), gets: map[string]int{}, ranges: map[string][]string{}, faults: map[string]fault{}}
	for _, m := range months {
		s.addMonth(m)
	}
	shared := dbtest.SharedDir(t)
	dav := &webdav.Handler{Prefix: "/public.php/webdav", FileSystem: webdav.Dir(s.root), LockSystem: webdav.NewMemLS()}
	mux := http.NewServeMux()
	mux.HandleFunc("/tables/TABMUN.CSV", s.table(filepath.Join(shared, "data", "municipios", "TABMUN.CSV")))
	mux.HandleFunc("/tables/paises-m49.csv", s.table(filepath.Join(shared, "data", "paises", "paises-m49.csv")))
	mux.Handle("/public.php/webdav/", s.guard(dav))
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// addMonth publishes the generated dump as month.
func (s *testShare) addMonth(month string) {
	s.t.Helper()
	src, _ := generatedDump(s.t)
	for _, name := range requiredFiles() {
		s.copyIn(filepath.Join(src, name), month+"/"+name)
	}
}

func (s *testShare) copyIn(from, rel string) {
	s.t.Helper()
	raw, err := os.ReadFile(from)
	if err != nil {
		s.t.Fatal(err)
	}
	s.write(rel, raw)
}

func (s *testShare) write(rel string, raw []byte) {
	s.t.Helper()
	p := filepath.Join(s.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (s *testShare) path(rel string) string { return filepath.Join(s.root, filepath.FromSlash(rel)) }

func (s *testShare) table(path string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.gets[r.URL.Path]++
		s.mu.Unlock()
		http.ServeFile(w, r, path)
	}
}

// guard checks the share token like Nextcloud, counts, and injects faults.
func (s *testShare) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != testToken || pass != "" {
			w.Header().Set("WWW-Authenticate", `Basic realm="Nextcloud"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		// Every request names cnpjgraph: a test whose client does not fails.
		if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "cnpjgraph/") {
			http.Error(w, "User-Agent "+ua+" does not name cnpjgraph", http.StatusForbidden)
			return
		}
		rel := strings.TrimPrefix(r.URL.Path, "/public.php/webdav/")
		key, n := rel, 0
		s.mu.Lock()
		switch r.Method {
		case http.MethodGet:
			s.gets[rel]++
			n = s.gets[rel]
			s.ranges[rel] = append(s.ranges[rel], r.Header.Get("Range"))
		case "PROPFIND":
			s.propfinds++
			key, n = "PROPFIND", s.propfinds
		}
		f := s.faults[key]
		s.mu.Unlock()
		if f != nil && f(w, r, n) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *testShare) fault(key string, f fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[key] = f
}

func (s *testShare) getsOf(rel string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets[rel]
}

// zipGets counts the GETs of ZIPs of all months.
func (s *testShare) zipGets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for p, c := range s.gets {
		if strings.HasSuffix(p, ".zip") {
			n += c
		}
	}
	return n
}

func (s *testShare) allGets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.gets {
		n += c
	}
	return n
}

func (s *testShare) rangesOf(rel string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ranges[rel]...)
}

func (s *testShare) config() Config {
	return Config{
		ShareURL:     s.srv.URL + "/index.php/s/" + testToken,
		TABMUNURL:    s.srv.URL + "/tables/TABMUN.CSV",
		CountriesURL: s.srv.URL + "/tables/paises-m49.csv",
		Dir:          filepath.Join(s.t.TempDir(), "rfb"),
		Retries:      5,
		StallTimeout: 10 * time.Second,
	}
}

// options downloads into dir with millisecond backoffs; log collects the
// progress lines.
func (s *testShare) options(dir string, log io.Writer) Options {
	return Options{Config: s.config(), Dir: dir, Jobs: 4, Progress: log, ProgressInterval: 50 * time.Millisecond,
		MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, MaxRetryAfter: 20 * time.Millisecond}
}

func sha256File(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// assertSameFiles compares every ZIP of the share's month, and the mapping
// tables, with the downloaded ones, byte for byte.
func (s *testShare) assertSameFiles(t *testing.T, month, dir string) {
	t.Helper()
	shared := dbtest.SharedDir(t)
	pairs := map[string]string{
		filepath.Join(shared, "data", "municipios", "TABMUN.CSV"): filepath.Join(dir, TABMUNFile),
		filepath.Join(shared, "data", "paises", "paises-m49.csv"): filepath.Join(dir, CountriesFile),
	}
	for _, name := range requiredFiles() {
		pairs[s.path(month+"/"+name)] = filepath.Join(dir, name)
	}
	for src, got := range pairs {
		if a, b := sha256File(t, src), sha256File(t, got); a != b {
			t.Errorf("%s: sha256 %s, the share's %s is %s", got, b, src, a)
		}
	}
	parts, _ := filepath.Glob(filepath.Join(dir, "*.part"))
	if len(parts) > 0 {
		t.Errorf("temporary files left: %v", parts)
	}
}

// cutHalfway sends the first half of the file, then closes the connection
// without finishing the response.
func cutHalfway(t testing.TB, path string) fault {
	return func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n != 1 {
			return false
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
			return false
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(raw)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(raw[:len(raw)/2])
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return true
		}
		_ = conn.Close()
		return true
	}
}

// unavailable answers 503 to the first times requests.
func unavailable(times int) fault {
	return func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n > times {
			return false
		}
		w.Header().Set("Retry-After", "1")
		http.Error(w, "service unavailable", http.StatusServiceUnavailable)
		return true
	}
}
