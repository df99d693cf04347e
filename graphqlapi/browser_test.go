package graphqlapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestPlaygroundInBrowser loads /playground in headless Chromium, runs the
// example query with GraphiQL's execute button and waits for the answer in
// the result pane, then does the same with the second tab's search. It keeps a screenshot in testdata/artifacts/playground.png
// at the repository root, and fails if the page asked for anything outside
// the test server: the playground must work with no internet. Then the
// same behind a proxy that serves the API under /cnpj (PUBLIC_URL's path):
// the page must ask for everything under it.
func TestPlaygroundInBrowser(t *testing.T) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium not found: run scripts/test-tools.sh (make test does) to install Debian's chromium")
	}
	t.Run("at the root", func(t *testing.T) { playgroundInBrowser(t, browser, "") })
	t.Run("under a proxy's path", func(t *testing.T) { playgroundInBrowser(t, browser, "/cnpj") })
}

func playgroundInBrowser(t *testing.T, browser, base string) {
	s := newServer(t, serverOptions{playgroundBase: base})
	h := s.h
	if base != "" {
		h = http.StripPrefix(base, s.h) // what the proxy does
	}
	srv := httptest.NewServer(h) // listens on 127.0.0.1
	defer srv.Close()
	res, err := http.Get(srv.URL + base + "/playground")
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /playground: %d (are the assets built? make playground-assets)", res.StatusCode)
	}

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		// Networking to loopback only: no name resolves but the test server's.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.UserDataDir(t.TempDir()),
		// Chromium's own temporary files (its profile's singleton socket)
		// go with the test's, not into /tmp for good.
		chromedp.Env("TMPDIR=" + t.TempDir()),
		chromedp.WindowSize(1400, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()

	var mu sync.Mutex
	var requested []string
	var authorization []string
	// The first call starts the browser, so its context has no timeout.
	err = chromedp.Listen(bctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			defer mu.Unlock()
			requested = append(requested, e.Request.URL)
			if strings.HasSuffix(e.Request.URL, "/graphql") && e.Request.Method == http.MethodPost {
				auth, _ := e.Request.Headers["Authorization"].(string)
				authorization = append(authorization, auth)
			}
		}
	})
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()

	const company = "SERVICO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)"
	err = chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+base+"/playground"),
		chromedp.WaitVisible(chromedp.CSS(".graphiql-execute-button")),
		chromedp.Click(chromedp.CSS(".graphiql-execute-button")),
	)
	if err == nil {
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const r = document.querySelector('.graphiql-response');
			return !!r && r.innerText.includes(`+quote(company)+`); })()`, chromedp.WithPollingTimeout(30*time.Second)))
	}
	// The second tab holds a search: run it too.
	if err == nil {
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const tabs = document.querySelectorAll('.graphiql-tab-button');
			if (tabs.length < 2) return false; tabs[1].click(); return true; })()`, chromedp.WithPollingTimeout(10*time.Second)))
	}
	if err == nil {
		// GraphiQL reads the tab's operation name from its editor a moment
		// after the switch; run before that, it sends the first tab's.
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const q = document.querySelector('.graphiql-query-editor');
			return !!q && q.innerText.includes('query Search'); })()`, chromedp.WithPollingTimeout(10*time.Second)))
	}
	if err == nil {
		err = chromedp.Do(ctx, chromedp.Sleep(time.Second), chromedp.Click(chromedp.CSS(".graphiql-execute-button")))
	}
	if err == nil {
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const r = document.querySelector('.graphiql-response');
			return !!r && r.innerText.includes('"searchOffices"') && r.innerText.includes('"totalCount"'); })()`,
			chromedp.WithPollingTimeout(30*time.Second)))
	}
	if png, shotErr := chromedp.Run(ctx, chromedp.CaptureScreenshot()); shotErr == nil && base == "" {
		saveArtifact(t, "playground.png", png)
	}
	if err != nil {
		t.Fatalf("browser: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, u := range requested {
		if !strings.HasPrefix(u, srv.URL+base+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") {
			t.Errorf("the page requested %s, outside the server's %s/", u, base)
		}
	}
	// The page opens with the development key in the Authorization header.
	found := false
	for _, a := range authorization {
		found = found || a == "dev-key"
	}
	if !found {
		t.Errorf("no POST /graphql with the configured API key; Authorization headers seen: %q", authorization)
	}
	t.Logf("%d requests, all to %s%s/", len(requested), srv.URL, base)
}

// saveArtifact writes a test artifact under the repository root's
// testdata/artifacts/ (ignored by git).
func saveArtifact(t *testing.T, name string, data []byte) {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
	out := filepath.Join(dir, "testdata", "artifacts")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
