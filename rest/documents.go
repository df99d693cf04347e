package rest

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/documents"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// documentRoutes serves the certificates and images: parse and validate,
// then one service lookup (which checks the permission, prices the
// document and refunds it when anything fails), then the bytes.
type documentRoutes struct {
	svc *service.Service
}

// registryCertificate serves GET /rfb/certificate?taxId=&pages=.
func (h documentRoutes) registryCertificate(w http.ResponseWriter, r *http.Request) {
	var cs service.Constraints
	p := newParams(r, &cs)
	q := service.CertificateQuery{TaxID: p.taxID(), Pages: documents.Pages{Registration: true, Members: true}}
	if list := p.list("pages"); len(list) > 0 {
		q.Pages = documents.Pages{}
		for _, v := range list {
			switch v {
			case "REGISTRATION":
				q.Pages.Registration = true
			case "MEMBERS":
				q.Pages.Members = true
			default:
				cs.Add("pages must contain only: " + strings.Join(documents.PageNames, ", "))
			}
		}
	}
	if err := cs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	pdf, err := h.svc.RegistryCertificate(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeFile(w, "application/pdf", "comprovante-"+string(q.TaxID)+".pdf", pdf)
}

// simplesCertificate serves GET /simples/certificate?taxId=.
func (h documentRoutes) simplesCertificate(w http.ResponseWriter, r *http.Request) {
	var cs service.Constraints
	p := newParams(r, &cs)
	taxID := p.taxID()
	if err := cs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	pdf, err := h.svc.SimplesCertificate(r.Context(), taxID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeFile(w, "application/pdf", "simples-"+string(taxID)+".pdf", pdf)
}

// officeMap serves GET /office/{taxId}/map.
func (h documentRoutes) officeMap(w http.ResponseWriter, r *http.Request) {
	var cs service.Constraints
	q := service.MapQuery{TaxID: pathTaxID(r, &cs)}
	p := newParams(r, &cs)
	q.MapOptions = service.MapOptions{
		Type:   p.oneOf("type", service.MapTypes),
		Width:  p.intRange("width", service.MinImageSide, service.MaxImageSide, service.DefaultImageSide),
		Height: p.intRange("height", service.MinImageSide, service.MaxImageSide, service.DefaultImageSide),
		Scale:  p.intRange("scale", 1, 2, 1),
		Zoom:   p.intRange("zoom", service.MinZoom, service.MaxZoom, service.DefaultZoom),
	}
	if err := cs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	png, err := h.svc.Map(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeFile(w, "image/png", "", png)
}

// officeStreet serves GET /office/{taxId}/street.
func (h documentRoutes) officeStreet(w http.ResponseWriter, r *http.Request) {
	var cs service.Constraints
	q := service.StreetQuery{TaxID: pathTaxID(r, &cs)}
	p := newParams(r, &cs)
	q.StreetOptions = service.StreetOptions{
		Width:  p.intRange("width", service.MinImageSide, service.MaxImageSide, service.DefaultImageSide),
		Height: p.intRange("height", service.MinImageSide, service.MaxImageSide, service.DefaultImageSide),
		FOV:    p.intRange("fov", service.MinFOV, service.MaxFOV, service.DefaultFOV),
	}
	if err := cs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	png, err := h.svc.Street(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeFile(w, "image/png", "", png)
}

// pathTaxID reads the taxId path segment.
func pathTaxID(r *http.Request, cs *service.Constraints) cnpj.CNPJ {
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
	if slices.Contains(values, v) {
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
