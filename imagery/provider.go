// Package imagery draws the pictures of the map and street lookups: a map
// rendered from an XYZ tile server, a street-level view from a Street View
// Static-compatible provider, each at an office placed by a geocoder or its
// municipality seat. It is the service's Imagery; an offline Demo provider
// serves development and tests.
package imagery

import (
	"context"
	"image"

	"github.com/cnpjgraph/cnpjgraph/model"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// Provider is the configured imagery. Each part may be nil: the lookups it
// would serve answer 503.
type Provider struct {
	Maps    *Maps
	Street  *Street
	Locator *Locator // places offices; nil: neither maps nor street
}

var _ service.Imagery = (*Provider)(nil)

// SupportsMap reports whether maps of mapType can be drawn.
func (p *Provider) SupportsMap(mapType string) bool {
	return p != nil && p.Maps.Supports(mapType) && p.Locator != nil
}

// SupportsStreet reports whether street views can be served.
func (p *Provider) SupportsStreet() bool { return p != nil && p.Street != nil && p.Locator != nil }

// Map is the PNG map of an address.
func (p *Provider) Map(ctx context.Context, a model.Address, o service.MapOptions) ([]byte, error) {
	return p.png(ctx, a, func(at Point) (image.Image, error) { return p.Maps.Render(ctx, at, o) })
}

// StreetView is the PNG street-level view of an address.
func (p *Provider) StreetView(ctx context.Context, a model.Address, o service.StreetOptions) ([]byte, error) {
	return p.png(ctx, a, func(at Point) (image.Image, error) { return p.Street.Image(ctx, at, o) })
}

// png places the address, draws its image and encodes it.
func (p *Provider) png(ctx context.Context, a model.Address, draw func(Point) (image.Image, error)) ([]byte, error) {
	at, err := p.Locator.Locate(ctx, a)
	if err != nil {
		return nil, err
	}
	img, err := draw(at)
	if err != nil {
		return nil, err
	}
	return EncodePNG(img)
}
