package download

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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

func newClientFor(opts Options, out *monthProgress) (*client, error) {
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
func fetchMonth(ctx context.Context, c *client, opts Options, month string, out *monthProgress) (Result, error) {
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
		month, len(files), len(todo), human(out.total.Load()), res.Skipped, res.Dir)
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
