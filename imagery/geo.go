package imagery

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/internal/buildinfo"
	"github.com/cnpjgraph/cnpjgraph/internal/lru"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// Point is a WGS 84 position in degrees.
type Point struct {
	Lat, Lon float64
}

// Municipality is an IBGE municipality with its seat's coordinates.
type Municipality struct {
	Code int // IBGE 7-digit code
	Name string
	Seat Point
}

// Municipalities are the seats of the municipalities by IBGE code: the
// fallback position of an office the geocoder cannot place, and the
// accented municipality names.
type Municipalities struct {
	byCode map[int]Municipality
}

// LoadMunicipalities reads a CSV in the layout of municipios-coordenadas.csv
// (header codigo_ibge, nome, latitude, longitude, ...; UTF-8).
func LoadMunicipalities(path string) (*Municipalities, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("municipality coordinates: %w", err)
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose on close
	m, err := ReadMunicipalities(f)
	if err != nil {
		return nil, fmt.Errorf("municipality coordinates %s: %w", path, err)
	}
	return m, nil
}

// ReadMunicipalities parses the CSV; columns are found by their header
// names, so extra or reordered columns do not matter.
func ReadMunicipalities(r io.Reader) (*Municipalities, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimPrefix(strings.TrimSpace(h), "\ufeff")] = i
	}
	for _, name := range []string{"codigo_ibge", "nome", "latitude", "longitude"} {
		if _, ok := col[name]; !ok {
			return nil, fmt.Errorf("no column %s", name)
		}
	}
	m := &Municipalities{byCode: map[int]Municipality{}}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		get := func(name string) string {
			if i := col[name]; i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		code, err1 := strconv.Atoi(get("codigo_ibge"))
		lat, err2 := strconv.ParseFloat(get("latitude"), 64)
		lon, err3 := strconv.ParseFloat(get("longitude"), 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		m.byCode[code] = Municipality{Code: code, Name: get("nome"), Seat: Point{lat, lon}}
	}
	if len(m.byCode) == 0 {
		return nil, errors.New("no municipalities")
	}
	return m, nil
}

// Lookup returns the municipality of an IBGE code.
func (m *Municipalities) Lookup(code int) (Municipality, bool) {
	if m == nil {
		return Municipality{}, false
	}
	mu, ok := m.byCode[code]
	return mu, ok
}

// stateNames are the UFs' names, as Nominatim's structured search expects
// the state.
var stateNames = map[string]string{
	"AC": "Acre", "AL": "Alagoas", "AM": "Amazonas", "AP": "Amapá", "BA": "Bahia", "CE": "Ceará",
	"DF": "Distrito Federal", "ES": "Espírito Santo", "GO": "Goiás", "MA": "Maranhão", "MG": "Minas Gerais",
	"MS": "Mato Grosso do Sul", "MT": "Mato Grosso", "PA": "Pará", "PB": "Paraíba", "PE": "Pernambuco",
	"PI": "Piauí", "PR": "Paraná", "RJ": "Rio de Janeiro", "RN": "Rio Grande do Norte", "RO": "Rondônia",
	"RR": "Roraima", "RS": "Rio Grande do Sul", "SC": "Santa Catarina", "SP": "São Paulo", "SE": "Sergipe",
	"TO": "Tocantins",
}

// Geocoder places addresses with a Nominatim-compatible search API. Answers,
// including "not found", are cached; failures are not.
type Geocoder struct {
	search  string // the search endpoint
	timeout time.Duration
	client  *http.Client
	cache   *lru.Cache[string, *Point]
}

// NewGeocoder returns a geocoder over baseURL (the server's root, or its
// /search endpoint). timeout bounds each search; cacheSize bounds the
// number of cached answers.
func NewGeocoder(baseURL string, timeout time.Duration, cacheSize int) (*Geocoder, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("geocoder URL %q: want an http(s) URL", baseURL)
	}
	if !strings.HasSuffix(u.Path, "/search") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/search"
	}
	return &Geocoder{search: u.String(), timeout: timeout, client: newHTTPClient(), cache: lru.New[string, *Point](cacheSize)}, nil
}

// query is the structured search for an address.
func (g *Geocoder) query(a model.Address) url.Values {
	q := url.Values{}
	street := strings.TrimSpace(a.Street)
	if n := strings.TrimSpace(a.Number); n != "" && !strings.EqualFold(n, "S/N") && !strings.EqualFold(n, "SN") {
		street = n + " " + street
	}
	q.Set("street", street)
	q.Set("city", a.City)
	if name, ok := stateNames[a.State]; ok {
		q.Set("state", name)
	}
	if len(a.Zip) == 8 {
		q.Set("postalcode", a.Zip[:5]+"-"+a.Zip[5:])
	}
	q.Set("country", "Brasil")
	q.Set("format", "jsonv2")
	q.Set("limit", "1")
	return q
}

// Search returns the first result for the address; nil when the geocoder
// found nothing.
func (g *Geocoder) Search(ctx context.Context, a model.Address) (*Point, error) {
	q := g.query(a)
	key := q.Encode()
	if p, ok := g.cache.Get(key); ok {
		return p, nil
	}
	if g.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.timeout)
		defer cancel()
	}
	var results []struct {
		Lat json.Number `json:"lat"` // Nominatim sends strings, compatible servers numbers
		Lon json.Number `json:"lon"`
	}
	if err := getJSON(ctx, g.client, g.search+"?"+key, &results); err != nil {
		return nil, err
	}
	var p *Point
	if len(results) > 0 {
		lat, err1 := results[0].Lat.Float64()
		lon, err2 := results[0].Lon.Float64()
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("geocoder: bad coordinates: %w", err)
		}
		p = &Point{lat, lon}
	}
	g.cache.Add(key, p, 1)
	return p, nil
}

// Locator finds where an office is: the geocoder's answer for its address,
// else its municipality seat. Either source may be nil.
type Locator struct {
	Geocoder *Geocoder
	Seats    *Municipalities
	// OnGeocoderError learns of geocoder failures, which the seat fallback
	// otherwise hides (logging); nil: ignored.
	OnGeocoderError func(error)
}

// Locate returns the office's position. A geocoder that fails or finds
// nothing falls back to the seat; no position at all is a 404.
func (l *Locator) Locate(ctx context.Context, a model.Address) (Point, error) {
	if l.Geocoder != nil && a.Municipality != nil {
		p, err := l.Geocoder.Search(ctx, a)
		switch {
		case err != nil && l.OnGeocoderError != nil:
			l.OnGeocoderError(err)
		case p != nil:
			return *p, nil
		}
	}
	if a.Municipality != nil {
		if m, ok := l.Seats.Lookup(*a.Municipality); ok {
			return m.Seat, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return Point{}, fault.E(fault.DeadlineExceeded, fault.MsgTimeout, err)
	}
	return Point{}, fault.E(fault.NotFound, fault.MsgNoLocation, nil)
}

// maxBody bounds what a provider may send us.
const maxBody = 16 << 20

func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	// Deadlines come from the request contexts; no client-wide timeout.
	return &http.Client{Transport: t}
}

// errStatus is a provider's non-2xx answer.
type errStatus struct {
	URL    string
	Status int
}

func (e *errStatus) Error() string { return fmt.Sprintf("%s answered %d", e.URL, e.Status) }

// fetch GETs u and returns the body and its Content-Type.
func fetch(ctx context.Context, client *http.Client, u string) ([]byte, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("User-Agent", buildinfo.UserAgent())
	res, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = redact(ue.URL)
		}
		return nil, "", err
	}
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		return nil, "", &errStatus{URL: redact(u), Status: res.StatusCode}
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return nil, "", err
	}
	return body, res.Header.Get("Content-Type"), nil
}

func getJSON(ctx context.Context, client *http.Client, u string, v any) error {
	body, _, err := fetch(ctx, client, u)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s: %w", redact(u), err)
	}
	return nil
}

// redact drops the query of a provider URL before it reaches a log: it
// may carry an API key.
func redact(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i]
	}
	return u
}

// providerErr classifies a provider failure: no answer in time is a 504,
// anything else means the provider is down (503 with down as message).
func providerErr(err error, down string) error {
	var f *fault.Error
	if errors.As(err, &f) {
		return f
	}
	var ne interface{ Timeout() bool }
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fault.E(fault.DeadlineExceeded, fault.MsgTimeout, err)
	}
	return fault.E(fault.Unavailable, down, err)
}
