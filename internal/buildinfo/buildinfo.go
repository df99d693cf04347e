// Package buildinfo says which build of cnpjgraph is running: the commit
// Go stamps into a binary built in a git checkout (make build), or the
// version `go install` fetched. `cnpjgraph version`, serve's log and its
// /metrics report it, so an operator can tell which code answers.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/mod/module"
)

// Info describes a build.
type Info struct {
	// Version is the module's version when it is a release (v1.2.0, from
	// `go install ...@v1.2.0`); empty for a build of a checkout.
	Version string
	// Revision is the commit built, 12 hex digits; empty when the build
	// was not stamped (built outside a checkout, or with -buildvcs=false).
	Revision string
	Time     time.Time // the commit's time; zero when not stamped
	Modified bool      // built with uncommitted changes
	Go       string    // the Go release that built it
}

// Read returns the running binary's Info.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Go: runtime.Version()}
	}
	return Of(bi)
}

// Of reads Info from Go's build information.
func Of(bi *debug.BuildInfo) Info {
	info := Info{Go: bi.GoVersion}
	if v := bi.Main.Version; v != "" && v != "(devel)" && !module.IsPseudoVersion(v) {
		info.Version = strings.TrimSuffix(v, "+dirty")
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value[:min(12, len(s.Value))]
		case "vcs.time":
			info.Time, _ = time.Parse(time.RFC3339, s.Value)
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// String is the one line `cnpjgraph version` prints:
// "6d203e30a4d1 (2026-11-30 12:51 UTC), go1.26.0", "v1.2.0, go1.26.0", or,
// unstamped, "a build without version information, go1.26.0".
func (i Info) String() string {
	var b strings.Builder
	switch {
	case i.Revision != "":
		if i.Version != "" {
			b.WriteString(i.Version + " ")
		}
		b.WriteString(i.Revision)
		if i.Modified {
			b.WriteString(" with uncommitted changes")
		}
		if !i.Time.IsZero() {
			b.WriteString(" (" + i.Time.UTC().Format("2006-01-02 15:04 UTC") + ")")
		}
	case i.Version != "":
		b.WriteString(i.Version)
	default:
		b.WriteString("a build without version information")
	}
	return b.String() + ", " + i.Go
}

// UserAgent names cnpjgraph and its build in the requests it sends (the
// Receita's share, an upstream, map and geocoding providers), so their
// operators can tell who asks, as Nominatim's usage policy asks:
// "cnpjgraph/6d203e30a4d1 (+https://github.com/cnpjgraph/cnpjgraph)".
func UserAgent() string { return userAgent }

var userAgent = func() string {
	i := Read()
	build := i.Revision
	if i.Version != "" {
		build = i.Version
	}
	if build == "" {
		build = "dev"
	}
	return "cnpjgraph/" + build + " (+https://github.com/cnpjgraph/cnpjgraph)"
}()
