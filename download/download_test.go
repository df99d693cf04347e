package download

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/internal/syncbuf"
)

func TestParseShare(t *testing.T) {
	for _, c := range []struct{ in, endpoint, token, err string }{
		{"https://arquivos.receitafederal.gov.br/index.php/s/YggdBLfdninEJX9", "https://arquivos.receitafederal.gov.br/public.php/webdav/", "YggdBLfdninEJX9", ""},
		{"https://cloud.example.com/s/abc/", "https://cloud.example.com/public.php/webdav/", "abc", ""},
		{"http://host:8080/nextcloud/index.php/s/abc", "http://host:8080/nextcloud/public.php/webdav/", "abc", ""},
		{"https://abc@host/public.php/webdav/", "https://host/public.php/webdav/", "abc", ""},
		{"https://host/public.php/webdav/", "", "", "needs the share token as its user"},
		{"https://host/index.php/apps/files", "", "", "not a Nextcloud public share URL"},
		{"ftp://host/s/abc", "", "", "not an http(s) URL"},
	} {
		s, err := ParseShare(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || s.Endpoint.String() != c.endpoint || s.Token != c.token {
			t.Errorf("%s: %v %q %v, want %s %s", c.in, s.Endpoint, s.Token, err, c.endpoint, c.token)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := Config{ShareURL: "https://arquivos.receitafederal.gov.br/index.php/s/YggdBLfdninEJX9",
		TABMUNURL: "https://t.example.com/TABMUN.CSV", CountriesURL: "https://c.example.com/PAIS.csv",
		Dir: ".data/rfb", Retries: 8, StallTimeout: time.Minute}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.TABMUNURL = "file:///etc/TABMUN.CSV" }, "TABMUN_URL: \"file:///etc/TABMUN.CSV\" is not an http(s) URL"},
		{func(c *Config) { c.CountriesURL = "balanca/PAIS.csv" }, "COUNTRIES_URL: "},
		{func(c *Config) { c.ShareURL = "https://user:secret@host/index.php/s/abc" }, ""},
		{func(c *Config) { c.ShareURL = "https://host/index.php/apps" }, "RFB_SHARE_URL: "},
		{func(c *Config) { c.Retries = -1 }, "RFB_RETRIES: "},
		{func(c *Config) { c.StallTimeout = 0 }, "RFB_STALL_TIMEOUT: "},
	} {
		c := ok
		bad.set(&c)
		err := c.Validate()
		if bad.want == "" {
			if err != nil {
				t.Errorf("%+v: %v", c, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), bad.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%+v: error %v, want it to contain %q", c, err, bad.want)
		}
	}
	if got := Redact("https://u:secret@host/x"); got != "https://u:xxxxx@host/x" {
		t.Errorf("Redact: %s", got)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 3, 3, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"": 0, "7": 7 * time.Second, "0": 0, "soon": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Minute).Format(http.TimeFormat):     0,
	} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("Retry-After %q: %s, want %s", v, got, want)
		}
	}
}

func TestListMonths(t *testing.T) {
	s := newTestShare(t, "2026-09", "2026-10")
	s.write("README.txt", []byte("not a month"))
	out := newProgress(nil, 0)
	defer out.close()
	c, err := newClientFor(s.options(t.TempDir(), nil), out)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	months, err := c.months(ctx)
	if err != nil || !slices.Equal(months, []string{"2026-09", "2026-10"}) {
		t.Fatalf("months %v, %v", months, err)
	}
	for want, got := range map[string]string{"latest": "2026-10", "": "2026-10", "2026-09": "2026-09"} {
		if m, err := c.pickMonth(ctx, want); err != nil || m != got {
			t.Errorf("pickMonth(%q) = %q, %v; want %s", want, m, err, got)
		}
	}
	if _, err := c.pickMonth(ctx, "2025-01"); err == nil || !strings.Contains(err.Error(), "2026-09 to 2026-10") {
		t.Errorf("a month not on the share: %v", err)
	}
	if _, err := c.pickMonth(ctx, "2026-13"); err == nil || !strings.Contains(err.Error(), "neither YYYY-MM nor latest") {
		t.Errorf("a bad month: %v", err)
	}
	files, err := c.list(ctx, "2026-10")
	if err != nil || len(files) != 37 {
		t.Fatalf("%d files, %v", len(files), err)
	}
	for _, e := range files {
		st, err := os.Stat(s.path("2026-10/" + e.Name))
		if err != nil || e.Dir || e.Size != st.Size() || e.ETag == "" || !e.Modified.Equal(st.ModTime().Truncate(time.Second)) {
			t.Errorf("%+v: local %v %v", e, st, err)
		}
	}
}

func TestDownloadTwice(t *testing.T) {
	s := newTestShare(t, "2026-09", "2026-10")
	dir := t.TempDir()
	var log syncbuf.Buffer
	res, err := Download(context.Background(), s.options(dir, &log))
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if res.Month != "2026-10" || res.Dir != filepath.Join(dir, "2026-10") || res.Downloaded != 39 || res.Skipped != 0 {
		t.Errorf("first run: %+v", res)
	}
	s.assertSameFiles(t, "2026-10", res.Dir)
	if _, err := os.Stat(filepath.Join(dir, "2026-09")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("2026-09 was downloaded too: %v", err)
	}
	if n := s.zipGets(); n != 37 {
		t.Errorf("%d GETs of ZIPs, want 37", n)
	}

	before := s.allGets()
	res, err = Download(context.Background(), s.options(dir, &log))
	if err != nil {
		t.Fatal(err)
	}
	if res.Downloaded != 0 || res.Skipped != 39 || res.Received != 0 {
		t.Errorf("second run: %+v", res)
	}
	if n := s.allGets() - before; n != 0 {
		t.Errorf("second run made %d GETs, want 0", n)
	}
}

func TestResumeAfterCut(t *testing.T) {
	s := newTestShare(t, "2026-10")
	const rel = "2026-10/Estabelecimentos0.zip"
	s.fault(rel, cutHalfway(t, s.path(rel)))
	var log syncbuf.Buffer
	res, err := Download(context.Background(), s.options(t.TempDir(), &log))
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	s.assertSameFiles(t, "2026-10", res.Dir)
	st, _ := os.Stat(s.path(rel))
	want := []string{"", fmt.Sprintf("bytes=%d-", st.Size()/2)}
	if got := s.rangesOf(rel); !slices.Equal(got, want) {
		t.Errorf("Range headers %q, want %q (a resume from the bytes already written)", got, want)
	}
	if !strings.Contains(log.String(), "Estabelecimentos0.zip: resuming at") {
		t.Errorf("no resume line in the log:\n%s", log.String())
	}
}

// TestResumeAcrossRuns: a run killed mid-file leaves NAME.part and its
// version in the sidecar; the next run asks for the rest only.
func TestResumeAcrossRuns(t *testing.T) {
	s := newTestShare(t, "2026-10")
	dir := t.TempDir()
	const name = "Socios0.zip"
	raw, err := os.ReadFile(s.path("2026-10/" + name))
	if err != nil {
		t.Fatal(err)
	}
	out := newProgress(nil, 0)
	c, err := newClientFor(s.options(dir, nil), out)
	if err != nil {
		t.Fatal(err)
	}
	listing, err := c.list(context.Background(), "2026-10")
	out.close()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(listing, func(e Entry) bool { return e.Name == name })
	month := filepath.Join(dir, "2026-10")
	if err := os.MkdirAll(month, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(month, name+".part"), raw[:1000], 0o644); err != nil {
		t.Fatal(err)
	}
	man, _ := loadManifest(month)
	if err := man.put(name, recordOf(listing[i], false)); err != nil {
		t.Fatal(err)
	}
	res, err := Download(context.Background(), s.options(dir, nil))
	if err != nil {
		t.Fatal(err)
	}
	s.assertSameFiles(t, "2026-10", res.Dir)
	if got := s.rangesOf("2026-10/" + name); !slices.Equal(got, []string{"bytes=1000-"}) {
		t.Errorf("Range headers %q, want [bytes=1000-]", got)
	}
}

// TestServerIgnoresRange: a 200 to a Range request restarts the file from
// its first byte with that answer's body.
func TestServerIgnoresRange(t *testing.T) {
	s := newTestShare(t, "2026-10")
	const rel = "2026-10/Empresas0.zip"
	cut := cutHalfway(t, s.path(rel))
	s.fault(rel, func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 2 {
			r.Header.Del("Range")
			return false
		}
		return cut(w, r, n)
	})
	var log syncbuf.Buffer
	res, err := Download(context.Background(), s.options(t.TempDir(), &log))
	if err != nil {
		t.Fatal(err)
	}
	s.assertSameFiles(t, "2026-10", res.Dir)
	if n := s.getsOf(rel); n != 2 {
		t.Errorf("%d GETs of %s, want 2", n, rel)
	}
	if !strings.Contains(log.String(), "the server ignored the Range request (200, not 206); restarting from byte 0") {
		t.Errorf("log:\n%s", log.String())
	}
}

func TestUnavailableBursts(t *testing.T) {
	s := newTestShare(t, "2026-10")
	s.fault("PROPFIND", unavailable(2))
	for _, name := range []string{"Empresas1.zip", "Simples.zip", "Cnaes.zip"} {
		s.fault("2026-10/"+name, unavailable(3))
	}
	var log syncbuf.Buffer
	res, err := Download(context.Background(), s.options(t.TempDir(), &log))
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	s.assertSameFiles(t, "2026-10", res.Dir)
	for _, name := range []string{"Empresas1.zip", "Simples.zip", "Cnaes.zip"} {
		if n := s.getsOf("2026-10/" + name); n != 4 {
			t.Errorf("%s: %d GETs, want 4 (3 answered 503)", name, n)
		}
	}
	if !strings.Contains(log.String(), "Simples.zip: GET: server answered 503 Service Unavailable; retry 3 of 5") {
		t.Errorf("log:\n%s", log.String())
	}

	// More failures than RFB_RETRIES: the file fails, naming itself; the
	// others arrive.
	s2 := newTestShare(t, "2026-10")
	s2.fault("2026-10/Paises.zip", unavailable(100))
	o := s2.options(t.TempDir(), nil)
	o.Config.Retries = 2
	_, err = Download(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "2026-10/Paises.zip: giving up after 3 failed attempts: GET: server answered 503") {
		t.Errorf("error %v", err)
	}
	if n := s2.getsOf("2026-10/Paises.zip"); n != 3 {
		t.Errorf("%d GETs of Paises.zip, want 3", n)
	}
	if _, err := os.Stat(filepath.Join(o.Dir, "2026-10", "Socios9.zip")); err != nil {
		t.Errorf("the other files should have arrived: %v", err)
	}
}

func TestCorruptInTransit(t *testing.T) {
	s := newTestShare(t, "2026-10")
	// A stored (uncompressed) member, so a flipped byte is a CRC mismatch
	// rather than an invalid Deflate stream.
	const rel = "2026-10/Motivos.zip"
	offset := storeZip(t, s.path(rel))
	s.fault(rel, func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n != 1 {
			return false
		}
		raw, err := os.ReadFile(s.path(rel))
		if err != nil {
			t.Error(err)
			return false
		}
		raw[offset] ^= 0x20
		raw[offset+1] ^= 0x01
		w.Header().Set("Content-Length", fmt.Sprint(len(raw)))
		_, _ = w.Write(raw)
		return true
	})
	var log syncbuf.Buffer
	res, err := Download(context.Background(), s.options(t.TempDir(), &log))
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	s.assertSameFiles(t, "2026-10", res.Dir)
	if n := s.getsOf(rel); n != 2 {
		t.Errorf("%d GETs of Motivos.zip, want 2", n)
	}
	if !strings.Contains(log.String(), "Motivos.zip: corrupt (member F.K03200$Z.") || !strings.Contains(log.String(), "zip: checksum error); downloading it again") {
		t.Errorf("log:\n%s", log.String())
	}
}

// storeZip rewrites a one-member ZIP with its member stored, not deflated,
// and returns the offset of the middle of the member's bytes.
func storeZip(t *testing.T, path string) int64 {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	m := z.File[0]
	r, err := m.Open()
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	_ = r.Close()
	_ = z.Close()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: m.Name, Method: zip.Store, Modified: m.Modified})
	if err == nil {
		_, err = w.Write(data)
	}
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = os.WriteFile(path, b.Bytes(), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	start, err := zr.File[0].DataOffset()
	if err != nil {
		t.Fatal(err)
	}
	return start + int64(len(data))/2
}

func TestIncompleteMonth(t *testing.T) {
	s := newTestShare(t, "2026-10")
	for _, name := range []string{"Socios3.zip", "Qualificacoes.zip"} {
		if err := os.Remove(s.path("2026-10/" + name)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	_, err := Download(context.Background(), s.options(dir, nil))
	if err == nil || !strings.Contains(err.Error(), "the share's 2026-10 folder is incomplete: Socios3.zip, Qualificacoes.zip missing") {
		t.Errorf("error %v", err)
	}
	if n := s.allGets(); n != 0 {
		t.Errorf("%d GETs before the month was found incomplete", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "2026-10")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the month folder was created: %v", err)
	}
}

func TestWrongToken(t *testing.T) {
	s := newTestShare(t, "2026-10")
	o := s.options(t.TempDir(), nil)
	o.Config.ShareURL = s.srv.URL + "/index.php/s/NotTheToken"
	_, err := Download(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized (the share refused its token: check RFB_SHARE_URL)") {
		t.Errorf("error %v", err)
	}
}

// TestStalledConnection: a response that stops sending is cut after
// RFB_STALL_TIMEOUT and resumed from the bytes received.
func TestStalledConnection(t *testing.T) {
	s := newTestShare(t, "2026-10")
	const rel = "2026-10/Socios0.zip"
	raw, err := os.ReadFile(s.path(rel))
	if err != nil {
		t.Fatal(err)
	}
	s.fault(rel, func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n != 1 {
			return false
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(raw)))
		_, _ = w.Write(raw[:len(raw)/2])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return true
	})
	var log syncbuf.Buffer
	o := s.options(t.TempDir(), &log)
	o.Config.StallTimeout = 300 * time.Millisecond
	res, err := Download(context.Background(), o)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	s.assertSameFiles(t, "2026-10", res.Dir)
	want := []string{"", fmt.Sprintf("bytes=%d-", len(raw)/2)}
	if got := s.rangesOf(rel); !slices.Equal(got, want) {
		t.Errorf("Range headers %q, want %q", got, want)
	}
	if !strings.Contains(log.String(), fmt.Sprintf("Socios0.zip: no data received within RFB_STALL_TIMEOUT at byte %d; retry 1 of 5", len(raw)/2)) {
		t.Errorf("log:\n%s", log.String())
	}
}

// TestWrongContentRange: a 206 that is not the rest of the file starts the
// file over.
func TestWrongContentRange(t *testing.T) {
	s := newTestShare(t, "2026-10")
	const rel = "2026-10/Empresas0.zip"
	raw, err := os.ReadFile(s.path(rel))
	if err != nil {
		t.Fatal(err)
	}
	cut := cutHalfway(t, s.path(rel))
	s.fault(rel, func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 2 {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-%d/%d", len(raw)-1, len(raw)))
			w.WriteHeader(http.StatusPartialContent)
			_, _ = w.Write(raw)
			return true
		}
		return cut(w, r, n)
	})
	var log syncbuf.Buffer
	res, err := Download(context.Background(), s.options(t.TempDir(), &log))
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	s.assertSameFiles(t, "2026-10", res.Dir)
	half := len(raw) / 2
	want := []string{"", fmt.Sprintf("bytes=%d-", half), ""}
	if got := s.rangesOf(rel); !slices.Equal(got, want) {
		t.Errorf("Range headers %q, want %q", got, want)
	}
	msg := fmt.Sprintf("asked for bytes %d- of %d, the server sent Content-Range \"bytes 0-%d/%d\"; restarting from byte 0", half, len(raw), len(raw)-1, len(raw))
	if !strings.Contains(log.String(), msg) {
		t.Errorf("no %q in the log:\n%s", msg, log.String())
	}
}

func TestShareGone(t *testing.T) {
	s := newTestShare(t, "2026-10")
	o := s.options(t.TempDir(), nil)
	o.Config.ShareURL = s.srv.URL + "/nextcloud/index.php/s/" + testToken
	_, err := Download(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "PROPFIND: server answered 404 Not Found (no such share or folder: has the Receita moved the files? check RFB_SHARE_URL)") {
		t.Errorf("error %v", err)
	}
}

// TestTableFallsBackToOlderMonth: when a mapping table's server fails, the
// month takes the copy of the newest older month folder, with a warning;
// without one, the download fails naming the table.
func TestTableFallsBackToOlderMonth(t *testing.T) {
	s := newTestShare(t, "2026-09", "2026-10")
	dir := t.TempDir()
	o := s.options(dir, nil)
	o.Month = "2026-09"
	if _, err := Download(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	older, err := os.ReadFile(filepath.Join(dir, "2026-09", "TABMUN.CSV"))
	if err != nil {
		t.Fatal(err)
	}

	var log syncbuf.Buffer
	o = s.options(dir, &log)
	o.Month = "2026-10"
	o.Config.TABMUNURL = s.srv.URL + "/tables/gone/TABMUN.CSV" // 404
	res, err := Download(context.Background(), o)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	got, err := os.ReadFile(filepath.Join(res.Dir, "TABMUN.CSV"))
	if err != nil || !bytes.Equal(got, older) {
		t.Errorf("2026-10's TABMUN.CSV: %d bytes, %v; want 2026-09's %d bytes", len(got), err, len(older))
	}
	if want := "using the copy of " + filepath.Join(dir, "2026-09", "TABMUN.CSV"); !strings.Contains(log.String(), want) {
		t.Errorf("no warning %q in:\n%s", want, log.String())
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "TABMUN.CSV.part")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a .part file was left: %v", err)
	}

	o = s.options(t.TempDir(), nil) // no older month
	o.Config.TABMUNURL = s.srv.URL + "/tables/gone/TABMUN.CSV"
	if _, err := Download(context.Background(), o); err == nil || !strings.Contains(err.Error(), "TABMUN.CSV from "+o.Config.TABMUNURL) {
		t.Errorf("without an older copy: %v", err)
	}
}
