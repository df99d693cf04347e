package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/internal/syncbuf"
)

// ran is what one run of the command printed, and how it exited.
type ran struct {
	stdout, stderr string
	code           int
}

// cnpjgraph runs the command (command) to its end and returns what it
// printed.
func cnpjgraph(t *testing.T, env []string, args ...string) ran {
	t.Helper()
	cmd := command(env, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := ran{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("cnpjgraph %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// TestOperatorCommands runs an operator's month as the README tells it,
// through the command itself on a database migrate creates: migrate, import
// the real sample, status, a second month's import swapped in, a failed
// import that leaves the live snapshot alone, plans, an account and its
// keys; then serve answers the account's key and refuses the revoked one.
// Each mistake an operator may make is refused with a sentence and exit
// status 1.
func TestOperatorCommands(t *testing.T) {
	// A database that does not exist yet: migrate creates it, as on a new
	// machine.
	u, err := url.Parse(dbtest.NewURL(t)) // dropped when the test ends
	if err != nil {
		t.Fatal(err)
	}
	u.Path += "_new"
	t.Cleanup(func() {
		admin, err := sqlx.Open("postgres", dbtest.AdminURL())
		if err == nil {
			_, _ = admin.Exec("DROP DATABASE IF EXISTS " + strings.TrimPrefix(u.Path, "/") + " WITH (FORCE)")
			_ = admin.Close()
		}
	})
	env := []string{"DATABASE_URL=" + u.String(),
		"SIGNING_KEY=signing-key-for-the-operator-test-0123", "JWT_SECRET=jwt-secret-for-the-operator-test-01234"}
	run := func(args ...string) ran {
		t.Helper()
		r := cnpjgraph(t, env, args...)
		if r.code != 0 {
			t.Fatalf("cnpjgraph %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r
	}
	refused := func(want string, args ...string) {
		t.Helper()
		r := cnpjgraph(t, env, args...)
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("cnpjgraph %s: exit %d, stderr %q; want exit 1 and %q", strings.Join(args, " "), r.code, r.stderr, want)
		}
	}
	contains := func(r ran, what string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%s: output lacks %q:\n%s", what, w, r.stdout)
			}
		}
	}

	// The snapshots.
	for range 2 { // migrate is idempotent
		contains(run("migrate"), "migrate", "migrations applied")
	}
	contains(run("status"), "status before any import", "live snapshot: none")
	data := filepath.Join(dbtest.SharedDir(t), "data")
	importArgs := []string{"import", "--municipalities", filepath.Join(data, "municipios", "TABMUN.CSV"),
		"--countries", filepath.Join(data, "paises", "paises-m49.csv"), filepath.Join(data, "rfb-sample")}
	// The second month without office_lookups (--office-lookups=false).
	for id, month := range []string{"", "2026-02"} {
		args := importArgs
		if month != "" {
			args = append(append([]string{}, importArgs[:1]...), append([]string{"--month", month, "--office-lookups=false"}, importArgs[1:]...)...)
		}
		r := run(args...)
		if want := "snapshot #" + string(rune('1'+id)) + " is live"; !strings.Contains(r.stdout+r.stderr, want) {
			t.Fatalf("import %d: no %q in\n%s%s", id+1, want, r.stdout, r.stderr)
		}
		want := []string{"office lookups: yes", "office lookups: no"}[id]
		// The sample's reference date is 2025-12-07: status says its age and warns.
		contains(run("status"), "status after import "+string(rune('1'+id)), want, "rows:     companies 2, offices 1,",
			"reference date 2025-12-07 (", " days ago)", "warning: the dump is ")
	}
	refused("no such file or directory", "import", filepath.Join(t.TempDir(), "missing"))
	var status struct {
		Live struct {
			ID            int64            `json:"id"`
			DumpMonth     string           `json:"dumpMonth"`
			ReferenceDate time.Time        `json:"referenceDate"`
			FinishedAt    time.Time        `json:"finishedAt"`
			RowCounts     map[string]int64 `json:"rowCounts"`
		} `json:"live"`
		OfficeLookups *bool `json:"officeLookups"`
		Recent        []struct {
			ID    int64  `json:"id"`
			State string `json:"state"`
		} `json:"recent"`
	}
	if err := json.Unmarshal([]byte(run("status", "-json").stdout), &status); err != nil {
		t.Fatal(err)
	}
	// The sample: SERPRO with its one branch, and Open Knowledge Brasil
	// without an office.
	if status.Live.ID != 2 || status.Live.DumpMonth != "2026-02" || status.Live.RowCounts["offices"] != 1 ||
		status.Live.RowCounts["companies"] != 2 {
		t.Errorf("status after the second import and a failed one: live %+v", status.Live)
	}
	switch {
	case status.OfficeLookups == nil:
		t.Error("status -json: no officeLookups")
	case *status.OfficeLookups:
		t.Error("status -json: officeLookups true after an import with --office-lookups=false")
	}
	states := map[int64]string{}
	for _, s := range status.Recent {
		states[s.ID] = s.State
	}
	if states[2] != "live" || states[1] == "live" || states[1] == "" || states[3] == "live" {
		t.Errorf("status: recent imports %v, want #2 live, #1 replaced and #3 failed", states)
	}

	// Plans.
	contains(run("plan", "list"), "plan list", "free", "dev")
	contains(run("plan", "set", "partner", "--credits", "5000", "--rate", "120"), "plan set",
		"plan partner: 5000 credits/day, 120 requests/minute")
	refused("give NAME, --credits and --rate", "plan", "set", "partner", "--credits", "10")
	refused("--credits must be 0 or more and --rate 1 or more (given -5 and 10)", "plan", "set", "partner", "--credits", "-5", "--rate", "10")

	// An account, its credits and keys.
	r := run("account", "create", "acme", "--plan", "partner")
	contains(r, "account create", `"acme" created on plan partner with 5000 credits`)
	key := regexp.MustCompile(`cg_[A-Za-z0-9_-]+`).FindString(r.stdout)
	if key == "" {
		t.Fatalf("account create printed no key:\n%s", r.stdout)
	}
	refused(`account "acme": already exists`, "account", "create", "acme")
	refused("reads as an account id", "account", "create", "2024")
	refused("give --credits, --plan or --permissions", "account", "grant", "acme")
	refused(`plan "nope": not found (cnpjgraph plan list)`, "account", "grant", "acme", "--plan", "nope")
	refused("read:nothing", "account", "create", "other", "--permissions", "read:nothing")
	contains(run("account", "grant", "acme", "--credits", "250"), "account grant", "plan partner, 5250 credits today")
	// A negative grant takes credits back, down to 0.
	contains(run("account", "grant", "acme", "--credits", "-6000"), "account grant back", "plan partner, 0 credits today")
	contains(run("account", "grant", "acme", "--credits", "5250"), "account grant again", "plan partner, 5250 credits today")
	r = run("key", "add", "acme", "--name", "batch", "--permissions", "read:office")
	contains(r, "key add", `"batch" (permissions: read:office)`)
	second := regexp.MustCompile(`cg_[A-Za-z0-9_-]+`).FindString(r.stdout)
	keyID := regexp.MustCompile(`key (\d+) "batch"`).FindStringSubmatch(r.stdout)
	if second == "" || keyID == nil {
		t.Fatalf("key add printed no key:\n%s", r.stdout)
	}
	contains(run("key", "add", "acme", "--permissions", "read:company"), "key add without a name", "(no name: --name gives one) (permissions: read:company)")
	contains(run("key", "list", "acme"), "key list", "default", "batch")
	refused("is not a key id", "key", "revoke", "batch")
	refused("key 999999: not found", "key", "revoke", "999999")
	refused("give 1 (today) or more", "account", "usage", "acme", "--days", "0")
	contains(run("key", "revoke", keyID[1]), "key revoke", "key "+keyID[1]+" revoked")
	// Links and tokens: the account's first key signs a certificate's
	// link (opened below); a revoked key, a route no link opens, a key of
	// nobody are refused.
	firstID := regexp.MustCompile(`(?m)^(\d+) +\S+ +default `).FindStringSubmatch(run("key", "list", "acme").stdout)
	if firstID == nil {
		t.Fatal("key list: no default key")
	}
	certificate := "/rfb/certificate?taxId=" + dbtest.SerproBranch
	link := strings.TrimSpace(run("account", "sign", "acme", certificate, "--key", firstID[1]).stdout)
	if !strings.HasPrefix(link, "/rfb/certificate?") || !strings.Contains(link, "keyId="+firstID[1]) || !strings.Contains(link, "signature=") {
		t.Errorf("account sign: %q", link)
	}
	refused("sign: key "+keyID[1]+" is revoked", "account", "sign", "acme", certificate, "--key", keyID[1])
	refused("a signed URL opens only", "account", "sign", "acme", "/office/"+dbtest.SerproBranch, "--key", firstID[1])
	refused("has no key 999999", "account", "sign", "acme", certificate, "--key", "999999")
	// A lifetime that would print what is refused at once.
	refused("token: --ttl must be a positive duration (given -5m0s)", "account", "token", "acme", "--ttl", "-5m")
	refused("sign: --ttl must be a positive duration (given 0s)", "account", "sign", "acme", certificate, "--key", firstID[1], "--ttl", "0")
	if tok := strings.TrimSpace(run("account", "token", "acme", "--ttl", "10m").stdout); strings.Count(tok, ".") != 2 {
		t.Errorf("account token: %q, want a JWT", tok)
	}
	contains(run("account", "suspend", "acme", "--reason=unpaid"), "account suspend", "suspended: unpaid")
	// Signed while suspended, with a warning: it opens once resumed.
	if r := run("account", "sign", "acme", certificate, "--key", firstID[1]); !strings.Contains(r.stdout, "signature=") ||
		!strings.Contains(r.stderr, "warning: account ") || !strings.Contains(r.stderr, "is suspended (unpaid)") {
		t.Errorf("account sign while suspended: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	contains(run("account", "show", "acme"), "account show", "partner (5000 credits/day, 120 requests/minute)",
		"suspended (unpaid)", "5250")
	contains(run("account", "resume", "acme"), "account resume", "active")
	contains(run("account", "list"), "account list", "acme", "partner", "active")
	contains(run("account", "usage", "acme"), "account usage", "total")

	// The service, over what those commands wrote.
	addr := freePort(t)
	cmd := command(append(env, "ADDR="+addr, "AUTH_KEY_CACHE_TTL=0"), "serve")
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	get := func(path, key string) (int, string) { return httpGet(addr, path, key) }
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if status, _ := get("/healthz", ""); status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve does not answer:\n%s", stderr.String())
		}
	}
	if status, body := get("/office/"+dbtest.SerproBranch, key); status != 200 || !strings.Contains(body, "SERVICO FEDERAL DE PROCESSAMENTO DE DADOS") {
		t.Errorf("the account's key: %d %s", status, body)
	}
	if status, body := get("/office/"+dbtest.SerproBranch, second); status != 401 {
		t.Errorf("the revoked key: %d %s, want 401", status, body)
	}
	// The log says which build serves, first (written out within 100 ms).
	want := `{"time":"`
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(stderr.String(), want) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if first, _, _ := strings.Cut(stderr.String(), "\n"); !strings.Contains(first, `"msg":"cnpjgraph starting","build":"a build without version information, `+runtime.Version()+`"`) {
		t.Errorf("serve's first log line: %s", first)
	}
	// The metrics count the lookups and their one SQL statement each.
	_, metrics := get("/metrics", "")
	for _, want := range []string{
		`cnpjgraph_http_requests_total{method="GET",route="/office/{taxId}",status="200"} 1`,
		`cnpjgraph_http_requests_total{method="GET",route="/office/{taxId}",status="401"} 1`,
		"cnpjgraph_sql_round_trips_total 1\n",
		`go_sql_max_open_connections{db_name="cnpjgraph"} `,
		// A test binary is not stamped with a commit.
		`cnpjgraph_build_info{go_version="` + runtime.Version() + `",modified="false",revision="",version=""} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, metrics)
		}
	}
	// The live snapshot, for an alert on its age.
	for name, want := range map[string]int64{
		"cnpjgraph_snapshot_id":                          status.Live.ID,
		"cnpjgraph_snapshot_reference_timestamp_seconds": status.Live.ReferenceDate.Unix(),
		"cnpjgraph_snapshot_imported_timestamp_seconds":  status.Live.FinishedAt.Unix(),
	} {
		m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(metrics)
		if m == nil {
			t.Errorf("/metrics lacks %s", name)
			continue
		}
		if got, err := strconv.ParseFloat(m[1], 64); err != nil || int64(got) != want || want <= 0 {
			t.Errorf("%s %s, want %d", name, m[1], want)
		}
	}
	// The link `account sign` printed opens without a credential.
	if status, body := get(link, ""); status != 200 || !strings.HasPrefix(body, "%PDF-") {
		t.Errorf("the signed link %s: %d %.100q", link, status, body)
	}
	// The ledger writes its rows every half second, off the request.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r := run("account", "usage", "acme")
		if strings.Contains(r.stdout, "/office/{taxId}") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("account usage after a lookup:\n%s", r.stdout)
		}
	}

	// A dump under half the live snapshot's establishments is refused,
	// unless --allow-shrink.
	bigger := t.TempDir()
	run("generate", "--companies", "40", "--out", bigger)
	run(append(append([]string{}, importArgs[:len(importArgs)-1]...), bigger)...)
	refused("import it anyway with --allow-shrink", importArgs...)
	r = run(append([]string{"import", "--allow-shrink"}, importArgs[1:]...)...)
	if !strings.Contains(r.stdout, "is live") {
		t.Errorf("import --allow-shrink: %s%s", r.stdout, r.stderr)
	}
}
