package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

// flagsSet are the names of the flags of fs given on the command line.
func flagsSet(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// flagsAtLeastOne names the integer flags of fs, among names, whose value
// is below 1: a count of files, streams, companies or parts. Flags left at
// a default of 0 that means "not given" are skipped unless set.
func flagsAtLeastOne(fs *flag.FlagSet, names ...string) []string {
	set := flagsSet(fs)
	var bad []string
	for _, name := range names {
		f := fs.Lookup(name)
		n, ok := f.Value.(flag.Getter).Get().(int)
		if ok && n < 1 && (set[name] || f.DefValue != "0") {
			bad = append(bad, fmt.Sprintf("--%s must be at least 1 (given %d)", name, n))
		}
	}
	return bad
}

// exitOnBadFlags ends command cmd as bad flags do (exit 2, the usage on
// stderr) when problems name any, each said first.
func exitOnBadFlags(fs *flag.FlagSet, cmd string, problems []string) {
	if len(problems) == 0 {
		return
	}
	fmt.Fprintf(os.Stderr, "cnpjgraph: %s: %s\n", cmd, strings.Join(problems, "; "))
	fs.Usage()
	os.Exit(2)
}
