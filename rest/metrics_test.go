package rest_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// TestSnapshotMetrics: /metrics exports the live snapshot once one is
// live, read at each scrape, and nothing of it before.
func TestSnapshotMetrics(t *testing.T) {
	d, _ := dbtest.New(t)
	svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{})
	m := rest.NewMetrics(nil)
	m.LiveSnapshot(svc)
	s := &server{h: rest.NewRouter(rest.Deps{Service: svc, Metrics: m}), db: d}

	line := regexp.MustCompile(`(?m)^cnpjgraph_snapshot_\w+ .*$`)
	if got := line.FindAllString(string(s.get(t, "/metrics").body), -1); len(got) != 0 {
		t.Errorf("before any import: %q, want no snapshot metrics", got)
	}

	dbtest.LoadFixture(t, d)
	var live db.Snapshot
	if err := d.Get(&live, `SELECT id, finished_at FROM snapshots WHERE state = 'live'`); err != nil {
		t.Fatal(err)
	}
	metrics := string(s.get(t, "/metrics").body)
	for name, want := range map[string]int64{
		"cnpjgraph_snapshot_id":                          live.ID,
		"cnpjgraph_snapshot_reference_timestamp_seconds": dbtest.Reference().Unix(),
		"cnpjgraph_snapshot_imported_timestamp_seconds":  live.FinishedAt.Unix(),
	} {
		m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(metrics)
		if m == nil {
			t.Errorf("/metrics lacks %s:\n%s", name, metrics)
			continue
		}
		if got, err := strconv.ParseFloat(m[1], 64); err != nil || int64(got) != want {
			t.Errorf("%s %s, want %d", name, m[1], want)
		}
	}
}

// TestListExportMetrics: /metrics counts list exports by status, read at
// each scrape.
func TestListExportMetrics(t *testing.T) {
	d, _ := dbtest.New(t)
	dbtest.LoadFixture(t, d)
	svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{})
	m := rest.NewMetrics(nil)
	m.ListExports(svc)
	s := &server{h: rest.NewRouter(rest.Deps{Service: svc, Metrics: m}), db: d}
	pending := regexp.MustCompile(`(?m)^cnpjgraph_list_exports\{status="PENDING"\} (\S+)$`)
	count := func() string {
		got := pending.FindStringSubmatch(string(s.get(t, "/metrics").body))
		if got == nil {
			t.Fatal("/metrics lacks cnpjgraph_list_exports{status=\"PENDING\"}")
		}
		return got[1]
	}
	if c := count(); c != "0" {
		t.Errorf("before any export: %s", c)
	}
	var list struct{ ID string }
	post := func(target, body string, v any) {
		req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
		r := s.do(t, req)
		if r.status != 201 {
			t.Fatalf("POST %s: %d %s", target, r.status, r.body)
		}
		if v != nil {
			_ = json.Unmarshal(r.body, v)
		}
	}
	post("/list", `{"title":"t","items":["`+dbtest.SerproBranch+`"]}`, &list)
	post("/list/"+list.ID+"/export", `{}`, nil)
	post("/list/"+list.ID+"/export", `{}`, nil)
	if c := count(); c != "2" {
		t.Errorf("after two exports queued: %s", c)
	}
}
