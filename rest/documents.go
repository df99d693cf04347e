package rest

import (
	"bytes"
	"context"
	"errors"
	"image"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/documents"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/resolvers"
)

// Costs are the credits each priced document route charges.
type Costs struct {
	Certificate int
	Map         int
	Street      int
}

// DefaultCosts are api-contract.md's defaults.
var DefaultCosts = Costs{Certificate: 1, Map: 3, Street: 10}

// Image and certificate bounds (api-contract.md, "Documents and images").
const (
	minImageSide, maxImageSide, defaultImageSide = 80, 640, 640
	defaultZoom, minZoom, maxZoom                = 17, 1, 20
	defaultFOV, minFOV, maxFOV                   = 90, 60, 120
)

// documentRoutes serves the certificates and images: validate, find the
// office, charge, then do the work, so a malformed request, an unknown tax
// id or a missing provider costs nothing.
type documentRoutes struct {
	svc     *resolvers.Service
	maps    *documents.Maps
	street  *documents.Street
	locator *documents.Locator
	charge  func(ctx context.Context, cost int) error
	costs   Costs
	now     func() time.Time
}

func newDocumentRoutes(d Deps) documentRoutes {
	h := documentRoutes{svc: d.Service, maps: d.Maps, street: d.Street, locator: d.Locator, charge: d.Charge, costs: DefaultCosts, now: d.Now}
	if d.Costs != nil {
		h.costs = *d.Costs
	}
	if h.now == nil {
		h.now = time.Now
	}
	return h
}

// pay debits the request's account through the pricing seam; free without one.
func (h documentRoutes) pay(ctx context.Context, cost int) error {
	if h.charge == nil || cost <= 0 {
		return nil
	}
	return h.charge(ctx, cost)
}

// registryCertificate serves GET /rfb/certificate?taxId=&pages=.
func (h documentRoutes) registryCertificate(w http.ResponseWriter, r *http.Request) {
	var cs resolvers.Constraints
	p := newParams(r, &cs)
	taxID := p.taxID()
	pages := documents.Pages{Registration: true, Members: true}
	if list := p.list("pages"); len(list) > 0 {
		pages = documents.Pages{}
		for _, v := range list {
			switch v {
			case "REGISTRATION":
				pages.Registration = true
			case "MEMBERS":
				pages.Members = true
			default:
				cs.Add("pages must contain only: " + strings.Join(documents.PageNames, ", "))
			}
		}
	}
	if len(cs) > 0 {
		writeError(w, r, fault.Invalid(cs...))
		return
	}
	o, err := h.svc.Registry(r.Context(), resolvers.RegistryQuery{TaxID: taxID, Cache: resolvers.DefaultCache()})
	if err == nil {
		err = h.pay(r.Context(), h.costs.Certificate)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	var buf bytes.Buffer
	if err := documents.RegistryCertificate(&buf, o, pages, h.now()); err != nil {
		writeError(w, r, err)
		return
	}
	writeFile(w, "application/pdf", "comprovante-"+string(taxID)+".pdf", buf.Bytes())
}

// simplesCertificate serves GET /simples/certificate?taxId=.
func (h documentRoutes) simplesCertificate(w http.ResponseWriter, r *http.Request) {
	var cs resolvers.Constraints
	p := newParams(r, &cs)
	taxID := p.taxID()
	if len(cs) > 0 {
		writeError(w, r, fault.Invalid(cs...))
		return
	}
	ctx := r.Context()
	o, err := h.svc.Registry(ctx, resolvers.RegistryQuery{TaxID: taxID, Cache: resolvers.DefaultCache()})
	if err != nil {
		writeError(w, r, err)
		return
	}
	rec, err := h.svc.Simples(ctx, resolvers.SimplesQuery{TaxID: taxID, History: true, Cache: resolvers.DefaultCache()})
	if err == nil {
		err = h.pay(ctx, h.costs.Certificate)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	var buf bytes.Buffer
	if err := documents.SimplesCertificate(&buf, o, rec, h.now()); err != nil {
		writeError(w, r, err)
		return
	}
	writeFile(w, "application/pdf", "simples-"+string(taxID)+".pdf", buf.Bytes())
}

// officeMap serves GET /office/{taxId}/map.
func (h documentRoutes) officeMap(w http.ResponseWriter, r *http.Request) {
	var cs resolvers.Constraints
	taxID := pathTaxID(r, &cs)
	p := newParams(r, &cs)
	opts := documents.MapOptions{
		Type:   p.oneOf("type", documents.MapTypes),
		Width:  p.intRange("width", minImageSide, maxImageSide, defaultImageSide),
		Height: p.intRange("height", minImageSide, maxImageSide, defaultImageSide),
		Scale:  p.intRange("scale", 1, 2, 1),
		Zoom:   p.intRange("zoom", minZoom, maxZoom, defaultZoom),
	}
	if len(cs) > 0 {
		writeError(w, r, fault.Invalid(cs...))
		return
	}
	if !h.maps.Supports(opts.Type) || h.locator == nil {
		writeError(w, r, fault.E(fault.Unavailable, fault.MsgMapNotConfigured,
			errors.New("no tile server for map type "+opts.Type+", or no geocoder nor municipality coordinates")))
		return
	}
	h.serveImage(w, r, taxID, h.costs.Map, func(ctx context.Context, at documents.Point) (image.Image, error) {
		return h.maps.Render(ctx, at, opts)
	})
}

// officeStreet serves GET /office/{taxId}/street.
func (h documentRoutes) officeStreet(w http.ResponseWriter, r *http.Request) {
	var cs resolvers.Constraints
	taxID := pathTaxID(r, &cs)
	p := newParams(r, &cs)
	opts := documents.StreetOptions{
		Width:  p.intRange("width", minImageSide, maxImageSide, defaultImageSide),
		Height: p.intRange("height", minImageSide, maxImageSide, defaultImageSide),
		FOV:    p.intRange("fov", minFOV, maxFOV, defaultFOV),
	}
	if len(cs) > 0 {
		writeError(w, r, fault.Invalid(cs...))
		return
	}
	if h.street == nil || h.locator == nil {
		writeError(w, r, fault.E(fault.Unavailable, fault.MsgStreetNotConfigured,
			errors.New("no street imagery provider, or no geocoder nor municipality coordinates")))
		return
	}
	h.serveImage(w, r, taxID, h.costs.Street, func(ctx context.Context, at documents.Point) (image.Image, error) {
		return h.street.Image(ctx, at, opts)
	})
}

// serveImage places the office (charging cost), renders its image and
// answers it as PNG: the common tail of the map and street routes.
func (h documentRoutes) serveImage(w http.ResponseWriter, r *http.Request, taxID cnpj.CNPJ, cost int,
	render func(context.Context, documents.Point) (image.Image, error)) {
	ctx := r.Context()
	point, err := h.locate(ctx, taxID, cost)
	if err != nil {
		writeError(w, r, err)
		return
	}
	img, err := render(ctx, point)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body, err := documents.EncodePNG(img)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeFile(w, "image/png", "", body)
}

// locate finds the office (404 when unknown), charges cost, and places it.
func (h documentRoutes) locate(ctx context.Context, taxID cnpj.CNPJ, cost int) (documents.Point, error) {
	o, err := h.svc.Office(ctx, resolvers.OfficeQuery{TaxID: taxID, Cache: resolvers.DefaultCache()})
	if err != nil {
		return documents.Point{}, err
	}
	if err := h.pay(ctx, cost); err != nil {
		return documents.Point{}, err
	}
	return h.locator.Locate(ctx, o.Address)
}

// pathTaxID reads the taxId path segment.
func pathTaxID(r *http.Request, cs *resolvers.Constraints) cnpj.CNPJ {
	if v, ok := pathParam(r, "taxId", cs, taxIDRule); ok {
		return cs.ParseTaxID("taxId", v)
	}
	return ""
}

// intRange reads an optional integer within lo..hi, def when absent.
func (p params) intRange(name string, lo, hi, def int) int {
	v, ok := p.single(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil && !cnpj.Digits(strings.TrimPrefix(v, "-")):
		p.cs.Add(name + " must be an integer")
	case err != nil && strings.HasPrefix(v, "-"), err == nil && n < lo:
		p.cs.Add(name + " must not be less than " + strconv.Itoa(lo))
	case err != nil || n > hi: // too many digits for an int is also too large
		p.cs.Add(name + " must not be greater than " + strconv.Itoa(hi))
	default:
		return n
	}
	return def
}

// oneOf reads an optional value among values, the first being the default.
func (p params) oneOf(name string, values []string) string {
	v, ok := p.single(name)
	if !ok {
		return values[0]
	}
	if contains(values, v) {
		return v
	}
	p.cs.Add(name + " must be one of: " + strings.Join(values, ", "))
	return values[0]
}

// writeFile sends a binary answer with its Content-Type; a file name makes
// browsers offer a sensible name when saving it.
func writeFile(w http.ResponseWriter, contentType, name string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if name != "" {
		h.Set("Content-Disposition", `inline; filename="`+name+`"`)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
