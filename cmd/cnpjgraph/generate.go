package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cnpjgraph/cnpjgraph/importer/generator"
)

func init() { commands["generate"] = runGenerate }

// runGenerate writes a synthetic dump in the published format, for `make run`,
// tests and benchmarks.
func runGenerate(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("generate", flag.ExitOnError)
	companies := fs.Int("companies", 10000, "number of companies (roots); offices come out about 1.2 per company")
	out := fs.String("out", "", "output directory, created if missing (required)")
	seed := fs.Int64("seed", 1, "random seed: the same seed gives byte-identical files")
	offices := fs.Int("establishments", 0, "size the dump by establishments instead: about this many offices (overrides --companies)")
	parts := fs.Int("parts", 10, "ZIP parts of Empresas, Estabelecimentos and Socios")
	_ = fs.Parse(args)
	var bad []string
	if *out == "" || fs.NArg() > 0 {
		bad = append(bad, "--out DIR is required and no arguments are accepted")
	}
	exitOnBadFlags(fs, "generate", append(bad, flagsAtLeastOne(fs, "companies", "establishments", "parts")...))
	if *offices > 0 {
		*companies = generator.CompaniesForOffices(*offices)
	}
	start := time.Now()
	sum, err := generator.Generate(generator.Options{Companies: *companies, Out: *out, Seed: *seed, Parts: *parts})
	if err != nil {
		return err
	}
	var size int64
	for _, f := range sum.Files {
		if st, err := os.Stat(f); err == nil {
			size += st.Size()
		}
	}
	fmt.Printf("wrote %d files (%.1f MiB) to %s in %s, dump date %s\n", len(sum.Files), float64(size)/(1<<20),
		filepath.Clean(*out), time.Since(start).Round(time.Millisecond), sum.DumpDate.Format("2006-01-02"))
	fmt.Printf("companies %d, offices %d, members %d, simples %d\n", sum.Companies, sum.Offices, sum.Members, sum.Simples)
	return nil
}
