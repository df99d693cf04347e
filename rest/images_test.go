package rest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/imagery"
	"github.com/cnpjgraph/cnpjgraph/rest"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// serproPoint is where the test geocoder places SERPRO's Brasília office.
var serproPoint = imagery.Point{Lat: -15.7801, Lon: -47.8825}

// brasiliaSeat is Brasília's seat in municipios-coordenadas.csv.
var brasiliaSeat = imagery.Point{Lat: -15.7795, Lon: -47.9297}

// tileColor is the solid colour the test tile server paints tile z/x/y
// with: distinct for neighbours, never the marker's red.
func tileColor(kind string, z, x, y int) color.RGBA {
	c := color.RGBA{uint8(x*40 + z), uint8(y*70 + 3), uint8((x+y)*25 + 100), 0xff}
	if kind == "satellite" {
		c.B = 7
	}
	return c
}

// tileServer stands in for an XYZ tile server at /{type}/{z}/{x}/{y}.png,
// counting the tiles served.
type tileServer struct {
	*httptest.Server
	mu    sync.Mutex
	tiles map[string]int
}

func newTileServer(t *testing.T) *tileServer {
	ts := &tileServer{tiles: map[string]int{}}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var kind string
		var z, x, y int
		if _, err := fmt.Sscanf(strings.ReplaceAll(r.URL.Path, "/", " "), " %s %d %d %d.png", &kind, &z, &x, &y); err != nil {
			http.NotFound(w, r)
			return
		}
		ts.mu.Lock()
		ts.tiles[fmt.Sprintf("%s/%d/%d/%d", kind, z, x, y)]++
		ts.mu.Unlock()
		img := image.NewRGBA(image.Rect(0, 0, 256, 256))
		c := tileColor(kind, z, x, y)
		for i := 0; i < len(img.Pix); i += 4 {
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
		}
		w.Header().Set("Content-Type", "image/png")
		_ = png.Encode(w, img)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *tileServer) served() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	n := 0
	for _, c := range ts.tiles {
		n += c
	}
	return n
}

// newGeocoder stands in for Nominatim: it knows SERPRO's street only.
func newGeocoder(t *testing.T, queries *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries.Add(1)
		q := r.URL.Query()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/search" || q.Get("format") != "jsonv2" {
			http.Error(w, "bad request", 400)
			return
		}
		if q.Get("street") == "601 AVENIDA L2 SGAN" && q.Get("city") == "BRASILIA" && q.Get("state") == "Distrito Federal" && q.Get("postalcode") == "70836-900" {
			_, _ = fmt.Fprintf(w, `[{"place_id":1,"lat":"%v","lon":"%v","display_name":"SGAN 601, Asa Norte, Brasília"}]`, serproPoint.Lat, serproPoint.Lon)
			return
		}
		_, _ = w.Write([]byte(`[]`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// expectedTile is the tile under output pixel (px, py) of a w x h map at
// zoom centred on p, computed here independently of the renderer, from a
// tile server whose deepest zoom is maxZoom (deeper views magnify its
// tiles). edge reports a pixel within 2 pixels of a tile's border, where
// magnified tiles blend.
func expectedTile(p imagery.Point, zoom, maxZoom, w, h, px, py int) (z, x, y int, edge bool) {
	n := 256 * math.Exp2(float64(zoom))
	lat := p.Lat * math.Pi / 180
	wx := (p.Lon + 180) / 360 * n
	wy := (1 - math.Asinh(math.Tan(lat))/math.Pi) / 2 * n
	ox := math.Floor(wx-float64(w)/2) + float64(px)
	oy := math.Floor(wy-float64(h)/2) + float64(py)
	z = min(zoom, maxZoom)
	span := 256 * math.Exp2(float64(zoom-z))
	mx, my := math.Mod(ox, span), math.Mod(oy, span)
	edge = zoom > z && (mx < 2 || my < 2 || mx > span-3 || my > span-3)
	return z, int(math.Floor(ox / span)), int(math.Floor(oy / span)), edge
}

func decodePNG(t *testing.T, r response) image.Image {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "image/png" {
		t.Fatalf("Content-Type %q", ct)
	}
	img, err := png.Decode(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return img
}

func rgba(c color.Color) color.RGBA {
	r, g, b, a := c.RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
}

// checkMap asserts the size, the tiles at the corners and the marker.
func checkMap(t *testing.T, img image.Image, kind string, p imagery.Point, zoom, w, h, scale int) {
	t.Helper()
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("image %dx%d, want %dx%d", b.Dx(), b.Dy(), w, h)
	}
	checked := 0
	for _, px := range [][2]int{{1, 1}, {w - 2, 1}, {1, h - 2}, {w - 2, h - 2}, {w * 3 / 4, h * 3 / 4}, {w / 4, h * 3 / 4}} {
		z, x, y, edge := expectedTile(p, zoom, 19, w, h, px[0], px[1])
		if edge {
			continue
		}
		checked++
		if got, want := rgba(img.At(px[0], px[1])), tileColor(kind, z, x, y); got != want {
			t.Errorf("pixel %v = %v, want tile %d/%d/%d's %v", px, got, z, x, y, want)
		}
	}
	if checked < 3 {
		t.Errorf("only %d pixels away from tile borders", checked)
	}
	// The pin: its tip at the centre, its red head above, a white dot in it.
	if got := rgba(img.At(w/2, h/2-2*scale)); got != imagery.MarkerColor {
		t.Errorf("marker tip = %v, want %v", got, imagery.MarkerColor)
	}
	if got := rgba(img.At(w/2, h/2-22*scale+6*scale)); got != imagery.MarkerColor {
		t.Errorf("marker head = %v, want %v", got, imagery.MarkerColor)
	}
	if got := rgba(img.At(w/2, h/2-22*scale)); got != (color.RGBA{0xff, 0xff, 0xff, 0xff}) {
		t.Errorf("marker dot = %v, want white", got)
	}
}

func mapDeps(t *testing.T, tiles *tileServer, geocoderURL string, timeout time.Duration) setup {
	t.Helper()
	maps, err := imagery.NewMaps(imagery.MapConfig{
		Templates: imagery.TileTemplates(tiles.URL+"/{type}/{z}/{x}/{y}.png", nil),
		Timeout:   timeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	loc := testLocator(t, geocoderURL)
	return func(o *service.Options, _ *rest.Deps) { o.Imagery = &imagery.Provider{Maps: maps, Locator: loc} }
}

func TestMap(t *testing.T) {
	t.Parallel()
	d := fixtureDB(t)
	tiles := newTileServer(t)
	var queries atomic.Int64
	s := routerWith(t, d, mapDeps(t, tiles, newGeocoder(t, &queries).URL, 5*time.Second))
	target := "/office/" + dbtest.SerproBranch + "/map"

	r := s.get(t, target)
	checkMap(t, decodePNG(t, r), "roadmap", serproPoint, 17, 640, 640, 1)
	writeArtifact(t, "map_serpro.png", r.body)
	first := tiles.served()
	if first < 9 || first > 16 {
		t.Errorf("%d tiles for a 640x640 map, want 9 to 16", first)
	}
	// The same map again: tiles and geocoder answer come from the caches.
	decodePNG(t, s.get(t, target))
	if n := tiles.served(); n != first {
		t.Errorf("%d tiles fetched again, want none", n-first)
	}
	if n := queries.Load(); n != 1 {
		t.Errorf("geocoder asked %d times, want 1", n)
	}

	// Scale 2: twice the pixels, from tiles one zoom deeper.
	checkMap(t, decodePNG(t, s.get(t, target+"?width=300&height=200&scale=2&zoom=15")), "roadmap", serproPoint, 16, 600, 400, 2)
	r = s.get(t, target+"?type=satellite&width=200&height=120&zoom=20&scale=2")
	checkMap(t, decodePNG(t, r), "satellite", serproPoint, 21, 400, 240, 2)
	writeArtifact(t, "map_serpro_magnified.png", r.body)
	if r := s.get(t, target+"?type=hybrid&zoom=1&width=640&height=640"); r.status != 200 {
		t.Errorf("zoom 1: %d %s", r.status, r.body)
	}
}

// TestMapSeatFallback: the geocoder finds nothing (or is not configured),
// so the map centres on the municipality seat from the coordinates file.
func TestMapSeatFallback(t *testing.T) {
	t.Parallel()
	d := fixtureDB(t)
	tiles := newTileServer(t)
	var queries atomic.Int64
	geocoder := newGeocoder(t, &queries)
	dbtest.MustExec(t, d, `UPDATE cnpj.offices SET street = 'RUA DESCONHECIDA' WHERE tax_id = $1`, dbtest.SerproBranch)
	dbtest.Fold(t, d) // office_lookups derived again, as an import would
	for _, url := range []string{geocoder.URL, ""} {
		s := routerWith(t, d, mapDeps(t, tiles, url, 5*time.Second))
		img := decodePNG(t, s.get(t, "/office/"+dbtest.SerproBranch+"/map?width=256&height=256"))
		checkMap(t, img, "roadmap", brasiliaSeat, 17, 256, 256, 1)
	}
	if queries.Load() != 1 {
		t.Errorf("geocoder asked %d times, want 1", queries.Load())
	}
	// An office abroad has no municipality: no position, a JSON 404.
	s := routerWith(t, d, mapDeps(t, tiles, geocoder.URL, 5*time.Second))
	r := s.get(t, "/office/"+dbtest.AbroadTaxID+"/map")
	if r.status != 404 || r.object(t)["message"] != fault.MsgNoLocation {
		t.Errorf("office abroad: %d %s", r.status, r.body)
	}
}

func TestMapErrors(t *testing.T) {
	t.Parallel()
	d := fixtureDB(t)
	tiles := newTileServer(t)
	target := "/office/" + dbtest.SerproBranch + "/map"

	none := routerWith(t, d, nil)
	r := none.get(t, target)
	if r.status != 503 || r.header.Get("Content-Type") != "application/json; charset=utf-8" ||
		r.object(t)["message"] != fault.MsgMapNotConfigured || fmt.Sprint(r.object(t)["code"]) != "503" {
		t.Errorf("no provider: %d %s", r.status, r.body)
	}
	// A template without {type} serves roadmap only.
	maps, err := imagery.NewMaps(imagery.MapConfig{Templates: imagery.TileTemplates(tiles.URL+"/roadmap/{z}/{x}/{y}.png", nil)})
	if err != nil {
		t.Fatal(err)
	}
	seats, err := imagery.LoadMunicipalities(seatsPath(t))
	if err != nil {
		t.Fatal(err)
	}
	roadsOnly := routerWith(t, d, func(o *service.Options, _ *rest.Deps) {
		o.Imagery = &imagery.Provider{Maps: maps, Locator: &imagery.Locator{Seats: seats}}
	})
	if r := roadsOnly.get(t, target+"?type=terrain"); r.status != 503 || r.object(t)["message"] != fault.MsgMapNotConfigured {
		t.Errorf("unconfigured type: %d %s", r.status, r.body)
	}
	if r := roadsOnly.get(t, target+"?type=roadmap&width=100&height=100"); r.status != 200 {
		t.Errorf("configured type: %d %s", r.status, r.body)
	}

	s := routerWith(t, d, mapDeps(t, tiles, "", 5*time.Second))
	r = s.get(t, target+"?type=street&width=79&height=641&scale=3&zoom=0")
	want := []string{
		"type must be one of: roadmap, terrain, satellite, hybrid",
		"width must not be less than 80", "height must not be greater than 640",
		"scale must not be greater than 2", "zoom must not be less than 1",
	}
	if r.status != 400 || fmt.Sprint(r.object(t)["constraints"]) != fmt.Sprint(want) {
		t.Errorf("bad parameters: %d %s", r.status, r.body)
	}
	r = s.get(t, "/office/33683111000281/map?zoom=3&zoom=2")
	want = []string{"taxId must be a valid CNPJ", "zoom must be given only once"}
	if r.status != 400 || fmt.Sprint(r.object(t)["constraints"]) != fmt.Sprint(want) {
		t.Errorf("bad tax id: %d %s", r.status, r.body)
	}
	if r := s.get(t, "/office/"+dbtest.SerproHead+"/map"); r.status != 404 || r.object(t)["message"] != fault.MsgTaxIDNotFound {
		t.Errorf("unknown office: %d %s", r.status, r.body)
	}

	// A tile server that is down is a 503; one that hangs, a 504 in time.
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	for _, c := range []struct {
		url     string
		status  int
		message string
	}{{down.URL, 503, fault.MsgMapDown}, {slow.URL, 504, fault.MsgTimeout}} {
		maps, err := imagery.NewMaps(imagery.MapConfig{Templates: map[string]string{"roadmap": c.url + "/{z}/{x}/{y}.png"}, Timeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		s := routerWith(t, d, func(o *service.Options, _ *rest.Deps) {
			o.Imagery = &imagery.Provider{Maps: maps, Locator: &imagery.Locator{Seats: seats}}
		})
		start := time.Now()
		r := s.get(t, target)
		if r.status != c.status || r.object(t)["message"] != c.message {
			t.Errorf("%s: %d %s, want %d %s", c.url, r.status, r.body, c.status, c.message)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("%s: answered after %v", c.url, el)
		}
	}
}

// streetProvider stands in for Street View Static: a JPEG of the size
// asked for, or with fixed=true always 100x50 (to be scaled).
func streetProvider(t *testing.T, fixed bool, seen *atomic.Value) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Store(r.URL.String())
		w2, h2 := 100, 50
		if !fixed {
			var err error
			size := strings.SplitN(r.URL.Query().Get("size"), "x", 2)
			if len(size) != 2 {
				http.Error(w, "no size", 400)
				return
			}
			if w2, err = strconv.Atoi(size[0]); err != nil {
				http.Error(w, "bad size", 400)
				return
			}
			h2, _ = strconv.Atoi(size[1])
		}
		img := image.NewRGBA(image.Rect(0, 0, w2, h2))
		for i := 0; i < len(img.Pix); i += 4 {
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = 30, 120, 200, 255
		}
		w.Header().Set("Content-Type", "image/jpeg")
		_ = jpeg.Encode(w, img, &jpeg.Options{Quality: 90})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// testLocator locates by municipality seats and, with geocoderURL, by
// that geocoder first.
func testLocator(t *testing.T, geocoderURL string) *imagery.Locator {
	t.Helper()
	seats, err := imagery.LoadMunicipalities(seatsPath(t))
	if err != nil {
		t.Fatal(err)
	}
	loc := &imagery.Locator{Seats: seats}
	if geocoderURL != "" {
		if loc.Geocoder, err = imagery.NewGeocoder(geocoderURL, time.Second, 100); err != nil {
			t.Fatal(err)
		}
	}
	return loc
}

func streetDeps(t *testing.T, template string, timeout time.Duration, geocoderURL string) setup {
	t.Helper()
	street, err := imagery.NewStreet(imagery.StreetConfig{Template: template, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	loc := testLocator(t, geocoderURL)
	return func(o *service.Options, _ *rest.Deps) { o.Imagery = &imagery.Provider{Street: street, Locator: loc} }
}

func near(a, b color.RGBA) bool {
	d := func(x, y uint8) int { return int(math.Abs(float64(x) - float64(y))) }
	return d(a.R, b.R) < 8 && d(a.G, b.G) < 8 && d(a.B, b.B) < 8
}

func TestStreet(t *testing.T) {
	t.Parallel()
	d := fixtureDB(t)
	var queries atomic.Int64
	geocoder := newGeocoder(t, &queries)
	target := "/office/" + dbtest.SerproBranch + "/street"
	blue := color.RGBA{30, 120, 200, 255}

	// Query parameters appended to a template without placeholders; the
	// provider's JPEG comes back as a PNG.
	var seen atomic.Value
	provider := streetProvider(t, false, &seen)
	s := routerWith(t, d, streetDeps(t, provider.URL+"/streetview?key=secret", 5*time.Second, geocoder.URL))
	img := decodePNG(t, s.get(t, target+"?width=320&height=240&fov=100"))
	if b := img.Bounds(); b.Dx() != 320 || b.Dy() != 240 || !near(rgba(img.At(160, 120)), blue) {
		t.Errorf("street image %v, centre %v", b, img.At(160, 120))
	}
	if got := seen.Load().(string); got != "/streetview?key=secret&fov=100&location=-15.780100%2C-47.882500&size=320x240" {
		t.Errorf("provider asked %s", got)
	}
	img = decodePNG(t, s.get(t, target))
	if b := img.Bounds(); b.Dx() != 640 || b.Dy() != 640 {
		t.Errorf("default street image %v, want 640x640", b)
	}

	// Placeholders; an image of another size is scaled to the one asked for.
	fixed := streetProvider(t, true, &seen)
	s = routerWith(t, d, streetDeps(t, fixed.URL+"/img/{lat},{lon}/{width}x{height}/{fov}", 5*time.Second, ""))
	img = decodePNG(t, s.get(t, target+"?width=200&height=100&fov=60"))
	if b := img.Bounds(); b.Dx() != 200 || b.Dy() != 100 || !near(rgba(img.At(100, 50)), blue) {
		t.Errorf("scaled street image %v", b)
	}
	if got := seen.Load().(string); got != "/img/-15.779500,-47.929700/200x100/60" {
		t.Errorf("provider asked %s (want the seat's coordinates)", got)
	}
}

func TestStreetErrors(t *testing.T) {
	t.Parallel()
	d := fixtureDB(t)
	target := "/office/" + dbtest.SerproBranch + "/street"
	if r := routerWith(t, d, nil).get(t, target); r.status != 503 || r.object(t)["message"] != fault.MsgStreetNotConfigured {
		t.Errorf("no provider: %d %s", r.status, r.body)
	}
	var seen atomic.Value
	s := routerWith(t, d, streetDeps(t, streetProvider(t, false, &seen).URL, 5*time.Second, ""))
	r := s.get(t, target+"?width=1000&height=abc&fov=30")
	want := []string{"width must not be greater than 640", "height must be an integer", "fov must not be less than 60"}
	if r.status != 400 || fmt.Sprint(r.object(t)["constraints"]) != fmt.Sprint(want) {
		t.Errorf("bad parameters: %d %s", r.status, r.body)
	}

	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "quota exceeded", http.StatusForbidden)
	}))
	defer failing.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	for _, c := range []struct {
		url     string
		status  int
		message string
	}{{down.URL, 503, fault.MsgStreetDown}, {failing.URL, 503, fault.MsgStreetDown}, {slow.URL, 504, fault.MsgTimeout}} {
		s := routerWith(t, d, streetDeps(t, c.url+"/streetview", 300*time.Millisecond, ""))
		start := time.Now()
		r := s.get(t, target)
		var body map[string]any
		_ = json.Unmarshal(r.body, &body)
		if r.status != c.status || body["message"] != c.message || strings.Contains(string(r.body), "quota") {
			t.Errorf("%s: %d %s, want %d %s", c.url, r.status, r.body, c.status, c.message)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("%s: answered after %v", c.url, el)
		}
	}
}
