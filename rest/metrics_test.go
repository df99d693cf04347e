package rest_test

import (
	"regexp"
	"strconv"
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
