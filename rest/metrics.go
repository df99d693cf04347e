package rest

import (
	"context"
	"database/sql"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/internal/buildinfo"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// Metrics are the server's Prometheus metrics, in a registry of their own so
// that tests can run several servers in one process.
type Metrics struct {
	Registry   *prometheus.Registry
	requests   *prometheus.CounterVec
	latency    *prometheus.HistogramVec
	roundTrips prometheus.Counter
}

// NewMetrics registers the HTTP, SQL round-trip, Go runtime and process
// metrics, and the pool statistics of pool when it is not nil.
func NewMetrics(pool *sql.DB) *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cnpjgraph_http_requests_total",
			Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cnpjgraph_http_request_duration_seconds",
			Help:    "Time to answer HTTP requests, by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"}),
		roundTrips: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cnpjgraph_sql_round_trips_total",
			Help: "SQL statements sent by lookups and searches; divide by requests for round trips per request.",
		}),
	}
	build := buildinfo.Read()
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "cnpjgraph_build_info",
		Help: "Always 1; its labels say which build is running: the commit (empty when the binary was not stamped), the release, uncommitted changes, the Go version.",
		ConstLabels: prometheus.Labels{"revision": build.Revision, "version": build.Version,
			"modified": strconv.FormatBool(build.Modified), "go_version": build.Go},
	})
	info.Set(1)
	m.Registry.MustRegister(info, m.requests, m.latency, m.roundTrips,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if pool != nil {
		m.Registry.MustRegister(collectors.NewDBStatsCollector(pool, "cnpjgraph"))
	}
	return m
}

// RoundTrip counts one SQL statement; give it to db.StoreOptions.OnQuery.
func (m *Metrics) RoundTrip(string) { m.roundTrips.Inc() }

func (m *Metrics) observe(route, method string, status int, elapsed time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route).Observe(elapsed.Seconds())
}

// Handler serves the metrics in Prometheus' text format: the router's
// /metrics, or a listener of its own (METRICS_ADDR).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// GaugeFunc exports a value read when the metrics are scraped, such as the
// state of a dependency (auth.Service.SharedLimits).
func (m *Metrics) GaugeFunc(name, help string, value func() float64) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, value))
}

// LiveSnapshot exports the snapshot svc serves, read at each scrape (one
// primary-key query, bounded by snapshotReadTimeout): its id, its dump's
// reference date and when its import finished. Operators import monthly;
// an alert on the reference date's age catches a sync that stopped
// (README, "Keeping the registry current"). Nothing is exported while no
// snapshot is live or the database does not answer: /readyz says which.
func (m *Metrics) LiveSnapshot(svc *service.Service) {
	m.Registry.MustRegister(snapshotCollector{svc: svc})
}

// ListExports exports the count of list exports by status, read from the
// database at each scrape: a growing PENDING count is exports waiting for
// an instance.
func (m *Metrics) ListExports(svc *service.Service) {
	m.Registry.MustRegister(exportsCollector{svc: svc})
}

var listExports = prometheus.NewDesc("cnpjgraph_list_exports",
	"List exports of every account by status; PENDING ones wait for an instance (docs/api.md, Lists).", []string{"status"}, nil)

// exportsCollector counts list exports by status when scraped.
type exportsCollector struct{ svc *service.Service }

func (exportsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- listExports }

func (c exportsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), snapshotReadTimeout)
	defer cancel()
	counts, err := c.svc.Lists().ExportCounts(ctx)
	if err != nil {
		return
	}
	for _, s := range db.ExportStatuses {
		ch <- prometheus.MustNewConstMetric(listExports, prometheus.GaugeValue, float64(counts[s]), s)
	}
}

const snapshotReadTimeout = 2 * time.Second

var (
	snapshotID = prometheus.NewDesc("cnpjgraph_snapshot_id",
		"Id of the live snapshot (cnpjgraph status); it changes when an import goes live.", nil, nil)
	snapshotReference = prometheus.NewDesc("cnpjgraph_snapshot_reference_timestamp_seconds",
		"Reference date of the live snapshot's dump (the updated date of its answers), as a Unix time.", nil, nil)
	snapshotImported = prometheus.NewDesc("cnpjgraph_snapshot_imported_timestamp_seconds",
		"When the live snapshot's import finished, as a Unix time.", nil, nil)
)

type snapshotCollector struct{ svc *service.Service }

func (snapshotCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- snapshotID
	ch <- snapshotReference
	ch <- snapshotImported
}

func (c snapshotCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), snapshotReadTimeout)
	defer cancel()
	snap, err := c.svc.Ready(ctx)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(snapshotID, prometheus.GaugeValue, float64(snap.ID))
	ch <- prometheus.MustNewConstMetric(snapshotReference, prometheus.GaugeValue, float64(snap.ReferenceDate.Unix()))
	if snap.FinishedAt != nil {
		ch <- prometheus.MustNewConstMetric(snapshotImported, prometheus.GaugeValue, float64(snap.FinishedAt.Unix()))
	}
}
