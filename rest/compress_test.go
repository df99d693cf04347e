package rest_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/rest"
)

// TestCompression: answers of rest.CompressMinBytes or more go out in the
// encoding the client accepts, and decode to the plain answer; smaller
// answers, images and clients that accept none go out as they are.
func TestCompression(t *testing.T) {
	t.Parallel()
	d := fixtureDB(t)
	tiles := newTileServer(t)
	s := routerWith(t, d, mapDeps(t, tiles, "", 5*time.Second))
	accepting := func(target, encodings string) response {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		if encodings != "" {
			req.Header.Set("Accept-Encoding", encodings)
		}
		return s.do(t, req)
	}

	const page, company = "/office?limit=1000", "/company/" + dbtest.BigRoot
	plain := accepting(page, "")
	plainCompany := accepting(company, "")
	if plainCompany.status != 200 || len(plainCompany.body) < rest.CompressMinBytes {
		t.Fatalf("%s: %d, %d bytes", company, plainCompany.status, len(plainCompany.body))
	}
	if plain.status != 200 || plain.header.Get("Content-Encoding") != "" {
		t.Fatalf("%s without Accept-Encoding: %d %q", page, plain.status, plain.header.Get("Content-Encoding"))
	}
	if len(plain.body) < 2*rest.CompressMinBytes {
		t.Fatalf("%s: %d bytes, too small to test compression", page, len(plain.body))
	}
	for _, c := range []struct{ accept, want string }{
		{"gzip", "gzip"},
		{"gzip, deflate, br", "gzip"}, // what Node's fetch sends
		{"zstd", "zstd"},
		{"gzip, deflate, br, zstd", "zstd"}, // what Chrome sends
		{"gzip;q=0, identity", ""},
		{"br", ""},
		{"zstd;q=0.5, gzip", "gzip"},
		{"gzip;q=0.5, zstd;q=0.5", "zstd"},
		{"GZIP ; Q=0.8", "gzip"},
		{"zstd;q=0, gzip;q=0", ""},
	} {
		// A company's answer is kept between requests with its encodings
		// (writeKept): the same choice as compress makes for the others.
		for range 2 {
			r := accepting(company, c.accept)
			if r.status != 200 || r.header.Get("Content-Encoding") != c.want {
				t.Errorf("%s, Accept-Encoding %q: %d, Content-Encoding %q, want %q", company, c.accept, r.status, r.header.Get("Content-Encoding"), c.want)
			} else if got := decode(t, c.want, r.body); !bytes.Equal(got, plainCompany.body) ||
				r.header.Get("Content-Length") != strconv.Itoa(len(r.body)) || !strings.Contains(r.header.Get("Vary"), "Accept-Encoding") {
				t.Errorf("%s, Accept-Encoding %q: %d bytes decoded to %d, Content-Length %q, Vary %q", company, c.accept, len(r.body), len(got), r.header.Get("Content-Length"), r.header.Get("Vary"))
			}
		}

		r := accepting(page, c.accept)
		if r.status != 200 || r.header.Get("Content-Encoding") != c.want {
			t.Errorf("Accept-Encoding %q: %d, Content-Encoding %q, want %q", c.accept, r.status, r.header.Get("Content-Encoding"), c.want)
			continue
		}
		if !strings.Contains(r.header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("Accept-Encoding %q: Vary %q", c.accept, r.header.Get("Vary"))
		}
		if got := decode(t, c.want, r.body); !bytes.Equal(got, plain.body) {
			t.Errorf("Accept-Encoding %q: the decoded answer differs from the plain one (%d and %d bytes)", c.accept, len(got), len(plain.body))
		}
		if c.want != "" && len(r.body) > len(plain.body)/3 {
			t.Errorf("Accept-Encoding %q: %d bytes for %d", c.accept, len(r.body), len(plain.body))
		}
	}

	// An office lookup is under the threshold: as it is, with its length.
	r := accepting("/office/"+dbtest.SerproBranch, "gzip, zstd")
	if r.status != 200 || len(r.body) >= rest.CompressMinBytes {
		t.Fatalf("lookup: %d, %d bytes", r.status, len(r.body))
	}
	if r.header.Get("Content-Encoding") != "" || r.header.Get("Content-Length") != strconv.Itoa(len(r.body)) {
		t.Errorf("lookup: Content-Encoding %q, Content-Length %q for %d bytes", r.header.Get("Content-Encoding"), r.header.Get("Content-Length"), len(r.body))
	}
	// PDFs and PNGs are compressed already.
	for _, target := range []string{"/rfb/certificate?taxId=" + dbtest.SerproBranch, "/office/" + dbtest.SerproBranch + "/map"} {
		r = accepting(target, "gzip")
		if r.status != 200 || r.header.Get("Content-Encoding") != "" || r.header.Get("Content-Length") != strconv.Itoa(len(r.body)) {
			t.Errorf("%s: %d, %d bytes, Content-Encoding %q, Content-Length %q", target, r.status, len(r.body), r.header.Get("Content-Encoding"), r.header.Get("Content-Length"))
		}
	}
	// HEAD describes the plain answer: nothing is compressed for a body
	// the server does not send.
	req := httptest.NewRequest(http.MethodHead, page, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	if r := s.do(t, req); r.status != 200 || r.header.Get("Content-Encoding") != "" || r.header.Get("Content-Length") != strconv.Itoa(len(plain.body)) {
		t.Errorf("HEAD: %d, Content-Encoding %q, Content-Length %q", r.status, r.header.Get("Content-Encoding"), r.header.Get("Content-Length"))
	}
}

func decode(t *testing.T, encoding string, body []byte) []byte {
	t.Helper()
	var rd io.Reader
	switch encoding {
	case "":
		return body
	case "gzip":
		z, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		rd = z
	case "zstd":
		z, err := zstd.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer z.Close()
		rd = z
	}
	out, err := io.ReadAll(rd)
	if err != nil {
		t.Fatalf("%s: %v", encoding, err)
	}
	return out
}

// BenchmarkCompression: the CPU compress spends on an office lookup and on
// a search page of the fixture, per encoding, and the bytes it saves
// (docs/benchmarks.md, "Compressed answers"):
//
//	go test ./rest -run '^$' -bench Compression
func BenchmarkCompression(b *testing.B) {
	s := routerWith(b, fixtureDB(b), nil)
	for _, c := range []struct{ name, target string }{
		{"lookup", "/office/" + dbtest.SerproBranch + "?simples=true"},
		{"search_page", "/office?limit=1000"},
		{"company", "/company/" + dbtest.BigRoot},
	} {
		plain := s.get(b, c.target)
		if plain.status != 200 {
			b.Fatalf("%s: %d", c.target, plain.status)
		}
		for _, enc := range []string{"gzip", "zstd"} {
			b.Run(c.name+"/"+enc, func(b *testing.B) {
				h := rest.Compress(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "application/json; charset=utf-8")
					w.Header().Set("Content-Length", strconv.Itoa(len(plain.body)))
					_, _ = w.Write(plain.body)
				}))
				req := httptest.NewRequest(http.MethodGet, "/", nil)
				req.Header.Set("Accept-Encoding", enc)
				w := &countingWriter{header: http.Header{}}
				b.SetBytes(int64(len(plain.body)))
				for b.Loop() {
					clear(w.header)
					w.n = 0
					h.ServeHTTP(w, req)
				}
				if enc != "" && len(plain.body) >= rest.CompressMinBytes && w.header.Get("Content-Encoding") != enc {
					b.Fatalf("Content-Encoding %q", w.header.Get("Content-Encoding"))
				}
				b.ReportMetric(float64(len(plain.body)), "plain_bytes")
				b.ReportMetric(float64(w.n), "sent_bytes")
			})
		}
	}
}

// countingWriter is a ResponseWriter that counts what it is sent.
type countingWriter struct {
	header http.Header
	n      int
}

func (w *countingWriter) Header() http.Header { return w.header }
func (w *countingWriter) WriteHeader(int)     {}
func (w *countingWriter) Write(b []byte) (int, error) {
	w.n += len(b)
	return len(b), nil
}
