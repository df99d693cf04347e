package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/config"
	"github.com/cnpjgraph/cnpjgraph/config/configtest"
)

// TestMain lets a test run the command itself: with CNPJGRAPH_RUN_MAIN set,
// the test binary is cnpjgraph, its arguments in CNPJGRAPH_ARGS.
func TestMain(m *testing.M) {
	if os.Getenv("CNPJGRAPH_RUN_MAIN") != "" {
		os.Args = append([]string{"cnpjgraph"}, strings.Fields(os.Getenv("CNPJGRAPH_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// command is cnpjgraph with args (TestMain), the test's environment plus
// env. Arguments must not hold spaces (CNPJGRAPH_ARGS is split on them).
func command(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "CNPJGRAPH_RUN_MAIN=1", "CNPJGRAPH_ARGS="+strings.Join(args, " ")), env...)
	return cmd
}

// httpGet GETs path from addr, with key in Authorization unless empty, and
// returns the status (0 when nothing answered) and body.
func httpGet(addr, path, key string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return 0, err.Error()
	}
	if key != "" {
		req.Header.Set("Authorization", key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestServeRefusesInvalidSettings starts `cnpjgraph serve` with an invalid
// value in each setting: it exits at once, with a message naming it.
func TestServeRefusesInvalidSettings(t *testing.T) {
	for _, v := range config.Variables() {
		bad, ok := configtest.InvalidValue(v)
		if !ok {
			continue // free text: no value is wrong
		}
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			// A database nobody listens on: were the setting accepted, serve
			// would fail there instead, without naming it.
			cmd := command([]string{"DATABASE_URL=postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=1",
				v.Name + "=" + bad}, "serve")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
				t.Fatalf("serve with %s=%q: %v, want exit status 1", v.Name, bad, err)
			}
			if want := "cnpjgraph: configuration: " + v.Name + ": "; !strings.HasPrefix(stderr.String(), want) {
				t.Errorf("stderr %q, want it to start with %q", stderr.String(), want)
			}
		})
	}
}

// TestVersion: `cnpjgraph version` (and --version) prints the build in one
// line; a test binary has no commit stamped, and says so.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		out, err := command(nil, arg).CombinedOutput()
		want := "cnpjgraph a build without version information, " + runtime.Version() + "\n"
		if err != nil || string(out) != want {
			t.Errorf("%s: %v, %q, want %q", arg, err, out, want)
		}
	}
}
