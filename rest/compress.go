package rest

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/cnpjgraph/cnpjgraph/service"
)

// CompressMinBytes is the size from which an answer is compressed, when the
// client accepts gzip or zstd. Below it an answer goes out as it is: an
// office lookup (1–3 KiB) would lose a few hundred bytes for ~12 µs of CPU,
// a tenth of what the lookup costs; a search page of 1,000 offices (~1 MB)
// shrinks to a fifth for ~3 ms (docs/benchmarks.md, "Compressed answers").
const CompressMinBytes = 4096

// compressedTypes are the answers worth compressing: JSON and the
// playground's page, scripts and styles. Images and PDFs are compressed
// already.
var compressedTypes = []string{
	"application/json", "application/graphql-response+json",
	"text/html", "text/css", "text/javascript", "application/javascript", "text/plain",
}

// compress encodes answers of CompressMinBytes or more as the request's
// Accept-Encoding allows (zstd preferred, then gzip, at their fastest
// levels: answers are made once), and says Vary: Accept-Encoding. An
// answer that sets its own Content-Encoding (writeKept) goes out as it is.
func compress() func(http.Handler) http.Handler {
	wrap, err := gzhttp.NewWrapper(
		gzhttp.MinSize(CompressMinBytes),
		gzhttp.CompressionLevel(gzip.BestSpeed),
		gzhttp.ContentTypes(compressedTypes),
	)
	if err != nil { // the options are constants
		panic(err)
	}
	return func(next http.Handler) http.Handler { return wrap(next) }
}

// writeKept writes an answer the service keeps between requests (a
// company's), compressed as compress would, from the encoding kept with
// it: a company of thousands of offices is compressed once per snapshot,
// not at every request (1.5 ms of CPU for its 290 KB).
func writeKept(w http.ResponseWriter, r *http.Request, a *service.Answer) {
	enc := acceptedEncoding(r)
	if enc == "" || len(a.Body) < CompressMinBytes {
		writeBody(w, http.StatusOK, a.Body)
		return
	}
	body, err := a.Encoded(enc, encoders[enc])
	if err != nil { // unreachable for these encoders; the plain answer is right anyway
		writeBody(w, http.StatusOK, a.Body)
		return
	}
	w.Header().Set("Content-Encoding", enc)
	writeBody(w, http.StatusOK, body)
}

// zstdEncoder compresses whole answers; EncodeAll is safe for concurrent use.
var zstdEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))

var encoders = map[string]func([]byte) ([]byte, error){
	"zstd": func(b []byte) ([]byte, error) { return zstdEncoder.EncodeAll(b, nil), nil },
	"gzip": func(b []byte) ([]byte, error) {
		var out bytes.Buffer
		z, _ := gzip.NewWriterLevel(&out, gzip.BestSpeed)
		if _, err := z.Write(b); err != nil {
			return nil, err
		}
		if err := z.Close(); err != nil {
			return nil, err
		}
		return out.Bytes(), nil
	},
}

// acceptedEncoding is the encoding compress would choose for r: the one of
// zstd and gzip the client prefers by quality value, zstd on a tie, none
// when it accepts neither; none for HEAD, whose answer describes the
// plain one.
func acceptedEncoding(r *http.Request) string {
	if r.Method == http.MethodHead {
		return ""
	}
	var gz, zs float64
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(part, ";")
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(p, "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				var err error
				if q, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
					q = 0
				}
			}
		}
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "zstd":
			zs = q
		case "gzip":
			gz = q
		}
	}
	switch {
	case zs > 0 && zs >= gz:
		return "zstd"
	case gz > 0:
		return "gzip"
	}
	return ""
}
