package main

import "testing"

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
