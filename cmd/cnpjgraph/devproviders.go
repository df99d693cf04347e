package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/imagery"
)

// devProviders makes `make run` show every feature on a machine with no
// providers: municipality seats from the project's shared data (the map's
// and street view's fallback position, and the accented city names of
// /companies), and the offline demo map and street provider served by this
// process on loopback. It sets only what the operator left unset, before
// the configuration is read; notes says what it did.
func devProviders(ctx context.Context) (notes []string, err error) {
	if os.Getenv("MUNICIPALITY_COORDINATES") == "" {
		if p := sharedCoordinates(); p != "" {
			_ = os.Setenv("MUNICIPALITY_COORDINATES", p)
			notes = append(notes, "municipality seats from "+p)
		}
	}
	placed := os.Getenv("MUNICIPALITY_COORDINATES") != "" || os.Getenv("GEOCODER_URL") != ""
	mapSet := false
	for _, v := range []string{"MAP_TILE_URL", "MAP_TILE_URL_ROADMAP", "MAP_TILE_URL_TERRAIN", "MAP_TILE_URL_SATELLITE", "MAP_TILE_URL_HYBRID"} {
		mapSet = mapSet || os.Getenv(v) != ""
	}
	streetSet := os.Getenv("STREET_IMAGE_URL") != ""
	if mapSet && streetSet {
		return notes, nil
	}
	if !placed {
		return append(notes, "no demo map or street view: no MUNICIPALITY_COORDINATES (../shared/data/municipios/municipios-coordenadas.csv not found) nor GEOCODER_URL to place offices"), nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return notes, fmt.Errorf("demo imagery provider: %w", err)
	}
	srv := &http.Server{Handler: imagery.Demo(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "dev: demo imagery provider: %v\n", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	base := "http://" + ln.Addr().String()
	if !mapSet {
		_ = os.Setenv("MAP_TILE_URL", imagery.DemoTileURL(base))
	}
	if !streetSet {
		_ = os.Setenv("STREET_IMAGE_URL", imagery.DemoStreetURL(base))
	}
	return append(notes, "demo map and street provider (schematic pictures, no network) on "+base), nil
}

// sharedCoordinates finds municipios-coordenadas.csv in the project's
// shared data, beside the clone ($CNPJGRAPH_SHARED overrides), or "".
func sharedCoordinates() string {
	dirs := []string{filepath.Join("..", "shared")}
	if d := os.Getenv("CNPJGRAPH_SHARED"); d != "" {
		dirs = []string{d}
	}
	for _, d := range dirs {
		p := filepath.Join(d, "data", "municipios", "municipios-coordenadas.csv")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
			return p
		}
	}
	return ""
}

// printDevFeatures shows the rest of what `make run` serves, with
// requests to try.
func printDevFeatures(ctx context.Context, d *sqlx.DB, notes []string, key, base, taxID string) {
	for _, n := range notes {
		fmt.Printf("dev: %s\n", n)
	}
	zip := "70836900"
	_ = d.GetContext(ctx, &zip, `SELECT zip FROM `+db.LiveSchema+`.offices WHERE tax_id = $1 AND zip ~ '^[0-9]{8}$'`, taxID)
	fmt.Printf(`
    curl -H 'Authorization: %[1]s' -o map.png '%[2]s/office/%[3]s/map'
    curl -H 'Authorization: %[1]s' -o street.png '%[2]s/office/%[3]s/street?width=320&height=240'
    curl -H 'Authorization: %[1]s' -o comprovante.pdf '%[2]s/rfb/certificate?taxId=%[3]s'
    curl -H 'Authorization: %[1]s' '%[2]s/office/%[3]s?simplesHistory=true&links=RFB_CERTIFICATE,OFFICE_MAP'
    curl -H 'Authorization: %[1]s' '%[2]s/companies/%[3]s'
    curl -H 'Authorization: %[1]s' '%[2]s/zip/%[4]s'
    curl -H 'Authorization: %[1]s' '%[2]s/credit'
    curl -H 'Authorization: %[1]s' '%[2]s/office?names.in=comercio&address.state.in=SP&limit=3'
    curl -H 'Authorization: %[1]s' '%[2]s/person?name.in=silva&limit=3'

    lists and their exports (offices.xlsx, offices.zip; docs/api.md, "Lists"):
    curl -H 'Authorization: %[1]s' -d '{"title":"Fornecedores","items":["%[3]s"]}' '%[2]s/list'
    curl -H 'Authorization: %[1]s' -d '{"options":{"simples":true}}' '%[2]s/list/<the list id>/export'
    curl -H 'Authorization: %[1]s' '%[2]s/list/<the list id>/export'

`, key, base, taxID, zip)
}
