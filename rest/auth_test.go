package rest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// TestAuthenticatedRouter checks the wiring of auth into the router: its
// errors come out through the one renderer with the contract's fields, and
// the operations endpoints and unknown routes need no credential.
func TestAuthenticatedRouter(t *testing.T) {
	ctx := context.Background()
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	a, err := auth.New(ctx, auth.Config{DB: d, KeyCacheTTL: 0})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{Now: func() time.Time { return now }, Meter: a.Meter()})
	h := rest.NewRouter(rest.Deps{Service: svc, Authenticate: a.Middleware(auth.DoorPermission, rest.RenderError)})
	s := &server{h: h, db: d}

	acct, err := auth.CreateAccount(ctx, d, "wiring", "free", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := auth.AddKey(ctx, d, acct.ID, "full", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, companyOnly, err := auth.AddKey(ctx, d, acct.ID, "company only", []string{auth.ReadCompany})
	if err != nil {
		t.Fatal(err)
	}
	with := func(target, credential string) response {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		if credential != "" {
			req.Header.Set("Authorization", credential)
		}
		return s.do(t, req)
	}
	office := "/office/33683111000280"

	r := with(office, "")
	assertError(t, r, 401, "missing authorization")
	r = with(office, "cg_not-a-key")
	assertError(t, r, 401, "invalid authorization")
	r = with(office, companyOnly)
	o := assertError(t, r, 403, "not enough privileges")
	if o["permission"] != auth.ReadOffice {
		t.Errorf("permission = %v, want %s", o["permission"], auth.ReadOffice)
	}
	for _, cred := range []string{key, "Bearer " + key} {
		if r := with(office, cred); r.status != 200 {
			t.Fatalf("%s: status %d: %s", cred[:6], r.status, r.body)
		} else if r.header.Get("RateLimit-Limit") == "" || r.header.Get("RateLimit-Remaining") == "" {
			t.Errorf("RateLimit headers missing: %v", r.header)
		}
	}
	if err := auth.Suspend(ctx, d, acct.ID, "payment overdue"); err != nil {
		t.Fatal(err)
	}
	o = assertError(t, with(office, key), 403, "account has been suspended")
	if o["reason"] != "payment overdue" {
		t.Errorf("reason = %v", o["reason"])
	}
	for _, open := range []string{"/healthz", "/readyz", "/metrics"} {
		if r := with(open, ""); r.status != 200 {
			t.Errorf("%s without a credential: %d", open, r.status)
		}
	}
	assertError(t, with("/nowhere", ""), 404, "Cannot GET /nowhere")
}

func assertError(t *testing.T, r response, status int, message string) map[string]any {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	o := r.object(t)
	if o["message"] != message || o["code"] == nil || o["code"].(interface{ String() string }).String() != itoa(status) {
		t.Errorf("body %s, want code %d and message %q", r.body, status, message)
	}
	return o
}
