package main

import (
	"flag"
	"io"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/importer"
)

func TestWordTablesFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want importer.WordTables
	}{
		{nil, importer.WordTablesAsLive},
		{[]string{"-word-tables"}, importer.WordTablesOn},
		{[]string{"--word-tables=true"}, importer.WordTablesOn},
		{[]string{"-word-tables=false"}, importer.WordTablesOff},
	} {
		fs := flag.NewFlagSet("import", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Bool("word-tables", false, "")
		fs.Bool("v", false, "")
		if err := fs.Parse(append(c.args, "-v")); err != nil {
			t.Fatal(err)
		}
		if got := wordTablesFlag(fs); got != c.want {
			t.Errorf("%v: %d, want %d", c.args, got, c.want)
		}
	}
}
