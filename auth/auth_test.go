package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// clock is a settable time source shared by the service under test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// testRender stands in for package fault's renderer: the contract's bodies.
func testRender(w http.ResponseWriter, _ *http.Request, err error) {
	body := map[string]any{}
	var (
		susp *SuspendedError
		priv *PrivilegeError
		rate *RateLimitError
		cred *CreditsError
	)
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrMissing):
		code, body["message"] = 401, "missing authorization"
	case errors.Is(err, ErrInvalid):
		code, body["message"] = 401, "invalid authorization"
	case errors.As(err, &susp):
		code, body["message"], body["reason"] = 403, "account has been suspended", susp.Reason
	case errors.As(err, &priv):
		code, body["message"], body["permission"] = 403, "not enough privileges", priv.Permission
	case errors.As(err, &rate):
		w.Header().Set("Retry-After", rate.RetryAfterSeconds())
		code, body["message"] = 429, "rate limit exceeded"
	case errors.As(err, &cred):
		code, body["message"], body["required"], body["remaining"] = 429, "not enough credits", cred.Required, cred.Remaining
	default:
		body["message"] = "unexpected error"
	}
	body["code"] = code
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

func redisURL() string {
	if u := os.Getenv("TEST_REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

type env struct {
	t     *testing.T
	db    *sqlx.DB
	clock *clock
	svc   *Service
	srv   *httptest.Server
}

// newEnv starts a service on a fresh database with a fake clock at noon UTC,
// behind a chi router with the routes the tests need.
func newEnv(t *testing.T, mutate ...func(*Config)) *env {
	t.Helper()
	d, _ := dbtest.New(t)
	d.SetMaxOpenConns(16) // the test server is shared; a service's pool is sized by its owner
	c := &clock{t: time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)}
	e := &env{t: t, db: d, clock: c}
	e.svc, e.srv = e.start(mutate...)
	return e
}

// start builds another service (an "instance") over the same database.
func (e *env) start(mutate ...func(*Config)) (*Service, *httptest.Server) {
	e.t.Helper()
	cfg := Config{DB: e.db, JWTSecret: []byte("jwt-secret-for-tests"), SigningKey: []byte("signing-key-for-tests"),
		Now: e.clock.Now, LedgerInterval: 20 * time.Millisecond}
	for _, m := range mutate {
		m(&cfg)
	}
	svc, err := New(context.Background(), cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	srv := httptest.NewServer(router(svc))
	e.t.Cleanup(func() { srv.Close(); _ = svc.Close() })
	return svc, srv
}

// router serves the routes the tests need. Each stands for a service
// lookup: admitted and priced through the Meter, as the service layer does,
// at the contract's default prices.
func router(svc *Service) http.Handler {
	r := chi.NewRouter()
	r.Use(svc.Middleware(DoorPermission, testRender))
	m := svc.Meter()
	prices := service.DefaultPrices
	ok := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write([]byte(`{}`))
	}
	lookup := func(permission string, price int, then http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if err := m.Admit(r.Context(), permission); err != nil {
				testRender(w, r, err)
				return
			}
			if err := m.Reserve(r.Context(), price); err != nil {
				testRender(w, r, err)
				return
			}
			then(w, r)
		}
	}
	r.Get("/office/{taxId}", lookup(ReadOffice, 0, ok)) // a cached answer: free
	r.Get("/company/{id}", lookup(ReadCompany, 0, ok))
	r.Get("/rfb/certificate", lookup(ReadCertificate, prices.Certificate, ok))
	r.Get("/simples/certificate", lookup(ReadCertificate, prices.Certificate, ok))
	r.Get("/office/{taxId}/map", lookup(ReadMap, prices.Map, ok))
	r.Get("/office/{taxId}/street", lookup(ReadStreet, prices.Street, ok))
	r.Get("/rfb", lookup(ReadRFB, prices.Online, func(w http.ResponseWriter, _ *http.Request) {
		// Online, then the upstream fails: the error answer is refunded.
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"code":503,"message":"rfb data fetching is offline"}`))
	}))
	r.Get("/simples", lookup(ReadSimples, prices.Online, func(w http.ResponseWriter, r *http.Request) {
		// Online, the upstream fails, and the answer comes from the cache
		// (CACHE_IF_ERROR): the service gives the online price back, and
		// the answer is a success.
		m.Refund(r.Context(), prices.Online)
		ok(w, r)
	}))
	r.Post("/graphql", func(w http.ResponseWriter, r *http.Request) {
		// A query of n office lookups costing cost credits each.
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		cost, _ := strconv.Atoi(r.URL.Query().Get("cost"))
		for range n {
			if err := m.Admit(r.Context(), ReadOffice); err != nil {
				testRender(w, r, err)
				return
			}
			if err := m.Reserve(r.Context(), cost); err != nil {
				testRender(w, r, err)
				return
			}
		}
		ok(w, r)
	})
	return r
}

// account creates an account on a plan made for the test, and a key.
func (e *env) account(credits int64, rate int, perms []string) (Account, string) {
	e.t.Helper()
	ctx := context.Background()
	plan := fmt.Sprintf("p%d_%d", credits, rate)
	if err := SetPlan(ctx, e.db, Plan{Name: plan, CreditsPerDay: credits, RequestsPerMinute: rate}); err != nil {
		e.t.Fatal(err)
	}
	a, err := CreateAccount(ctx, e.db, fmt.Sprintf("acct-%d", time.Now().UnixNano()), plan, perms, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	_, key, err := AddKey(ctx, e.db, a.ID, "test", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return a, key
}

func (e *env) balance(id int64) int64 {
	e.t.Helper()
	a, err := FindAccount(context.Background(), e.db, strconv.FormatInt(id, 10), e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return a.Credits
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
}

func get(t testing.TB, srv *httptest.Server, method, path, credential string) answer {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, nil)
	if credential != "" {
		req.Header.Set("Authorization", credential)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	a := answer{status: res.StatusCode, header: res.Header, body: map[string]any{}}
	_ = json.NewDecoder(res.Body).Decode(&a.body)
	return a
}

func (e *env) get(path, credential string) answer {
	e.t.Helper()
	return get(e.t, e.srv, http.MethodGet, path, credential)
}

// expect checks the status and the error body's message and extra fields.
func expect(t *testing.T, a answer, status int, message string, fields ...any) {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d; body %v", a.status, status, a.body)
	}
	if message != "" {
		if a.body["message"] != message || a.body["code"] != float64(status) {
			t.Fatalf("body %v, want code %d message %q", a.body, status, message)
		}
	}
	for i := 0; i+1 < len(fields); i += 2 {
		if got := a.body[fields[i].(string)]; fmt.Sprint(got) != fmt.Sprint(fields[i+1]) {
			t.Fatalf("%s = %v, want %v (body %v)", fields[i], got, fields[i+1], a.body)
		}
	}
}

const office = "/office/33683111000280"

func TestMissingAndInvalid(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.account(100, 1000, nil)
	expect(t, e.get(office, ""), 401, "missing authorization")
	expect(t, e.get(office, "cg_unknown"), 401, "invalid authorization")
	expect(t, e.get(office, "garbage"), 401, "invalid authorization")
	expect(t, e.get(office, "Bearer "), 401, "invalid authorization")
	expect(t, e.get(office, key+"x"), 401, "invalid authorization")
	expect(t, e.get(office, key), 200, "")
	expect(t, e.get(office, "Bearer "+key), 200, "")
	expect(t, e.get(office, "bearer "+key), 200, "")
}

func TestRevokedKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.KeyCacheTTL = 2 * time.Second })
	a, key := e.account(100, 1000, nil)
	expect(t, e.get(office, key), 200, "")
	keys, err := Keys(context.Background(), e.db, a.ID)
	if err != nil || len(keys) != 1 {
		t.Fatal(keys, err)
	}
	if err := RevokeKey(context.Background(), e.db, keys[0].ID, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	// Within the cache TTL the key still works; past it, it is refused.
	expect(t, e.get(office, key), 200, "")
	e.clock.Add(2 * time.Second)
	expect(t, e.get(office, key), 401, "invalid authorization")
}

func TestSuspendedAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, key := e.account(100, 1000, nil)
	ctx := context.Background()
	if err := Suspend(ctx, e.db, a.ID, "unpaid invoice"); err != nil {
		t.Fatal(err)
	}
	expect(t, e.get(office, key), 403, "account has been suspended", "reason", "unpaid invoice")
	tok, _ := e.svc.IssueJWT(a.ID, nil, time.Hour)
	expect(t, e.get(office, tok), 403, "account has been suspended", "reason", "unpaid invoice")
	if err := Resume(ctx, e.db, a.ID); err != nil {
		t.Fatal(err)
	}
	expect(t, e.get(office, key), 200, "")
}

func TestRestrictedKeyAndAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	a, _ := e.account(100, 1000, nil)
	_, restricted, err := AddKey(ctx, e.db, a.ID, "company only", []string{ReadCompany})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, e.get("/company/33683111", restricted), 200, "")
	expect(t, e.get(office, restricted), 403, "not enough privileges", "permission", "read:office")
	expect(t, e.get(office+"/map", restricted), 403, "not enough privileges", "permission", "read:map")

	// An account's own restriction bounds every key, even an unrestricted one.
	b, key := e.account(100, 1000, []string{ReadOffice})
	expect(t, e.get(office, key), 200, "")
	expect(t, e.get("/company/1", key), 403, "not enough privileges", "permission", "read:company")
	if err := SetAccountPermissions(ctx, e.db, b.ID, nil); err != nil {
		t.Fatal(err)
	}
	expect(t, e.get("/company/1", key), 200, "")
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, key := e.account(100, 3, nil)
	for i := range 3 {
		a := e.get(office, key)
		expect(t, a, 200, "")
		if a.header.Get("RateLimit-Limit") != "3" || a.header.Get("RateLimit-Remaining") != strconv.Itoa(2-i) || a.header.Get("RateLimit-Reset") != "60" {
			t.Fatalf("headers %v", a.header)
		}
	}
	a := e.get(office, key)
	expect(t, a, 429, "rate limit exceeded")
	if a.header.Get("Retry-After") != "60" || a.header.Get("RateLimit-Remaining") != "0" {
		t.Fatalf("headers %v", a.header)
	}
	e.clock.Add(45 * time.Second)
	if a := e.get(office, key); a.status != 429 || a.header.Get("Retry-After") != "15" {
		t.Fatalf("%d %v", a.status, a.header)
	}
	e.clock.Add(15 * time.Second)
	expect(t, e.get(office, key), 200, "")
}

func TestNotEnoughCredits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, key := e.account(4, 1000, nil)
	expect(t, e.get(office+"/street", key), 429, "not enough credits", "required", 10, "remaining", 4)
	expect(t, e.get(office+"/map", key), 200, "")
	expect(t, e.get(office+"/map", key), 429, "not enough credits", "required", 3, "remaining", 1)
	expect(t, e.get(office, key), 200, "") // cached answers cost nothing
	if b := e.balance(a.ID); b != 1 {
		t.Fatalf("balance %d, want 1", b)
	}
}

func TestRefundOnError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, key := e.account(10, 1000, nil)
	expect(t, e.get("/rfb?taxId=33683111000280", key), 503, "rfb data fetching is offline")
	if b := e.balance(a.ID); b != 10 {
		t.Fatalf("balance %d after a failed request, want 10", b)
	}
	expect(t, e.get("/rfb/certificate?taxId=33683111000280", key), 200, "")
	if b := e.balance(a.ID); b != 9 {
		t.Fatalf("balance %d, want 9", b)
	}
	if err := e.svc.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Route  string `db:"route"`
		Cost   int    `db:"cost"`
		Status int    `db:"status"`
	}
	if err := e.db.Select(&rows, `SELECT route, cost, status FROM usage WHERE account_id = $1 ORDER BY at`, a.ID); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint([]any{"{/rfb 0 503}", "{/rfb/certificate 1 200}"})
	if got := fmt.Sprint(func() (s []any) {
		for _, r := range rows {
			s = append(s, fmt.Sprintf("{%s %d %d}", r.Route, r.Cost, r.Status))
		}
		return
	}()); got != want {
		t.Fatalf("ledger %s, want %s", got, want)
	}
}

// TestRefundOnSuccess: credits the service gives back during a request
// that then succeeds (an online fetch that failed, answered from the cache)
// return to the balance, and the ledger prices the answer at what it kept.
func TestRefundOnSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, key := e.account(10, 1000, nil)
	expect(t, e.get("/simples?taxId=33683111000280", key), 200, "")
	expect(t, e.get("/rfb/certificate?taxId=33683111000280", key), 200, "")
	if b := e.balance(a.ID); b != 9 {
		t.Fatalf("balance %d after a refunded success and a certificate, want 9", b)
	}
	if err := e.svc.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var costs []string
	if err := e.db.Select(&costs, `SELECT route || ' ' || cost || ' ' || status FROM usage WHERE account_id = $1 ORDER BY at`, a.ID); err != nil {
		t.Fatal(err)
	}
	if want := []string{"/simples 0 200", "/rfb/certificate 1 200"}; !slices.Equal(costs, want) {
		t.Fatalf("ledger %q, want %q", costs, want)
	}
}

func TestDailyRefill(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.clock.Add(12*time.Hour - 2*time.Second) // 23:59:58 UTC
	a, key := e.account(3, 1000, nil)
	expect(t, e.get(office+"/map", key), 200, "")
	expect(t, e.get("/rfb/certificate?taxId=1", key), 429, "not enough credits", "required", 1, "remaining", 0)
	e.clock.Add(2 * time.Second) // 00:00:00 UTC: a new day
	if b := e.balance(a.ID); b != 3 {
		t.Fatalf("balance shown %d after midnight, want 3", b)
	}
	expect(t, e.get("/rfb/certificate?taxId=1", key), 200, "")
	if b := e.balance(a.ID); b != 2 {
		t.Fatalf("balance %d, want 2", b)
	}
	// Refunding a debit of the previous day must not top up the new one.
	if _, day, err := e.svc.Debit(context.Background(), a.ID, 1); err != nil {
		t.Fatal(err)
	} else {
		e.clock.Add(24 * time.Hour)
		if _, _, err := e.svc.Debit(context.Background(), a.ID, 1); err != nil {
			t.Fatal(err)
		}
		if err := e.svc.Refund(context.Background(), a.ID, 1, day); err != nil {
			t.Fatal(err)
		}
		if b := e.balance(a.ID); b != 2 {
			t.Fatalf("balance %d, want 2", b)
		}
	}
}

// 200 concurrent priced requests against 50 credits: exactly 50 succeed,
// the balance ends at 0, the ledger holds all 200.
func TestConcurrentDebits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, key := e.account(50, 100000, nil)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
		bodies   = map[string]int{}
	)
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := get(t, e.srv, http.MethodGet, "/rfb/certificate?taxId=33683111000280", key)
			mu.Lock()
			statuses[a.status]++
			if a.status == 429 {
				bodies[fmt.Sprintf("%v %v %v", a.body["message"], a.body["required"], a.body["remaining"])]++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if statuses[200] != 50 || statuses[429] != 150 || len(statuses) != 2 {
		t.Fatalf("statuses %v", statuses)
	}
	if bodies["not enough credits 1 0"] != 150 {
		t.Fatalf("429 bodies %v", bodies)
	}
	if b := e.balance(a.ID); b != 0 {
		t.Fatalf("balance %d, want 0", b)
	}
	if err := e.svc.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var n, charged, ok int
	if err := e.db.QueryRow(`SELECT count(*), sum(cost), count(*) FILTER (WHERE status = 200) FROM usage WHERE account_id = $1`, a.ID).Scan(&n, &charged, &ok); err != nil {
		t.Fatal(err)
	}
	if n != 200 || charged != 50 || ok != 50 {
		t.Fatalf("ledger: %d rows, %d charged, %d ok", n, charged, ok)
	}
}

// Two instances sharing Redis enforce one per-minute limit between them.
func TestSharedRateLimit(t *testing.T) {
	t.Parallel()
	prefix := fmt.Sprintf("cnpjgraph-test:%d:", time.Now().UnixNano())
	// Redis is up here: a timeout longer than the default 50 ms keeps a
	// slow start on a loaded machine (a first connection took longer under
	// -race) from opening the breaker, which counts per instance.
	shared := func(c *Config) { c.RedisURL, c.RedisPrefix, c.RedisTimeout = redisURL(), prefix, 2*time.Second }
	e := newEnv(t, shared)
	_, srv2 := e.start(shared)
	_, key := e.account(100, 10, nil)
	ok, limited := 0, 0
	for i := range 16 {
		srv := e.srv
		if i%2 == 1 {
			srv = srv2
		}
		switch a := get(t, srv, http.MethodGet, office, key); a.status {
		case 200:
			ok++
		case 429:
			limited++
			if a.header.Get("Retry-After") == "" || a.body["message"] != "rate limit exceeded" {
				t.Fatalf("429 without Retry-After: %v %v", a.header, a.body)
			}
		default:
			t.Fatalf("status %d", a.status)
		}
	}
	if ok != 10 || limited != 6 {
		t.Fatalf("%d ok, %d limited; want 10 and 6", ok, limited)
	}
	// The next minute is a fresh window on both.
	e.clock.Add(time.Minute)
	expect(t, get(t, srv2, http.MethodGet, office, key), 200, "")
}

// Every lookup of a request counts against the rate (the first on the
// request's own unit) and pays as it goes; an error answer refunds them all.
func TestLookupsOfARequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, key := e.account(5, 4, nil)
	post := func(q string) answer { return get(t, e.srv, http.MethodPost, "/graphql?"+q, key) }
	expect(t, post("n=5&cost=1"), 429, "rate limit exceeded") // the 5th lookup is over 4 a minute
	if b := e.balance(a.ID); b != 5 {
		t.Fatalf("balance %d after a refused request, want 5", b)
	}
	e.clock.Add(time.Minute)
	expect(t, post("n=3&cost=2"), 429, "not enough credits", "required", 2, "remaining", 1)
	e.clock.Add(time.Minute)
	expect(t, post("n=2&cost=2"), 200, "")
	if b := e.balance(a.ID); b != 1 {
		t.Fatalf("balance %d, want 1", b)
	}
	// A lookup outside a request of the middleware (the command line) is
	// not accounted.
	if err := e.svc.Meter().Admit(context.Background(), ReadOffice); err != nil {
		t.Fatal(err)
	}
}

func TestEnsureDevAccount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	k1, err := EnsureDevAccount(ctx, e.db)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := EnsureDevAccount(ctx, e.db)
	if err != nil {
		t.Fatal(err)
	}
	if k1 == k2 {
		t.Fatal("same key twice")
	}
	accts, err := Accounts(ctx, e.db, e.clock.Now())
	if err != nil || len(accts) != 1 || accts[0].Name != DevAccountName || accts[0].Plan != "dev" {
		t.Fatalf("%+v %v", accts, err)
	}
	expect(t, e.get(office, k1), 200, "")
	if a := e.get(office, k2); a.header.Get("RateLimit-Limit") != "1000000" {
		t.Fatalf("headers %v", a.header)
	}
}

func TestAdministration(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	now := e.clock.Now()
	a, err := CreateAccount(ctx, e.db, "acme", "", nil, now)
	if err != nil || a.Plan != "free" || a.Credits != 100 || a.Status != "active" {
		t.Fatalf("%+v %v", a, err)
	}
	if _, err := CreateAccount(ctx, e.db, "x", "nope", nil, now); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown plan: %v", err)
	}
	if _, err := CreateAccount(ctx, e.db, "acme", "", nil, now); !errors.Is(err, ErrExists) {
		t.Fatalf("a second acme: %v", err)
	}
	if _, err := CreateAccount(ctx, e.db, "2024", "", nil, now); err == nil {
		t.Fatal("an account named by digits alone, which FindAccount would read as an id, was created")
	}
	if _, err := CreateAccount(ctx, e.db, "ACME", "", nil, now); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), `as "acme"`) {
		t.Fatalf("ACME beside acme: %v, want it taken for acme", err)
	}
	// Names are labels: trimmed, and of 100 bytes at most.
	if _, err := CreateAccount(ctx, e.db, " acme ", "", nil, now); !errors.Is(err, ErrExists) {
		t.Fatalf("acme with spaces around: %v, want it taken for acme", err)
	}
	if _, err := CreateAccount(ctx, e.db, strings.Repeat("n", 101), "", nil, now); err == nil || !strings.Contains(err.Error(), "at most 100") {
		t.Fatalf("a name of 101 bytes: %v", err)
	}
	if _, _, err := AddKey(ctx, e.db, a.ID, strings.Repeat("k", 101), nil); err == nil || !strings.Contains(err.Error(), "at most 100") {
		t.Fatalf("a key name of 101 bytes: %v", err)
	}
	if k, _, err := AddKey(ctx, e.db, a.ID, "   ", nil); err != nil || k.Name != "" {
		t.Fatalf("a key named by spaces: %+v %v, want no name", k, err)
	}
	if _, _, err := e.svc.Debit(ctx, a.ID, 30); err != nil {
		t.Fatal(err)
	}
	if err := SetPlan(ctx, e.db, Plan{Name: "pro", CreditsPerDay: 1000, RequestsPerMinute: 600}); err != nil {
		t.Fatal(err)
	}
	if err := ChangePlan(ctx, e.db, a.ID, "pro", now); err != nil {
		t.Fatal(err)
	}
	if b := e.balance(a.ID); b != 970 { // 30 already spent today
		t.Fatalf("balance %d after plan change, want 970", b)
	}
	if err := GrantCredits(ctx, e.db, a.ID, 50, now); err != nil {
		t.Fatal(err)
	}
	if b := e.balance(a.ID); b != 1020 {
		t.Fatalf("balance %d after grant, want 1020", b)
	}
	if err := ChangePlan(ctx, e.db, a.ID, "nope", now); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown plan: %v", err)
	}
	if err := Suspend(ctx, e.db, a.ID, ""); err == nil {
		t.Fatal("suspension without a reason")
	}
	if _, _, err := AddKey(ctx, e.db, 999999, "", nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("key for unknown account: %v", err)
	}
	if _, err := FindAccount(ctx, e.db, "acme", now); err != nil {
		t.Fatal(err)
	}
	if _, err := ParsePermissions([]string{"write:office"}); err == nil {
		t.Fatal("unknown permission accepted")
	}
}

// Requests refused before the handler are accounted under their route pattern.
func TestLedgerOfRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, key := e.account(100, 2, nil)
	ctx := context.Background()
	_, restricted, _ := AddKey(ctx, e.db, a.ID, "", []string{ReadCompany})
	expect(t, e.get(office, key), 200, "")
	expect(t, e.get(office, restricted), 403, "not enough privileges")
	expect(t, e.get(office, key), 429, "rate limit exceeded")
	expect(t, e.get(office, ""), 401, "missing authorization") // no account: no row
	if err := e.svc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := e.db.Select(&got, `SELECT route || ' ' || status FROM usage WHERE account_id = $1 ORDER BY at, status`, a.ID); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[/office/{taxId} 200 /office/{taxId} 403 /office/{taxId} 429]" {
		t.Fatalf("ledger %v", got)
	}
}

// A handler that panics after charging is refunded; the panic goes on up.
func TestPanicRefunds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, key := e.account(10, 1000, nil)
	h := e.svc.Middleware(nil, testRender)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		if err := e.svc.Meter().Reserve(r.Context(), 4); err != nil {
			t.Error(err)
		}
		panic("boom")
	}))
	req := httptest.NewRequest(http.MethodGet, "/rfb/certificate", nil)
	req.Header.Set("Authorization", key)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("panic swallowed")
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), req)
	}()
	if b := e.balance(a.ID); b != 10 {
		t.Fatalf("balance %d, want 10", b)
	}
}

// A full ledger buffer slows requests down instead of losing rows.
func TestLedgerBackPressure(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		written int
	)
	slow := func(_ context.Context, rows []usageRow) error {
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		written += len(rows)
		mu.Unlock()
		return nil
	}
	e := newEnv(t, func(c *Config) { c.LedgerBuffer, c.ledgerWrite = 2, slow })
	_, key := e.account(100, 1000, nil)
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			get(t, e.srv, http.MethodGet, office, key)
		}()
	}
	wg.Wait()
	if err := e.svc.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if written != 40 {
		t.Fatalf("%d rows written, want 40", written)
	}
}
