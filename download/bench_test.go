package download

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// benchZipSize is the compressed size of the benchmarks' ZIP.
const benchZipSize = 64 << 20

// benchZip writes a one-member ZIP of about benchZipSize bytes whose member
// is generated establishments repeated: the compression ratio (and so the
// inflate work per byte downloaded) of a real Estabelecimentos file.
func benchZip(b *testing.B, path string) int64 {
	b.Helper()
	// The big files' members of the generated dump, one after the other:
	// far larger than Deflate's 32 KiB window, so repeating them does not
	// compress better than the data itself.
	src, _ := generatedDump(b)
	var chunk []byte
	for _, name := range requiredFiles()[:30] {
		chunk = append(chunk, member(b, filepath.Join(src, name))...)
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	zw := zip.NewWriter(bw)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "K3241.K03200Y0.D61108.ESTABELE", Method: zip.Deflate, Modified: time.Now()})
	if err != nil {
		b.Fatal(err)
	}
	var raw int64
	for {
		if _, err := w.Write(chunk); err != nil {
			b.Fatal(err)
		}
		raw += int64(len(chunk))
		if st, _ := f.Stat(); st.Size()+int64(bw.Buffered()) >= benchZipSize {
			break
		}
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %s holding %s (%.1fx, the real dump is about 4.3x)", filepath.Base(path), human(st.Size()), human(raw), float64(raw)/float64(st.Size()))
	return st.Size()
}

// member is the content of a one-member ZIP.
func member(b *testing.B, path string) []byte {
	b.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		b.Fatal(err)
	}
	defer z.Close()
	r, err := z.File[0].Open()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	raw, err := io.ReadAll(r)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports CPU seconds per GB (10^9 bytes) handled; the process
// includes the loopback server, so it is an upper bound of the client's.
func reportCPU(b *testing.B, cpu time.Duration, size int64, n int) {
	b.ReportMetric(cpu.Seconds()/(float64(size)*float64(n)/1e9), "cpu-s/GB")
}

// BenchmarkDownload fetches a 64 MiB ZIP from a loopback share as a month
// download does (resumable GET into a .part, fsync), with and without the
// CRC verification that follows, so the cost of verifying shows.
func BenchmarkDownload(b *testing.B) {
	s := newTestShare(b)
	const rel = "2026-10/Estabelecimentos0.zip"
	if err := os.MkdirAll(filepath.Dir(s.path(rel)), 0o755); err != nil {
		b.Fatal(err)
	}
	size := benchZip(b, s.path(rel))
	out := newProgress(nil, 0)
	defer out.close()
	c, err := newClientFor(s.options(b.TempDir(), nil), out)
	if err != nil {
		b.Fatal(err)
	}
	part := filepath.Join(b.TempDir(), "Estabelecimentos0.zip.part")
	buf := make([]byte, copyBuffer)
	for _, verify := range []bool{false, true} {
		name := "fetch"
		if verify {
			name = "fetch+verify"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			cpu, n := cpuTime(b), 0
			for b.Loop() {
				n++
				if err := os.Remove(part); err != nil && !os.IsNotExist(err) {
					b.Fatal(err)
				}
				if err := c.fetch(context.Background(), "bench", c.share.url(rel), true, part, size, nil); err != nil {
					b.Fatal(err)
				}
				if verify {
					if err := verifyZip(part, size, buf); err != nil {
						b.Fatal(err)
					}
				}
			}
			reportCPU(b, cpuTime(b)-cpu, size, n)
		})
	}
}

// BenchmarkVerify is the CRC verification alone, from the page cache.
func BenchmarkVerify(b *testing.B) {
	path := filepath.Join(b.TempDir(), "Estabelecimentos0.zip")
	size := benchZip(b, path)
	buf := make([]byte, copyBuffer)
	b.SetBytes(size)
	cpu, n := cpuTime(b), 0
	for b.Loop() {
		n++
		if err := verifyZip(path, size, buf); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpuTime(b)-cpu, size, n)
}
