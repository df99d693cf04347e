package main

import (
	"errors"
	"log/slog"

	"github.com/cnpjgraph/cnpjgraph/config"
	"github.com/cnpjgraph/cnpjgraph/imagery"
)

// imageryProvider builds the map, street and geocoding providers the
// configuration names. Each is
// optional: an unset provider makes its route answer 503, never a failure
// to start. A set but unusable one (bad template, unreadable file) stops
// the server: a typo must not pass for "not configured".
func imageryProvider(c config.Images, log *slog.Logger) (*imagery.Provider, error) {
	p := &imagery.Provider{}
	var loc imagery.Locator
	if c.MunicipalityCoordinates != "" {
		seats, err := imagery.LoadMunicipalities(c.MunicipalityCoordinates)
		if err != nil {
			return nil, err
		}
		loc.Seats = seats
	}
	if c.GeocoderURL != "" {
		g, err := imagery.NewGeocoder(c.GeocoderURL, c.GeocoderTimeout, c.GeocoderCache)
		if err != nil {
			return nil, err
		}
		loc.Geocoder = g
		loc.OnGeocoderError = func(err error) {
			log.Warn("geocoder failed: using the municipality seat", slog.String("error", err.Error()))
		}
	}
	if loc.Seats != nil || loc.Geocoder != nil {
		p.Locator = &loc
	}
	perType := map[string]string{
		"roadmap": c.MapTileURLRoadmap, "terrain": c.MapTileURLTerrain,
		"satellite": c.MapTileURLSatellite, "hybrid": c.MapTileURLHybrid,
	}
	if templates := imagery.TileTemplates(c.MapTileURL, perType); len(templates) > 0 {
		maps, err := imagery.NewMaps(imagery.MapConfig{
			Templates:  templates,
			MaxZoom:    c.MapMaxZoom,
			Timeout:    c.MapTimeout,
			CacheBytes: c.MapTileCacheMB << 20,
		})
		if err != nil {
			return nil, err
		}
		p.Maps = maps
	}
	if c.StreetImageURL != "" {
		street, err := imagery.NewStreet(imagery.StreetConfig{Template: c.StreetImageURL, Timeout: c.StreetTimeout})
		if err != nil {
			return nil, err
		}
		p.Street = street
	}
	if (p.Maps != nil || p.Street != nil) && p.Locator == nil {
		return nil, errors.New("map or street imagery configured without GEOCODER_URL or MUNICIPALITY_COORDINATES: offices cannot be placed")
	}
	return p, nil
}
