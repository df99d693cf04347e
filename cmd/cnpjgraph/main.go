// Command cnpjgraph loads the Receita Federal's CNPJ dump into PostgreSQL and
// serves it over REST and GraphQL.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cnpjgraph/cnpjgraph/internal/buildinfo"
)

const usage = `cnpjgraph: the Brazilian company registry (CNPJ), self-hosted.

Usage:
  cnpjgraph serve                      serve REST, GraphQL and the playground
  cnpjgraph migrate                    apply database migrations
  cnpjgraph import [flags] PATH...     import a Receita Federal dump (ZIPs or extracted files)
  cnpjgraph download [flags] DIR       fetch a month of the Receita Federal's share into DIR/YYYY-MM
  cnpjgraph sync [flags]               download and import the share's newest month if newer than the live one
  cnpjgraph status                     print the snapshot being served and recent imports
  cnpjgraph generate [flags]           write a synthetic dump in the published format
  cnpjgraph dev                        migrate, import a generated sample and serve (make run)
  cnpjgraph account SUBCOMMAND         accounts: create|list|show|suspend|resume|grant|usage|token|sign
  cnpjgraph key SUBCOMMAND             API keys: add|list|revoke
  cnpjgraph plan SUBCOMMAND            plans: list|set
  cnpjgraph version                    print the build: its commit (or release) and Go version

Run 'cnpjgraph COMMAND -h' for the flags of a command. Configuration comes from
environment variables; see README.md.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	name, args := os.Args[1], os.Args[2:]
	switch name {
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	case "version", "--version", "-version":
		fmt.Println("cnpjgraph " + buildinfo.Read().String())
		return
	}
	run, ok := commands[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "cnpjgraph: unknown command %q\n\n%s", name, usage)
		os.Exit(2)
	}
	if err := run(ctx, args); err != nil {
		fatalf("%s: %v", name, err)
	}
}

// commands maps a subcommand to its function; each lives in its own file.
var commands = map[string]func(ctx context.Context, args []string) error{
	"migrate": runMigrate,
	"status":  runStatus,
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "cnpjgraph: "+format+"\n", args...)
	os.Exit(1)
}
