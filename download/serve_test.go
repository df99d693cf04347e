package download

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// lookupLoad plays `cnpjgraph serve` under load: the REST router over the
// service layer on a real listener, and clients asking for offices in a
// loop. Anything but a 200 is a failed request.
type lookupLoad struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	failures   []string // the first few
	stop       chan struct{}
	wg         sync.WaitGroup
}

func startLookups(t *testing.T, d *sqlx.DB, taxIDs []string) *lookupLoad {
	t.Helper()
	svc := service.New(db.NewStore(d, db.StoreOptions{}), service.Options{})
	srv := httptest.NewServer(rest.NewRouter(rest.Deps{Service: svc, RequestTimeout: 10 * time.Second}))
	t.Cleanup(srv.Close)
	l := &lookupLoad{stop: make(chan struct{})}
	for w := range 2 {
		l.wg.Go(func() {
			for i := w; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				l.lookup(srv.URL + "/office/" + taxIDs[i%len(taxIDs)])
			}
		})
	}
	return l
}

func (l *lookupLoad) lookup(url string) {
	res, err := http.Get(url)
	if err == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s", res.Status)
		}
	}
	if err == nil {
		l.ok.Add(1)
		return
	}
	l.failed.Add(1)
	l.mu.Lock()
	if len(l.failures) < 5 {
		l.failures = append(l.failures, fmt.Sprintf("%s: %v", url, err))
	}
	l.mu.Unlock()
}

// finish stops the clients and returns the counts.
func (l *lookupLoad) finish() (ok, failed int64, failures []string) {
	close(l.stop)
	l.wg.Wait()
	return l.ok.Load(), l.failed.Load(), l.failures
}
