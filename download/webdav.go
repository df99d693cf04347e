package download

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/internal/buildinfo"
)

// Entry is a file or folder of a share listing.
type Entry struct {
	Name     string
	Dir      bool
	Size     int64
	ETag     string
	Modified time.Time
}

// client talks to the share (WebDAV) and to the mapping tables' servers.
type client struct {
	share Share
	http  *http.Client
	retry retryPolicy
	stall time.Duration // a response body silent this long is cut and resumed
	logf  func(format string, args ...any)
}

func newClient(share Share, retry retryPolicy, stall time.Duration, logf func(string, ...any)) *client {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: stall,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   16,
		// Large reads straight from the socket: fewer syscalls per GB.
		ReadBufferSize: 256 << 10,
	}
	// No overall client timeout: a 2 GB file takes as long as it takes;
	// stalls are caught per read instead.
	return &client{share: share, http: &http.Client{Transport: tr}, retry: retry, stall: stall, logf: logf}
}

// propfindBody asks for exactly the properties the listing uses.
const propfindBody = `<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:getcontentlength/><d:getlastmodified/><d:getetag/></d:prop></d:propfind>`

type multistatus struct {
	Responses []struct {
		Href      string `xml:"DAV: href"`
		Propstats []struct {
			Status string `xml:"DAV: status"`
			Prop   struct {
				ResourceType struct {
					Collection *struct{} `xml:"DAV: collection"`
				} `xml:"DAV: resourcetype"`
				ContentLength string `xml:"DAV: getcontentlength"`
				LastModified  string `xml:"DAV: getlastmodified"`
				ETag          string `xml:"DAV: getetag"`
			} `xml:"DAV: prop"`
		} `xml:"DAV: propstat"`
	} `xml:"DAV: response"`
}

// list returns the entries of a folder of the share ("" is the root),
// sorted by name.
func (c *client) list(ctx context.Context, dir string) ([]Entry, error) {
	rel := strings.Trim(dir, "/")
	if rel != "" {
		rel += "/"
	}
	target := c.share.url(rel)
	var entries []Entry
	err := c.retry.run(ctx, "list "+target, c.logf, func() (bool, error) {
		var err error
		entries, err = c.propfind(ctx, target)
		return false, err
	})
	if err != nil {
		return nil, fmt.Errorf("list the share folder %s: %w", target, err)
	}
	return entries, nil
}

func (c *client) propfind(ctx context.Context, target string) ([]Entry, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*c.stall)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "PROPFIND", target, strings.NewReader(propfindBody))
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", buildinfo.UserAgent())
	req.Header.Set("Depth", "1")
	req.Header.Set("Content-Type", "application/xml; charset=utf-8")
	req.SetBasicAuth(c.share.Token, "")
	res, err := c.http.Do(req)
	if err != nil {
		return nil, networkError(err)
	}
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode != http.StatusMultiStatus {
		return nil, statusError("PROPFIND", res)
	}
	var ms multistatus
	// A month's listing is a few KiB; the bound keeps a broken server from
	// filling memory.
	if err := xml.NewDecoder(io.LimitReader(res.Body, 16<<20)).Decode(&ms); err != nil {
		return nil, networkError(fmt.Errorf("read the listing: %w", err))
	}
	self := strings.TrimSuffix(mustPath(target), "/")
	var out []Entry
	for _, r := range ms.Responses {
		href, err := url.Parse(r.Href)
		if err != nil {
			return nil, fmt.Errorf("listing: bad href %q: %w", r.Href, err)
		}
		p := strings.TrimSuffix(href.Path, "/")
		if p == self || p == "" {
			continue
		}
		e := Entry{Name: path.Base(p), Size: -1}
		for _, ps := range r.Propstats {
			if !strings.Contains(ps.Status, " 200") {
				continue // the properties this server does not have
			}
			pr := ps.Prop
			e.Dir = e.Dir || pr.ResourceType.Collection != nil
			if pr.ContentLength != "" {
				if e.Size, err = strconv.ParseInt(strings.TrimSpace(pr.ContentLength), 10, 64); err != nil {
					return nil, fmt.Errorf("listing: %s: bad getcontentlength %q", e.Name, pr.ContentLength)
				}
			}
			if pr.ETag != "" {
				e.ETag = pr.ETag
			}
			if pr.LastModified != "" {
				e.Modified, _ = http.ParseTime(pr.LastModified)
			}
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func mustPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Path
}

// months lists the share's YYYY-MM folders, oldest first.
func (c *client) months(ctx context.Context) ([]string, error) {
	entries, err := c.list(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Dir && monthPattern.MatchString(e.Name) {
			out = append(out, e.Name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the share %s has no YYYY-MM folder (has the Receita moved the files? set RFB_SHARE_URL)", c.share.Endpoint)
	}
	return out, nil
}

// pickMonth resolves "latest" (or "") to the newest month, and checks a
// named month is on the share.
func (c *client) pickMonth(ctx context.Context, want string) (string, error) {
	if want != "" && want != "latest" && !monthPattern.MatchString(want) {
		return "", fmt.Errorf("month %q is neither YYYY-MM nor latest", want)
	}
	months, err := c.months(ctx)
	if err != nil {
		return "", err
	}
	if want == "" || want == "latest" {
		return months[len(months)-1], nil
	}
	for _, m := range months {
		if m == want {
			return m, nil
		}
	}
	return "", fmt.Errorf("month %s is not on the share (it has %s to %s)", want, months[0], months[len(months)-1])
}
