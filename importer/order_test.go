package importer

import (
	"slices"
	"strings"
	"testing"
)

// TestBuildOrder: every statement of the index phase has its place in
// buildOrder (a new index must be placed by its cost), none is dropped or
// repeated, and the primary keys come first.
func TestBuildOrder(t *testing.T) {
	for _, words := range []bool{false, true} {
		stmts := indexStatements(words)
		var names []string
		for _, s := range stmts {
			n := builtName(s)
			if !slices.Contains(buildOrder, n) {
				t.Errorf("%q (%s) is not in buildOrder", n, s)
			}
			if slices.Contains(names, n) {
				t.Errorf("%q twice", n)
			}
			names = append(names, n)
		}
		if words != slices.Contains(names, "office_words_word") || words != slices.Contains(names, "person_words_word") {
			t.Errorf("word tables %v: statements %v", words, names)
		}
		for i, s := range stmts {
			if strings.Contains(s, "PRIMARY KEY") && i > 0 && !strings.Contains(stmts[i-1], "PRIMARY KEY") {
				t.Errorf("primary key %q after an index build: %v", s, names)
			}
		}
		if got, want := len(stmts), strings.Count(strings.Join(stmts, " "), "CREATE ")+strings.Count(strings.Join(stmts, " "), "ALTER TABLE"); got != want {
			t.Errorf("%d statements, %d builds in them", got, want)
		}
	}
}
