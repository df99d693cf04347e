package service

import (
	"bytes"
	"context"
	"errors"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/documents"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// Image and certificate bounds (api-contract.md, "Documents and images").
const (
	MinImageSide, MaxImageSide, DefaultImageSide = 80, 640, 640
	DefaultZoom, MinZoom, MaxZoom                = 17, 1, 20
	DefaultFOV, MinFOV, MaxFOV                   = 90, 60, 120
)

// CertificateQuery asks for the registry certificate of an office.
type CertificateQuery struct {
	TaxID cnpj.CNPJ
	Pages documents.Pages
}

// MapTypes are the values of the map's type parameter, the default first.
var MapTypes = []string{"roadmap", "terrain", "satellite", "hybrid"}

// MapOptions are the validated parameters of a map.
type MapOptions struct {
	Type          string
	Width, Height int // logical pixels; the image is Width*Scale x Height*Scale
	Scale         int // 1 or 2
	Zoom          int
}

// StreetOptions are the validated parameters of a street-level view.
type StreetOptions struct {
	Width, Height int
	FOV           int // horizontal field of view in degrees
}

// MapQuery asks for the aerial map of an office's address.
type MapQuery struct {
	TaxID cnpj.CNPJ
	MapOptions
}

// StreetQuery asks for the street-level image of an office's address.
type StreetQuery struct {
	TaxID cnpj.CNPJ
	StreetOptions
}

// Imagery draws the pictures of the map and street lookups at an address
// (package imagery, over the configured providers).
type Imagery interface {
	SupportsMap(mapType string) bool
	SupportsStreet() bool
	Map(ctx context.Context, a model.Address, o MapOptions) ([]byte, error)
	StreetView(ctx context.Context, a model.Address, o StreetOptions) ([]byte, error)
}

// RegistryCertificate is the PDF of the registry record (/rfb/certificate):
// a certificate lookup; the record it prints is part of it, and costs only
// what it fetches online.
func (s *Service) RegistryCertificate(ctx context.Context, q CertificateQuery) ([]byte, error) {
	return metered(ctx, s, KindCertificate, func(b *bill) ([]byte, error) {
		o, err := s.registry(ctx, b, RegistryQuery{TaxID: q.TaxID, Cache: DefaultCache()})
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := documents.RegistryCertificate(&buf, o, q.Pages, s.now()); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	})
}

// SimplesCertificate is the PDF of the Simples Nacional / SIMEI state and
// history (/simples/certificate), a certificate lookup.
func (s *Service) SimplesCertificate(ctx context.Context, taxID cnpj.CNPJ) ([]byte, error) {
	return metered(ctx, s, KindCertificate, func(b *bill) ([]byte, error) {
		o, err := s.registry(ctx, b, RegistryQuery{TaxID: taxID, Cache: DefaultCache()})
		if err != nil {
			return nil, err
		}
		rec, err := s.simples(ctx, b, SimplesQuery{TaxID: taxID, History: true, Cache: DefaultCache()})
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := documents.SimplesCertificate(&buf, o, rec, s.now()); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	})
}

// Map is the PNG aerial map of an office's address, a map lookup.
func (s *Service) Map(ctx context.Context, q MapQuery) ([]byte, error) {
	if s.imagery == nil || !s.imagery.SupportsMap(q.Type) {
		return nil, fault.E(fault.Unavailable, fault.MsgMapNotConfigured,
			errors.New("no tile server for map type "+q.Type+", or no geocoder nor municipality coordinates"))
	}
	return s.picture(ctx, KindMap, q.TaxID, func(a model.Address) ([]byte, error) {
		leaveTurn(ctx) // the provider is slower than the cores
		return s.imagery.Map(ctx, a, q.MapOptions)
	})
}

// Street is the PNG street-level image of an office's address, a street
// lookup.
func (s *Service) Street(ctx context.Context, q StreetQuery) ([]byte, error) {
	if s.imagery == nil || !s.imagery.SupportsStreet() {
		return nil, fault.E(fault.Unavailable, fault.MsgStreetNotConfigured,
			errors.New("no street imagery provider, or no geocoder nor municipality coordinates"))
	}
	return s.picture(ctx, KindStreet, q.TaxID, func(a model.Address) ([]byte, error) {
		leaveTurn(ctx) // the provider is slower than the cores
		return s.imagery.StreetView(ctx, a, q.StreetOptions)
	})
}

// picture finds the office (404 when unknown) and draws its address: the
// common body of the map and street lookups.
func (s *Service) picture(ctx context.Context, kind Kind, taxID cnpj.CNPJ, draw func(model.Address) ([]byte, error)) ([]byte, error) {
	return metered(ctx, s, kind, func(b *bill) ([]byte, error) {
		o, err := s.office(ctx, b, OfficeQuery{TaxID: taxID, Cache: DefaultCache()})
		if err != nil {
			return nil, err
		}
		return draw(o.Address)
	})
}
