package main

import (
	"strings"
	"testing"
	"time"
)

// TestStatusText: status words a snapshot's row counts and rejected rows
// for a reader, as importer stores them.
func TestStatusText(t *testing.T) {
	rows := rowCountsText([]byte(`{"roles": 18, "members": 419454, "offices": 1000083, "companies": 806191, "activities": 66}`))
	if want := "companies 806,191, offices 1,000,083, members 419,454\n            code tables: activities 66, roles 18"; rows != want {
		t.Errorf("rows:\n%s\nwant\n%s", rows, want)
	}
	if got := rejectedText([]byte(`{"files": {}, "total": 0, "samples": []}`)); got != "none" {
		t.Errorf("nothing rejected: %q", got)
	}
	got := rejectedText([]byte(`{"total": 1203, "files": {"Socios1.zip": 3, "Estabelecimentos0.zip": 1200},
		"samples": [{"file": "Estabelecimentos0.zip", "line": 45, "reason": "13 fields, want 30"}]}`))
	if want := "1,203 rows (Estabelecimentos0.zip 1,200, Socios1.zip 3); the first: Estabelecimentos0.zip line 45: 13 fields, want 30 (status -json lists up to 10)"; got != want {
		t.Errorf("rejected:\n%s\nwant\n%s", got, want)
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567", 100000: "100,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
	if got := rowCountsText([]byte(`null`)); got != "null" {
		t.Errorf("no counts: %q", got)
	}
}

// TestDumpAge: how old the live dump is, in whole UTC days.
func TestDumpAge(t *testing.T) {
	ref := time.Date(2026, 10, 6, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		now  time.Time
		days int
		age  string
	}{
		{time.Date(2026, 10, 6, 23, 59, 0, 0, time.UTC), 0, "today"},
		{time.Date(2026, 10, 7, 0, 1, 0, 0, time.UTC), 1, "1 day ago"},
		{time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC), 45, "45 days ago"},
		{time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC), 46, "46 days ago"},
		{time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC), 0, "today"}, // a clock behind the dump's date
	} {
		if days, age := dumpAge(ref, c.now); days != c.days || age != c.age {
			t.Errorf("dumpAge at %s = %d, %q; want %d, %q", c.now, days, age, c.days, c.age)
		}
	}
}

// TestBadFlags: counts below 1 and a share outside 0..1 are refused by
// their flag's name, as bad flags (exit 2), before anything is read,
// downloaded or written (0 once meant the default silently, a share of 2
// tolerated every row); generate writes a small dump.
func TestBadFlags(t *testing.T) {
	out := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"generate", "--out", out, "--establishments", "0"}, "--establishments must be at least 1 (given 0)"},
		{[]string{"generate", "--out", out, "--companies", "-5"}, "--companies must be at least 1 (given -5)"},
		{[]string{"generate", "--out", out, "--parts", "0"}, "--parts must be at least 1 (given 0)"},
		{[]string{"generate", "--companies", "5"}, "--out DIR is required"},
		{[]string{"import", "--streams", "0", out}, "cnpjgraph: import: --streams must be at least 1 (given 0)"},
		{[]string{"import", "--max-rejected", "2", out}, "--max-rejected is a share of a file's rows, from 0 to 1 (given 2;"},
		{[]string{"import", "--max-rejected", "-0.1", "--streams", "-1", out}, "--streams must be at least 1 (given -1); --max-rejected"},
		{[]string{"download", "--jobs", "0", out}, "cnpjgraph: download: --jobs must be at least 1 (given 0)"},
		{[]string{"sync", "--jobs", "0", "--streams", "0"}, "cnpjgraph: sync: --jobs must be at least 1 (given 0); --streams must be at least 1 (given 0)"},
	} {
		if r := cnpjgraph(t, nil, c.args...); r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if r := cnpjgraph(t, nil, "generate", "--out", out, "--companies", "5", "--parts", "2"); r.code != 0 ||
		!strings.Contains(r.stdout, "companies 5, offices ") {
		t.Errorf("generate: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}
