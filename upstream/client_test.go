package upstream_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/upstream"
)

// source is a scripted source: each request gets the next answer (the last
// one repeats).
func source(t *testing.T, answers ...func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		answers[min(i, len(answers)-1)](w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func status(code int, body string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

// A registrations answer as the commercial API shapes it: more fields than
// we use, which are ignored.
const commercialOffice = `{"updated":"2026-11-01T12:30:00Z","taxId":"33683111000280",
	"registrations":[{"number":"0734779900141","state":"DF","enabled":true,"statusDate":"2004-05-22",
	"status":{"id":1,"text":"Sem restrição"},"type":{"id":1,"text":"IE Normal"}}]}`

func client(t *testing.T, url string, edit func(*upstream.Config)) *upstream.Client {
	t.Helper()
	cfg := upstream.Config{URL: url, Key: "secret-key", BreakerFailures: -1}
	if edit != nil {
		edit(&cfg)
	}
	c, err := upstream.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const serpro = cnpj.CNPJ("33683111000280")

func TestClientRequest(t *testing.T) {
	var got *http.Request
	srv, _ := source(t, func(w http.ResponseWriter, r *http.Request) {
		got = r
		status(200, commercialOffice)(w, r)
	})
	regs, err := client(t, srv.URL, nil).Registrations(context.Background(), serpro, []string{"BR"})
	if err != nil || len(regs) != 1 || regs[0].State != "DF" || regs[0].Number != "0734779900141" || !regs[0].Enabled {
		t.Fatalf("registrations: %+v %v", regs, err)
	}
	if got.Header.Get("Authorization") != "secret-key" {
		t.Errorf("Authorization %q: the key goes raw", got.Header.Get("Authorization"))
	}
	if ua := got.Header.Get("User-Agent"); !strings.HasPrefix(ua, "cnpjgraph/") {
		t.Errorf("User-Agent %q: the source's operators cannot tell who asks", ua)
	}
	if got.URL.Path != "/office/"+string(serpro) || got.URL.Query().Get("registrations") != "BR" ||
		got.URL.Query().Get("strategy") != "CACHE_IF_ERROR" || got.URL.Query().Get("maxAge") != "1" {
		t.Errorf("request %s", got.URL)
	}

	// ONLINE sends no maxAge (the contract rejects the pair).
	c := client(t, srv.URL, func(c *upstream.Config) { c.Strategy = "ONLINE" })
	if _, err := c.Registrations(context.Background(), serpro, []string{"BR"}); err != nil {
		t.Fatal(err)
	}
	if q := got.URL.Query(); q.Get("strategy") != "ONLINE" || q.Has("maxAge") {
		t.Errorf("ONLINE request %s", got.URL)
	}
}

func TestClientFailures(t *testing.T) {
	// Registrations come from the CCC: its failures name it.
	notRegistered := `{"code":404,"message":"tax id not registered at revenue service"}`
	cases := []struct {
		name    string
		answers []func(http.ResponseWriter, *http.Request)
		calls   int64
		want    string // fault message, "" for success
	}{
		{"503 then success: retried", []func(http.ResponseWriter, *http.Request){status(503, `{}`), status(200, commercialOffice)}, 2, ""},
		{"502 twice then success", []func(http.ResponseWriter, *http.Request){status(502, ``), status(502, ``), status(200, commercialOffice)}, 3, ""},
		{"503 always: at most 2 retries", []func(http.ResponseWriter, *http.Request){status(503, `{}`)}, 3, fault.MsgOfflineCCC},
		{"500 is not retried", []func(http.ResponseWriter, *http.Request){status(500, `{"code":500,"message":"unexpected error"}`)}, 1, fault.MsgOfflineCCC},
		{"bad JSON is offline", []func(http.ResponseWriter, *http.Request){status(200, `{"registrations":[`)}, 1, fault.MsgOfflineCCC},
		{"not registered", []func(http.ResponseWriter, *http.Request){status(404, notRegistered)}, 1, fault.MsgTaxIDNotFound},
		{"another 404 (wrong base URL) is offline", []func(http.ResponseWriter, *http.Request){status(404, `{"code":404,"message":"Cannot GET /x"}`)}, 1, fault.MsgOfflineCCC},
		{"bad credential is offline", []func(http.ResponseWriter, *http.Request){status(401, `{"code":401,"message":"invalid authorization"}`)}, 1, fault.MsgOfflineCCC},
		{"source timeout", []func(http.ResponseWriter, *http.Request){status(504, `{"code":504,"message":"failed to fulfill request within timeout"}`)}, 1, fault.MsgTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, n := source(t, c.answers...)
			_, err := client(t, srv.URL, nil).Registrations(context.Background(), serpro, []string{"BR"})
			if f := fault.Classify(err); (c.want == "") != (err == nil) || err != nil && f.Message != c.want {
				t.Errorf("err %v, want %q", err, c.want)
			}
			if n.Load() != c.calls {
				t.Errorf("%d calls, want %d", n.Load(), c.calls)
			}
		})
	}
}

// TestClientConnectionRefused: a source that is down is retried, then
// offline; retries never outlive the deadline.
func TestClientConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := client(t, url, nil)
	_, err := c.Simples(context.Background(), serpro)
	if f := fault.Classify(err); f.Message != fault.MsgOffline {
		t.Errorf("connection refused: %v", err)
	}

	slow, _ := source(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	c = client(t, slow.URL, func(c *upstream.Config) {
		c.Timeouts = map[string]time.Duration{upstream.PortalSimples: 100 * time.Millisecond}
	})
	start := time.Now()
	_, err = c.Simples(context.Background(), serpro)
	if f := fault.Classify(err); f.Message != fault.MsgTimeout || time.Since(start) > time.Second {
		t.Errorf("slow source: %v after %v", err, time.Since(start))
	}
}

func TestClientConfig(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "localhost:8080", "http://"} {
		if _, err := upstream.New(upstream.Config{URL: u}); err == nil {
			t.Errorf("URL %q accepted", u)
		}
	}
	if _, err := upstream.New(upstream.Config{URL: "http://x", Portals: []string{"rfb", "sintegra"}}); err == nil {
		t.Errorf("unknown portal accepted")
	}
	c, err := upstream.New(upstream.Config{URL: "http://x/api/", Portals: []string{"rfb"}})
	if err != nil || !c.Serves("rfb") || c.Serves("simples") || c.Serves("ccc") {
		t.Errorf("portals: %v", err)
	}
	_, err = c.Simples(context.Background(), serpro)
	if f := fault.Classify(err); f.Message != fault.MsgOffline {
		t.Errorf("a portal not fetched online: %v", err)
	}
}
