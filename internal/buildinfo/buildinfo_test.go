package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestOf(t *testing.T) {
	stamped := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "6d203e30a4d1b6153c41d91beb931bc14ec30446"},
		{Key: "vcs.time", Value: "2026-11-30T12:51:27Z"},
		{Key: "vcs.modified", Value: "false"},
	}
	modified := append(stamped[:3:3], debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	for _, c := range []struct {
		name     string
		version  string
		settings []debug.BuildSetting
		want     string
	}{
		{"make build in a checkout", "v0.0.0-20261130125127-6d203e30a4d1", stamped, "6d203e30a4d1 (2026-11-30 12:51 UTC), go1.26.0"},
		{"uncommitted changes", "v0.0.0-20261130125127-6d203e30a4d1+dirty", modified, "6d203e30a4d1 with uncommitted changes (2026-11-30 12:51 UTC), go1.26.0"},
		{"a checkout after a tag", "v1.2.4-0.20261130125127-6d203e30a4d1", stamped, "6d203e30a4d1 (2026-11-30 12:51 UTC), go1.26.0"},
		{"a tagged commit", "v1.2.0", stamped, "v1.2.0 6d203e30a4d1 (2026-11-30 12:51 UTC), go1.26.0"},
		{"go install @v1.2.0", "v1.2.0", nil, "v1.2.0, go1.26.0"},
		{"-buildvcs=false", "(devel)", nil, "a build without version information, go1.26.0"},
	} {
		bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/cnpjgraph/cnpjgraph", Version: c.version}, Settings: c.settings}
		if got := Of(bi).String(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestUserAgent: a test binary is not stamped, and says it is a development build.
func TestUserAgent(t *testing.T) {
	if got, want := UserAgent(), "cnpjgraph/dev (+https://github.com/cnpjgraph/cnpjgraph)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
