package imagery

import (
	"context"

	"github.com/cnpjgraph/cnpjgraph/model"
	"github.com/cnpjgraph/cnpjgraph/service"
)

var _ service.Geocoder = (*Geocoder)(nil)

// Geocode places an address for the office lookup's geocoding option: the
// geocoder's first result, nil when it found nothing. Unlike Locate it
// never falls back to the municipality seat: coordinates in an answer say
// where the address is, not where its town hall is.
func (g *Geocoder) Geocode(ctx context.Context, a model.Address) (*model.Coordinates, error) {
	p, err := g.Search(ctx, a)
	if err != nil || p == nil {
		return nil, err
	}
	return &model.Coordinates{Latitude: p.Lat, Longitude: p.Lon}, nil
}
