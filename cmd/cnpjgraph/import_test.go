package main

import (
	"flag"
	"io"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/importer"
)

// TestChoiceFlags: -word-tables and -office-lookups, each on its own.
func TestChoiceFlags(t *testing.T) {
	for _, c := range []struct {
		args                 []string
		words, officeLookups importer.Choice
	}{
		{nil, importer.AsLive, importer.AsLive},
		{[]string{"-word-tables"}, importer.On, importer.AsLive},
		{[]string{"--word-tables=true"}, importer.On, importer.AsLive},
		{[]string{"-word-tables=false"}, importer.Off, importer.AsLive},
		{[]string{"-office-lookups=false"}, importer.AsLive, importer.Off},
		{[]string{"-office-lookups", "-word-tables=false"}, importer.Off, importer.On},
	} {
		fs := flag.NewFlagSet("import", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Bool("word-tables", false, "")
		fs.Bool("office-lookups", false, "")
		fs.Bool("v", false, "")
		if err := fs.Parse(append(c.args, "-v")); err != nil {
			t.Fatal(err)
		}
		if w, o := choiceFlag(fs, "word-tables"), choiceFlag(fs, "office-lookups"); w != c.words || o != c.officeLookups {
			t.Errorf("%v: word tables %d, office lookups %d; want %d, %d", c.args, w, o, c.words, c.officeLookups)
		}
	}
}
