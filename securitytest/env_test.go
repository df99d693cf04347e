package securitytest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/graphqlapi"
	"github.com/cnpjgraph/cnpjgraph/imagery"
	"github.com/cnpjgraph/cnpjgraph/internal/syncbuf"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// now is the fixed clock: 10 days after the fixture's data, so cached
// answers are fresh under the default strategy.
var now = dbtest.Reference().Add(10 * 24 * time.Hour)

const (
	jwtSecret  = "jwt-secret-for-the-security-suite"
	signingKey = "signing-key-for-the-security-suite"
	plan       = "suite"
)

// world is the server as serve wires it (REST, GraphQL, auth, the service
// with map and street providers), over the fixture, with accounts.
type world struct {
	t        *testing.T
	db       *sqlx.DB
	auth     *auth.Service
	metrics  *rest.Metrics
	h        http.Handler
	accounts int
	log      *logLines
}

type worldOptions struct {
	redisURL    string // "" : no Redis
	maxBody     int64
	keyCacheTTL time.Duration // 0: every request reads its credential's state
}

func newWorld(t *testing.T, o worldOptions) *world {
	t.Helper()
	d, _ := dbtest.New(t)
	d.SetMaxOpenConns(8)
	dbtest.LoadFixture(t, d)
	return worldOver(t, d, o)
}

// worldOver builds a server over a database that holds the fixture.
func worldOver(t *testing.T, d *sqlx.DB, o worldOptions) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{t: t, db: d, log: &logLines{}}
	demo := httptest.NewServer(imagery.Demo())
	t.Cleanup(demo.Close)
	maps, err := imagery.NewMaps(imagery.MapConfig{Templates: imagery.TileTemplates(imagery.DemoTileURL(demo.URL), nil)})
	if err != nil {
		t.Fatal(err)
	}
	street, err := imagery.NewStreet(imagery.StreetConfig{Template: imagery.DemoStreetURL(demo.URL)})
	if err != nil {
		t.Fatal(err)
	}
	seats, err := imagery.LoadMunicipalities(filepath.Join(dbtest.SharedDir(t), "data", "municipios", "municipios-coordenadas.csv"))
	if err != nil {
		t.Fatal(err)
	}
	w.auth, err = auth.New(ctx, auth.Config{
		DB: d, JWTSecret: []byte(jwtSecret), SigningKey: []byte(signingKey),
		RedisURL: o.redisURL, RedisPrefix: fmt.Sprintf("suite-%d:", time.Now().UnixNano()),
		RedisProbeInterval: 100 * time.Millisecond,
		KeyCacheTTL:        o.keyCacheTTL,
		Now:                func() time.Time { return now },
		Logger:             slog.New(slog.NewTextHandler(w.log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.auth.Close() })
	svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{
		Now: func() time.Time { return now }, Meter: w.auth.Meter(), SignLink: w.auth.SignLink, Owners: w.auth,
		Imagery: &imagery.Provider{Maps: maps, Street: street, Locator: &imagery.Locator{Seats: seats}},
	})
	// As serve wires it (cmd/cnpjgraph/serve.go).
	w.metrics = rest.NewMetrics(nil)
	if o.redisURL != "" {
		w.metrics.GaugeFunc("cnpjgraph_rate_limits_shared", "shared", func() float64 {
			if w.auth.SharedLimits() {
				return 1
			}
			return 0
		})
	}
	w.h = rest.NewRouter(rest.Deps{
		Service: svc, Metrics: w.metrics, RequestTimeout: 10 * time.Second, MaxBodyBytes: o.maxBody,
		Authenticate: w.auth.Middleware(auth.DoorPermission, rest.RenderError),
		Mount:        graphqlapi.Mount(graphqlapi.Options{Service: svc}),
		Degraded:     w.auth.Degraded,
	})
	if err := auth.SetPlan(ctx, d, auth.Plan{Name: plan, CreditsPerDay: 1_000_000, RequestsPerMinute: 1_000_000}); err != nil {
		t.Fatal(err)
	}
	return w
}

// account is a fresh account: each scenario has its own.
func (w *world) account() auth.Account {
	w.t.Helper()
	w.accounts++
	a, err := auth.CreateAccount(context.Background(), w.db, "suite-"+strconv.Itoa(w.accounts), plan, nil, now)
	if err != nil {
		w.t.Fatal(err)
	}
	return a
}

// key adds a key to the account; perms nil: every permission.
func (w *world) key(a auth.Account, perms []string) (auth.Key, string) {
	w.t.Helper()
	k, secret, err := auth.AddKey(context.Background(), w.db, a.ID, "suite", perms)
	if err != nil {
		w.t.Fatal(err)
	}
	return k, secret
}

// all but one permission.
func allBut(permission string) []string {
	var out []string
	for _, p := range auth.AllPermissions {
		if p != permission {
			out = append(out, p)
		}
	}
	return out
}

// answer is a response, its JSON body decoded when it has one.
type answer struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (w *world) serve(req *http.Request) answer {
	w.t.Helper()
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	a := answer{status: rec.Code, header: rec.Header(), raw: rec.Body.Bytes()}
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		dec := json.NewDecoder(bytes.NewReader(a.raw))
		dec.UseNumber()
		if err := dec.Decode(&a.body); err != nil {
			w.t.Fatalf("%s %s: %v: %s", req.Method, req.URL, err, a.raw)
		}
	}
	return a
}

func (w *world) get(target, credential string) answer {
	w.t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if credential != "" {
		req.Header.Set("Authorization", credential)
	}
	return w.serve(req)
}

// logLines collects the auth service's log, safe for concurrent writes.
type logLines struct{ syncbuf.Buffer }

func (l *logLines) count(substr string) int { return strings.Count(l.String(), substr) }
