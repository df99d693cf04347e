package importer_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

// TestKill9 kills `cnpjgraph import` at several points and checks that the
// live snapshot keeps answering unchanged and that the next import cleans up
// and succeeds.
func TestKill9(t *testing.T) {
	t.Parallel()
	d, url := dbtest.New(t)
	bin := filepath.Join(t.TempDir(), "cnpjgraph")
	build := exec.Command("go", "build", "-o", bin, "../cmd/cnpjgraph")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	small := t.TempDir()
	writeDump(t, small, 2000)
	mustImport(t, d, opts(t, small))
	liveID, members := liveState(t, d)
	// The generator, run by the binary: outside the race detector it takes
	// a second or two.
	big := t.TempDir()
	out, err := exec.Command(bin, "generate", "--companies", "120000", "--out", big).CombinedOutput()
	if err != nil {
		t.Fatalf("generate: %v\n%s", err, out)
	}
	var generated struct{ companies, offices, members, simples int }
	if _, err := fmt.Sscanf(string(out[bytes.IndexByte(out, '\n')+1:]), "companies %d, offices %d, members %d, simples %d",
		&generated.companies, &generated.offices, &generated.members, &generated.simples); err != nil {
		t.Fatalf("generate output %q: %v", out, err)
	}

	// Each case waits for a progress line, then kills the importer.
	for _, at := range []struct {
		name  string
		line  string
		delay time.Duration
	}{
		{"during COPY", "loading Estabelecimentos", 300 * time.Millisecond},
		{"during persons", "phase derive", 0},
		{"during index build", "phase derive and index", 50 * time.Millisecond},
	} {
		t.Run(at.name, func(t *testing.T) {
			cmd := exec.Command(bin, "import", "--month", "2026-02", big)
			cmd.Env = append(os.Environ(), "DATABASE_URL="+url)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var seen []string
			sc := bufio.NewScanner(stderr)
			killed := false
			for sc.Scan() {
				seen = append(seen, sc.Text())
				if strings.Contains(sc.Text(), at.line) {
					time.Sleep(at.delay)
					_ = cmd.Process.Signal(syscall.SIGKILL)
					killed = true
					break
				}
			}
			_ = cmd.Wait()
			if !killed {
				t.Fatalf("never saw %q; output:\n%s", at.line, strings.Join(seen, "\n"))
			}
			id, n := liveState(t, d)
			if id != liveID || n != members {
				t.Fatalf("live snapshot changed after kill: #%d %d members, was #%d %d", id, n, liveID, members)
			}
		})
	}

	// The next import ends the orphans, drops their staging and succeeds.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "import", big)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+url)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("import after kills: %v\n%s", err, out)
	}
	var failed int
	if err := d.Get(&failed, `SELECT count(*) FROM snapshots WHERE state = 'failed' AND error LIKE '%stopped before finishing%'`); err != nil || failed != 3 {
		t.Errorf("killed imports recorded as failed: %d, %v", failed, err)
	}
	id, n := liveState(t, d)
	if id == liveID || n != generated.members {
		t.Errorf("after re-import: #%d with %d members", id, n)
	}
}
