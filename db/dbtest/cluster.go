package dbtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// PostgresBin is where Debian installs the PostgreSQL 15 server programs.
var PostgresBin = "/usr/lib/postgresql/15/bin"

// Cluster is a private PostgreSQL server a test can stop and start, to see
// how the service behaves when its database goes away and comes back.
type Cluster struct {
	t    testing.TB
	dir  string
	port int
}

// StartCluster initialises and starts a private cluster on a free port on
// 127.0.0.1; it is stopped and removed when the test ends. As root it runs
// the server as the postgres user, which PostgreSQL requires.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "cnpjgraph-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("dbtest: running as root needs a postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	c := &Cluster{t: t, dir: dir, port: port}
	c.run("initdb", "-D", c.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	c.Start()
	t.Cleanup(func() { c.run2("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop") })
	return c
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// URL is the cluster's postgres database.
func (c *Cluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// Start starts the server and waits until it accepts connections.
func (c *Cluster) Start() {
	c.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", c.port, c.dir)
	c.run("pg_ctl", "-D", c.data(), "-o", opts, "-l", filepath.Join(c.dir, "log"), "-w", "start")
}

// Stop shuts the server down at once, breaking every connection.
func (c *Cluster) Stop() {
	c.t.Helper()
	c.run("pg_ctl", "-D", c.data(), "-m", "fast", "-w", "stop")
}

func (c *Cluster) run(prog string, args ...string) {
	c.t.Helper()
	if out, err := c.command(prog, args...).CombinedOutput(); err != nil {
		c.t.Fatalf("dbtest: %s: %v\n%s", prog, err, out)
	}
}

// run2 runs without failing the test: for cleanups.
func (c *Cluster) run2(prog string, args ...string) {
	_, _ = c.command(prog, args...).CombinedOutput()
}

func (c *Cluster) command(prog string, args ...string) *exec.Cmd {
	path := filepath.Join(PostgresBin, prog)
	if os.Geteuid() != 0 {
		return exec.Command(path, args...)
	}
	quoted := []string{shellQuote(path)}
	for _, a := range args {
		quoted = append(quoted, shellQuote(a))
	}
	return exec.Command("su", "postgres", "-s", "/bin/sh", "-c", strings.Join(quoted, " "))
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
