package download

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

var monthPattern = regexp.MustCompile(`^(19|20)\d\d-(0[1-9]|1[0-2])$`)

// requiredFiles are the 37 ZIPs of a month, as the share names them.
func requiredFiles() []string {
	var names []string
	for _, group := range []string{"Empresas", "Estabelecimentos", "Socios"} {
		for i := range 10 {
			names = append(names, fmt.Sprintf("%s%d.zip", group, i))
		}
	}
	names = append(names, "Simples.zip")
	for _, t := range []string{"Cnaes", "Motivos", "Municipios", "Naturezas", "Paises", "Qualificacoes"} {
		names = append(names, t+".zip")
	}
	return names
}

// The mapping tables' names in a month folder: names the importer finds
// beside the ZIPs (TABMUN*, PAIS.csv), whatever the table's layout.
const (
	TABMUNFile    = "TABMUN.CSV"
	CountriesFile = "PAIS.csv"
)

// Options of a download.
type Options struct {
	Config Config
	// Dir holds one folder per month (Dir/YYYY-MM); empty: Config.Dir.
	Dir string
	// Month is "YYYY-MM", or "latest" or "" for the share's newest.
	Month string
	// Jobs is how many files download at once; 0: 4.
	Jobs int
	// Progress receives bars on a terminal, else a line per event and a
	// summary every ProgressInterval (0: 5s).
	Progress         io.Writer
	ProgressInterval time.Duration
	// MinBackoff and MaxBackoff space retries (0: 1s and 1m); MaxRetryAfter
	// caps a server's Retry-After (0: 10m).
	MinBackoff, MaxBackoff, MaxRetryAfter time.Duration
}

func (o Options) dir() string {
	if o.Dir != "" {
		return o.Dir
	}
	return o.Config.Dir
}

// Result tells what a download did.
type Result struct {
	Month      string
	Dir        string // Dir/YYYY-MM
	Downloaded int    // files fetched (ZIPs and mapping tables)
	Skipped    int    // files already complete
	Received   int64  // bytes received
}

// Download fetches a month of the share into Dir/YYYY-MM, holding the
// folder's lock.
func Download(ctx context.Context, opts Options) (Result, error) {
	if err := opts.Config.Validate(); err != nil {
		return Result{}, err
	}
	lock, err := lockDir(opts.dir(), "download")
	if err != nil {
		return Result{}, err
	}
	defer lock.unlock()
	out := newProgress(opts.Progress, opts.ProgressInterval)
	defer out.close()
	c, err := newClientFor(opts, out)
	if err != nil {
		return Result{}, err
	}
	month, err := c.pickMonth(ctx, opts.Month)
	if err != nil {
		return Result{}, err
	}
	return fetchMonth(ctx, c, opts, month, out)
}

func newClientFor(opts Options, out *progress) (*client, error) {
	share, err := ParseShare(opts.Config.ShareURL)
	if err != nil {
		return nil, fmt.Errorf("RFB_SHARE_URL: %w", err)
	}
	pol := retryPolicy{retries: opts.Config.Retries, minBackoff: opts.MinBackoff, maxBackoff: opts.MaxBackoff, maxRetryAfter: opts.MaxRetryAfter}
	if pol.minBackoff <= 0 {
		pol.minBackoff = time.Second
	}
	if pol.maxBackoff <= 0 {
		pol.maxBackoff = time.Minute
	}
	if pol.maxRetryAfter <= 0 {
		pol.maxRetryAfter = 10 * time.Minute
	}
	return newClient(share, pol, opts.Config.StallTimeout, out.printf), nil
}

// fetchMonth downloads the month's ZIPs and the mapping tables; the caller
// holds the folder's lock.
func fetchMonth(ctx context.Context, c *client, opts Options, month string, out *progress) (Result, error) {
	res := Result{Month: month, Dir: filepath.Join(opts.dir(), month)}
	listing, err := c.list(ctx, month)
	if err != nil {
		return res, err
	}
	files, err := complete(month, listing)
	if err != nil {
		return res, err
	}
	if err := os.MkdirAll(res.Dir, 0o755); err != nil {
		return res, err
	}
	man, err := loadManifest(res.Dir)
	if err != nil {
		return res, err
	}
	m := &monthRun{c: c, res: &res, man: man, out: out}
	todo := m.plan(files)
	out.printf("%s: %d files on the share, %d to fetch (%s), %d already here, into %s",
		month, len(files), len(todo), human(out.total), res.Skipped, res.Dir)
	start := time.Now()
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = 4
	}
	if err := m.fetchAll(ctx, month, todo, jobs); err != nil {
		return res, err
	}
	for _, t := range []struct{ name, url string }{{TABMUNFile, opts.Config.TABMUNURL}, {CountriesFile, opts.Config.CountriesURL}} {
		if err := m.table(ctx, opts.dir(), t.name, t.url); err != nil {
			return res, err
		}
	}
	res.Received = out.received.Load()
	out.printf("%s complete in %s: %d files fetched, %d already here, %s received (%s)", month,
		time.Since(start).Round(time.Second), res.Downloaded, res.Skipped, human(res.Received), rate(res.Received, time.Since(start)))
	return res, nil
}

// complete picks the 37 ZIPs out of a month's listing; a missing one is an
// error naming it, before anything is downloaded.
func complete(month string, listing []Entry) ([]Entry, error) {
	byName := map[string]Entry{}
	for _, e := range listing {
		if !e.Dir {
			byName[strings.ToLower(e.Name)] = e
		}
	}
	var files []Entry
	var missing []string
	for _, name := range requiredFiles() {
		e, ok := byName[strings.ToLower(name)]
		switch {
		case !ok:
			missing = append(missing, name)
		case e.Size < 0:
			return nil, fmt.Errorf("the share lists %s/%s without a size (getcontentlength)", month, e.Name)
		default:
			files = append(files, e)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the share's %s folder is incomplete: %s missing (still being published? try again later)",
			month, strings.Join(missing, ", "))
	}
	return files, nil
}

// monthRun is one month's download in progress.
type monthRun struct {
	c   *client
	res *Result
	man *manifest
	out *progress

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
		m.out.total += e.Size - m.resumable(e)
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

// table fetches a mapping table unless the month folder has it. When its
// server fails, the copy of the newest older month folder is used, with a
// warning: a flaky Tesouro or Comex Stat server must not hold back a dump.
func (m *monthRun) table(ctx context.Context, root, name, url string) error {
	final := filepath.Join(m.res.Dir, name)
	if st, err := os.Stat(final); err == nil && st.Size() > 0 {
		m.res.Skipped++
		return nil
	}
	part := final + ".part"
	err := m.c.fetch(ctx, name, url, false, part, -1, nil)
	if err == nil {
		if err = os.Rename(part, final); err == nil {
			m.res.Downloaded++
			m.out.printf("%s: fetched from %s", name, Redact(url))
			return nil
		}
	}
	_ = os.Remove(part)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if older := olderCopy(root, m.res.Month, name); older != "" {
		if cerr := copyFile(older, final); cerr == nil {
			m.out.printf("warning: %s: %s: %v; using the copy of %s", name, Redact(url), err, older)
			return nil
		}
	}
	return fmt.Errorf("%s from %s: %w", name, Redact(url), err)
}

// olderCopy finds name in the newest month folder of root before month.
func olderCopy(root, month, name string) string {
	months, _ := monthFolders(root)
	for i := len(months) - 1; i >= 0; i-- {
		if months[i] >= month {
			continue
		}
		p := filepath.Join(root, months[i], name)
		if st, err := os.Stat(p); err == nil && st.Size() > 0 {
			return p
		}
	}
	return ""
}

// monthFolders lists root's YYYY-MM folders, oldest first.
func monthFolders(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && monthPattern.MatchString(e.Name()) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer func() { _ = src.Close() }()
	tmp := to + ".part"
	dst, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		_ = dst.Close()
		return err
	}
	if err := dst.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, to)
}
