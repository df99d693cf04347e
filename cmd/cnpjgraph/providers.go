package main

import (
	"errors"
	"log/slog"

	"github.com/cnpjgraph/cnpjgraph/config"
	"github.com/cnpjgraph/cnpjgraph/documents"
)

// providers are the map, street and geocoding providers of the
// configuration.
type providers struct {
	maps    *documents.Maps
	street  *documents.Street
	locator *documents.Locator
}

// documentProviders builds the providers the configuration names. Each is
// optional: an unset provider makes its route answer 503, never a failure
// to start. A set but unusable one (bad template, unreadable file) stops
// the server: a typo must not pass for "not configured".
func documentProviders(c config.Images, log *slog.Logger) (providers, error) {
	var p providers
	var loc documents.Locator
	if c.MunicipalityCoordinates != "" {
		seats, err := documents.LoadMunicipalities(c.MunicipalityCoordinates)
		if err != nil {
			return p, err
		}
		loc.Seats = seats
	}
	if c.GeocoderURL != "" {
		g, err := documents.NewGeocoder(c.GeocoderURL, c.GeocoderTimeout, c.GeocoderCache)
		if err != nil {
			return p, err
		}
		loc.Geocoder = g
		loc.OnGeocoderError = func(err error) {
			log.Warn("geocoder failed: using the municipality seat", slog.String("error", err.Error()))
		}
	}
	if loc.Seats != nil || loc.Geocoder != nil {
		p.locator = &loc
	}
	perType := map[string]string{
		"roadmap": c.MapTileURLRoadmap, "terrain": c.MapTileURLTerrain,
		"satellite": c.MapTileURLSatellite, "hybrid": c.MapTileURLHybrid,
	}
	if templates := documents.TileTemplates(c.MapTileURL, perType); len(templates) > 0 {
		maps, err := documents.NewMaps(documents.MapConfig{
			Templates:  templates,
			MaxZoom:    c.MapMaxZoom,
			Timeout:    c.MapTimeout,
			CacheBytes: c.MapTileCacheMB << 20,
		})
		if err != nil {
			return p, err
		}
		p.maps = maps
	}
	if c.StreetImageURL != "" {
		street, err := documents.NewStreet(documents.StreetConfig{Template: c.StreetImageURL, Timeout: c.StreetTimeout})
		if err != nil {
			return p, err
		}
		p.street = street
	}
	if (p.maps != nil || p.street != nil) && p.locator == nil {
		return p, errors.New("map or street imagery configured without GEOCODER_URL or MUNICIPALITY_COORDINATES: offices cannot be placed")
	}
	return p, nil
}
