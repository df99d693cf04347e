package download

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/internal/buildinfo"
)

// copyBuffer is the size of the buffer between socket and file: large
// enough that a GB costs a few thousand writes.
const copyBuffer = 1 << 20

// progressMark is how far an attempt must move a download for a later
// failure to count as new (see retryPolicy.run).
const progressMark = 1 << 20

// errStalled cuts a response whose body went silent.
var errStalled = errors.New("no data received within RFB_STALL_TIMEOUT")

// fetch downloads target into the file part until it holds size bytes,
// resuming from what part already holds; size < 0 (unknown) downloads the
// whole body on every attempt. auth sends the share token. count (if not
// nil) is told of the bytes received.
func (c *client) fetch(ctx context.Context, name, target string, auth bool, part string, size int64, count func(int64)) error {
	f, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	buf := make([]byte, copyBuffer)
	err = c.retry.run(ctx, name, c.logf, func() (bool, error) {
		off, err := f.Seek(0, io.SeekEnd)
		if err != nil {
			return false, err
		}
		if size < 0 || off > size {
			if off, err = restart(f); err != nil {
				return false, err
			}
		}
		if off == size {
			return false, nil
		}
		if off > 0 {
			c.logf("%s: resuming at byte %d of %d", name, off, size)
		}
		n, err := c.get(ctx, name, target, auth, f, off, size, buf, count)
		return n >= progressMark, err
	})
	if err != nil {
		return err
	}
	return f.Sync()
}

// restart empties f and rewinds it.
func restart(f *os.File) (int64, error) {
	if err := f.Truncate(0); err != nil {
		return 0, err
	}
	return f.Seek(0, io.SeekStart)
}

// get makes one GET of target, from byte off when off > 0, appending the
// body to f (positioned at off). It returns the bytes written.
func (c *client) get(ctx context.Context, name, target string, auth bool, f *os.File, off, size int64, buf []byte, count func(int64)) (int64, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", buildinfo.UserAgent())
	if auth {
		req.SetBasicAuth(c.share.Token, "")
	}
	if off > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", off))
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, networkError(err)
	}
	defer func() { _ = res.Body.Close() }()
	switch {
	case res.StatusCode == http.StatusPartialContent && off > 0:
		if err := checkContentRange(res.Header.Get("Content-Range"), off, size); err != nil {
			// Not the bytes we asked for: start the file over.
			if _, rerr := restart(f); rerr != nil {
				return 0, rerr
			}
			return 0, transient(fmt.Errorf("%w; restarting from byte 0", err))
		}
	case res.StatusCode == http.StatusOK:
		if off > 0 {
			c.logf("%s: the server ignored the Range request (200, not 206); restarting from byte 0", name)
			if off, err = restart(f); err != nil {
				return 0, err
			}
		}
		if size >= 0 && res.ContentLength >= 0 && res.ContentLength != size {
			return 0, fmt.Errorf("the listing says %d bytes, the server sends %d (republished meanwhile? run again later)", size, res.ContentLength)
		}
	case res.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		if _, err := restart(f); err != nil {
			return 0, err
		}
		return 0, transient(fmt.Errorf("the server cannot serve bytes from %d (416); restarting from byte 0", off))
	default:
		return 0, statusError("GET", res)
	}

	stall := time.AfterFunc(c.stall, func() { cancel(errStalled) })
	defer stall.Stop()
	body := io.Reader(res.Body)
	if size >= 0 {
		// One byte more than expected tells an overlong body.
		body = io.LimitReader(res.Body, size-off+1)
	}
	w := &countingWriter{f: f, count: count}
	_, err = io.CopyBuffer(w, &stallReader{r: body, timer: stall, d: c.stall}, buf)
	if err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, errStalled) {
			err = cause
		}
		if w.failed {
			return w.n, err // the disk, not the network
		}
		return w.n, networkError(fmt.Errorf("%w at byte %d", err, off+w.n))
	}
	switch got := off + w.n; {
	case size >= 0 && got > size:
		_, _ = restart(f)
		return w.n, fmt.Errorf("the server sent more than the listing's %d bytes (republished meanwhile? run again later)", size)
	case size >= 0 && got < size:
		return w.n, transient(fmt.Errorf("the connection ended at byte %d of %d", got, size))
	case size < 0 && got == 0:
		return 0, transient(errors.New("empty answer"))
	}
	return w.n, nil
}

// checkContentRange accepts "bytes OFF-(SIZE-1)/SIZE" (SIZE as listed, or
// any when unknown).
func checkContentRange(v string, off, size int64) error {
	spec, ok := strings.CutPrefix(v, "bytes ")
	rng, total, ok2 := strings.Cut(spec, "/")
	first, last, ok3 := strings.Cut(rng, "-")
	if !ok || !ok2 || !ok3 {
		return fmt.Errorf("206 with Content-Range %q, not a byte range", v)
	}
	a, err1 := strconv.ParseInt(first, 10, 64)
	b, err2 := strconv.ParseInt(last, 10, 64)
	t, err3 := strconv.ParseInt(total, 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return fmt.Errorf("206 with Content-Range %q, not a byte range", v)
	}
	if a != off || b != t-1 || (size >= 0 && t != size) {
		return fmt.Errorf("asked for bytes %d- of %d, the server sent Content-Range %q", off, size, v)
	}
	return nil
}

// countingWriter writes to the file and counts; it hides the file's
// ReadFrom so io.CopyBuffer uses our large buffer.
type countingWriter struct {
	f      *os.File
	count  func(int64)
	n      int64
	failed bool
}

func (w *countingWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.n += int64(n)
	if w.count != nil {
		w.count(int64(n))
	}
	if err != nil {
		w.failed = true
	}
	return n, err
}

// stallReader pushes the stall deadline back on every read that brings data.
type stallReader struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.timer.Reset(s.d)
	}
	return n, err
}

// human is a byte count for people: 512 B, 30.4 KiB, 1.2 GiB.
func human(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}
