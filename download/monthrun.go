package download

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// monthRun is one month's download in progress.
type monthRun struct {
	c   *client
	res *Result
	man *manifest
	out *monthProgress

	mu sync.Mutex // guards res
}

// plan returns the files to fetch, largest first so the big part 0 files
// do not start last, and sets the bytes to expect.
func (m *monthRun) plan(files []Entry) []Entry {
	var todo []Entry
	for _, e := range files {
		if m.done(e) {
			m.res.Skipped++
			continue
		}
		todo = append(todo, e)
		m.out.total.Add(e.Size - m.resumable(e))
	}
	sort.SliceStable(todo, func(i, j int) bool { return todo[i].Size > todo[j].Size })
	return todo
}

// done tells a file already verified in this version; a file of the right
// size that the sidecar does not know (copied in by hand) is verified here,
// which costs a read of the disk instead of a download.
func (m *monthRun) done(e Entry) bool {
	final := filepath.Join(m.res.Dir, e.Name)
	st, err := os.Stat(final)
	if err != nil || st.Size() != e.Size {
		return false
	}
	r, known := m.man.get(e.Name)
	if known {
		return r.Verified && r.sameVersion(e)
	}
	if err := verifyZip(final, e.Size, make([]byte, copyBuffer)); err != nil {
		m.out.printf("%s: already here but %v; fetching it again", e.Name, err)
		return false
	}
	return m.man.put(e.Name, recordOf(e, true)) == nil
}

// resumable is how many bytes of e a .part of the same version holds.
func (m *monthRun) resumable(e Entry) int64 {
	r, known := m.man.get(e.Name)
	st, err := os.Stat(filepath.Join(m.res.Dir, e.Name+".part"))
	if err != nil || !known || r.Verified || !r.sameVersion(e) || st.Size() > e.Size {
		return 0
	}
	return st.Size()
}

func (m *monthRun) fetchAll(ctx context.Context, month string, todo []Entry, jobs int) error {
	work := make(chan Entry)
	errs := make([]error, 0, len(todo))
	var errMu sync.Mutex
	var wg sync.WaitGroup
	for range min(jobs, len(todo)) {
		wg.Go(func() {
			for e := range work {
				if err := m.file(ctx, month, e); err != nil {
					errMu.Lock()
					errs = append(errs, fmt.Errorf("%s/%s: %w", month, e.Name, err))
					errMu.Unlock()
				}
			}
		})
	}
	// A file that fails does not stop the others: what arrives now is not
	// fetched again by the next run.
	for _, e := range todo {
		if ctx.Err() != nil {
			break
		}
		work <- e
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}

// maxDownloads bounds how often one file is fetched whole when it keeps
// arriving corrupt.
const maxDownloads = 3

// file fetches one ZIP into NAME.part, verifies it and renames it.
func (m *monthRun) file(ctx context.Context, month string, e Entry) error {
	final := filepath.Join(m.res.Dir, e.Name)
	part := final + ".part"
	from := m.resumable(e)
	if from == 0 {
		if err := os.Remove(part); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := m.man.put(e.Name, recordOf(e, false)); err != nil {
		return err
	}
	fp := m.out.begin(e.Name, e.Size, from)
	defer m.out.finish(fp)
	count := func(n int64) { m.out.add(fp, n) }
	buf := make([]byte, copyBuffer)
	for n := 1; ; n++ {
		if err := m.c.fetch(ctx, e.Name, m.c.share.url(month+"/"+e.Name), true, part, e.Size, count); err != nil {
			return err
		}
		err := verifyZip(part, e.Size, buf)
		if err == nil {
			break
		}
		if rerr := os.Remove(part); rerr != nil {
			return rerr
		}
		if n == maxDownloads {
			return fmt.Errorf("corrupt after %d downloads: %w", n, err)
		}
		m.out.printf("%s: corrupt (%v); downloading it again", e.Name, err)
	}
	if err := os.Rename(part, final); err != nil {
		return err
	}
	if err := m.man.put(e.Name, recordOf(e, true)); err != nil {
		return err
	}
	el := time.Since(fp.start)
	m.out.printf("%s: %s in %s (%s), verified", e.Name, human(e.Size), el.Round(time.Millisecond), rate(fp.received.Load(), el))
	m.mu.Lock()
	m.res.Downloaded++
	m.mu.Unlock()
	return nil
}
