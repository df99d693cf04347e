package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/documents"
	"github.com/cnpjgraph/cnpjgraph/rest"
)

// documentProviders configures the map, street and geocoding providers
// from the environment into deps. Each is optional: an unset provider makes
// its route answer 503, never a failure to start. A set but unusable one
// (bad URL, unreadable file) stops the server: a typo must not pass for
// "not configured".
func documentProviders(deps *rest.Deps, log *slog.Logger) error {
	deps.PublicURL = os.Getenv("PUBLIC_URL")

	var loc documents.Locator
	if path := os.Getenv("MUNICIPALITY_COORDINATES"); path != "" {
		seats, err := documents.LoadMunicipalities(path)
		if err != nil {
			return err
		}
		loc.Seats = seats
	}
	if u := os.Getenv("GEOCODER_URL"); u != "" {
		g, err := documents.NewGeocoder(u, envDuration("GEOCODER_TIMEOUT", defaultProviderTimeout), envInt("GEOCODER_CACHE", 10000))
		if err != nil {
			return err
		}
		loc.Geocoder = g
		loc.OnGeocoderError = func(err error) {
			log.Warn("geocoder failed: using the municipality seat", slog.String("error", err.Error()))
		}
	}
	if loc.Seats != nil || loc.Geocoder != nil {
		deps.Locator = &loc
	}

	perType := map[string]string{}
	for _, t := range documents.MapTypes {
		perType[t] = os.Getenv("MAP_TILE_URL_" + strings.ToUpper(t))
	}
	if templates := documents.TileTemplates(os.Getenv("MAP_TILE_URL"), perType); len(templates) > 0 {
		maps, err := documents.NewMaps(documents.MapConfig{
			Templates:  templates,
			MaxZoom:    envInt("MAP_MAX_ZOOM", 19),
			Timeout:    envDuration("MAP_TIMEOUT", defaultProviderTimeout),
			CacheBytes: envInt("MAP_TILE_CACHE_MB", 64) << 20,
		})
		if err != nil {
			return err
		}
		deps.Maps = maps
	}
	if t := os.Getenv("STREET_IMAGE_URL"); t != "" {
		street, err := documents.NewStreet(documents.StreetConfig{Template: t, Timeout: envDuration("STREET_TIMEOUT", defaultProviderTimeout)})
		if err != nil {
			return err
		}
		deps.Street = street
	}
	if (deps.Maps != nil || deps.Street != nil) && deps.Locator == nil {
		return fmt.Errorf("map or street imagery configured without GEOCODER_URL or MUNICIPALITY_COORDINATES: offices cannot be placed")
	}
	return nil
}

// defaultProviderTimeout stays well under the default request timeout, so
// a hanging provider is a 504 of ours, not a cut connection.
const defaultProviderTimeout = 5 * time.Second
