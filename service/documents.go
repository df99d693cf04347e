package service

import (
	"bytes"
	"context"
	"errors"
	"image"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/documents"
	"github.com/cnpjgraph/cnpjgraph/fault"
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

// MapQuery asks for the aerial map of an office's address.
type MapQuery struct {
	TaxID cnpj.CNPJ
	documents.MapOptions
}

// StreetQuery asks for the street-level image of an office's address.
type StreetQuery struct {
	TaxID cnpj.CNPJ
	documents.StreetOptions
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

// MapSupports reports whether maps of type can be drawn: a tile server for
// it and a way to place offices are configured.
func (s *Service) MapSupports(mapType string) bool {
	return s.maps.Supports(mapType) && s.locator != nil
}

// Map is the PNG aerial map of an office's address, a map lookup.
func (s *Service) Map(ctx context.Context, q MapQuery) ([]byte, error) {
	if !s.MapSupports(q.Type) {
		return nil, fault.E(fault.Unavailable, fault.MsgMapNotConfigured,
			errors.New("no tile server for map type "+q.Type+", or no geocoder nor municipality coordinates"))
	}
	return s.image(ctx, KindMap, q.TaxID, func(ctx context.Context, at documents.Point) (image.Image, error) {
		return s.maps.Render(ctx, at, q.MapOptions)
	})
}

// StreetSupported reports whether street images can be served.
func (s *Service) StreetSupported() bool { return s.street != nil && s.locator != nil }

// Street is the PNG street-level image of an office's address, a street
// lookup.
func (s *Service) Street(ctx context.Context, q StreetQuery) ([]byte, error) {
	if !s.StreetSupported() {
		return nil, fault.E(fault.Unavailable, fault.MsgStreetNotConfigured,
			errors.New("no street imagery provider, or no geocoder nor municipality coordinates"))
	}
	return s.image(ctx, KindStreet, q.TaxID, func(ctx context.Context, at documents.Point) (image.Image, error) {
		return s.street.Image(ctx, at, q.StreetOptions)
	})
}

// image places the office, renders its image and encodes it as PNG: the
// common body of the map and street lookups.
func (s *Service) image(ctx context.Context, kind Kind, taxID cnpj.CNPJ,
	render func(context.Context, documents.Point) (image.Image, error)) ([]byte, error) {
	return metered(ctx, s, kind, func(b *bill) ([]byte, error) {
		point, err := s.locate(ctx, b, taxID)
		if err != nil {
			return nil, err
		}
		img, err := render(ctx, point)
		if err != nil {
			return nil, err
		}
		return documents.EncodePNG(img)
	})
}

// locate finds the office (404 when unknown) and places its address.
func (s *Service) locate(ctx context.Context, b *bill, taxID cnpj.CNPJ) (documents.Point, error) {
	o, err := s.office(ctx, b, OfficeQuery{TaxID: taxID, Cache: DefaultCache()})
	if err != nil {
		return documents.Point{}, err
	}
	return s.locator.Locate(ctx, o.Address)
}
