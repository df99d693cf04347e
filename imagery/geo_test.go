package imagery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/model"
)

func TestTileTemplates(t *testing.T) {
	got := TileTemplates("http://t/{type}/{z}/{x}/{y}.png", map[string]string{"satellite": "http://s/{z}/{x}/{y}.jpg"})
	want := map[string]string{
		"roadmap": "http://t/roadmap/{z}/{x}/{y}.png", "terrain": "http://t/terrain/{z}/{x}/{y}.png",
		"satellite": "http://s/{z}/{x}/{y}.jpg", "hybrid": "http://t/hybrid/{z}/{x}/{y}.png",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v", got)
	}
	if got := TileTemplates("http://t/{z}/{x}/{y}.png", nil); len(got) != 1 || got["roadmap"] == "" {
		t.Errorf("a template without {type} serves roadmap only: %v", got)
	}
	if _, err := NewMaps(MapConfig{Templates: map[string]string{"roadmap": "http://t/{z}/{x}.png"}}); err == nil {
		t.Error("a template without {y} was accepted")
	}
}

func TestReadMunicipalities(t *testing.T) {
	m, err := ReadMunicipalities(strings.NewReader("\ufeffcodigo_ibge,nome,latitude,longitude,capital\n5300108,Brasília,-15.7795,-47.9297,1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := m.Lookup(5300108); !ok || b.Name != "Brasília" || b.Seat != (Point{-15.7795, -47.9297}) {
		t.Errorf("Brasília = %+v", b)
	}
	for _, bad := range []string{"", "codigo_ibge,nome\n", "codigo_ibge,nome,latitude,longitude\nx,y,1,2\n"} {
		if _, err := ReadMunicipalities(strings.NewReader(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestLocatorFallsBack: a geocoder that fails or hangs falls back to the
// seat in bounded time; without a seat there is no position.
func TestLocatorFallsBack(t *testing.T) {
	var hits atomic.Int64
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		<-r.Context().Done()
	}))
	defer hang.Close()
	g, err := NewGeocoder(hang.URL, 100*time.Millisecond, 10)
	if err != nil {
		t.Fatal(err)
	}
	seats, _ := ReadMunicipalities(strings.NewReader("codigo_ibge,nome,latitude,longitude\n5300108,Brasília,-15.7795,-47.9297\n"))
	var failures []error
	l := &Locator{Geocoder: g, Seats: seats, OnGeocoderError: func(err error) { failures = append(failures, err) }}
	code := 5300108
	start := time.Now()
	p, err := l.Locate(context.Background(), model.Address{Municipality: &code, Street: "RUA X", City: "BRASILIA", State: "DF"})
	if err != nil || p != (Point{-15.7795, -47.9297}) || len(failures) != 1 || time.Since(start) > time.Second {
		t.Errorf("Locate = %v, %v after %v; failures %v", p, err, time.Since(start), failures)
	}
	other := 3550308
	_, err = l.Locate(context.Background(), model.Address{Municipality: &other})
	var f *fault.Error
	if !errors.As(err, &f) || f.Kind != fault.NotFound || f.Message != fault.MsgNoLocation {
		t.Errorf("unknown municipality: %v", err)
	}
}
