package imagery

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strconv"
	"strings"
)

// Demo is an offline imagery provider: XYZ tiles and street-level views
// drawn on the fly, with no network and no key. `make run` serves it on
// loopback so the map and street routes answer images on a fresh machine;
// tests use it as a real provider. Its pictures are schematic, not maps.
//
//	GET /tiles/{type}/{z}/{x}/{y}.png                   a 256×256 tile
//	GET /street?location=LAT,LON&size=WxH&fov=F         a street-level view
func Demo() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /tiles/{type}/{z}/{x}/{file}", demoTile)
	mux.HandleFunc("GET /street", demoStreet)
	return mux
}

// DemoTileURL is the MAP_TILE_URL of a Demo served at base.
func DemoTileURL(base string) string {
	return strings.TrimRight(base, "/") + "/tiles/{type}/{z}/{x}/{y}.png"
}

// DemoStreetURL is the STREET_IMAGE_URL of a Demo served at base.
func DemoStreetURL(base string) string { return strings.TrimRight(base, "/") + "/street" }

var demoPalette = map[string][2]color.RGBA{
	"roadmap":   {{0xf2, 0xef, 0xe9, 0xff}, {0xff, 0xff, 0xff, 0xff}},
	"terrain":   {{0xd8, 0xe6, 0xc3, 0xff}, {0xf5, 0xf0, 0xdc, 0xff}},
	"satellite": {{0x3b, 0x4d, 0x2e, 0xff}, {0x6b, 0x6b, 0x5e, 0xff}},
	"hybrid":    {{0x3b, 0x4d, 0x2e, 0xff}, {0xf5, 0xd0, 0x4c, 0xff}},
}

// demoTile paints blocks and streets whose layout follows the tile's
// place, so neighbouring tiles differ and a rendered map shows a grid.
func demoTile(w http.ResponseWriter, r *http.Request) {
	colors, ok := demoPalette[r.PathValue("type")]
	z, errZ := strconv.Atoi(r.PathValue("z"))
	x, errX := strconv.Atoi(r.PathValue("x"))
	y, errY := strconv.Atoi(strings.TrimSuffix(r.PathValue("file"), ".png"))
	if !ok || errZ != nil || errX != nil || errY != nil || z < 0 || z > 22 {
		http.NotFound(w, r)
		return
	}
	const side = 256
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	block := 32 + (x*7+y*13+z)%3*16 // street spacing varies from tile to tile
	for py := range side {
		for px := range side {
			c := colors[0]
			if px%block < 4 || py%block < 4 {
				c = colors[1]
			}
			img.SetRGBA(px, py, c)
		}
	}
	w.Header().Set("Content-Type", "image/png")
	_ = png.Encode(w, img)
}

// demoStreet paints sky, façades and a road in perspective, tinted by the
// location so two places differ.
func demoStreet(w http.ResponseWriter, r *http.Request) {
	var width, height int
	if _, err := fmt.Sscanf(r.URL.Query().Get("size"), "%dx%d", &width, &height); err != nil ||
		width < 1 || height < 1 || width > 2048 || height > 2048 {
		http.Error(w, "size must be WxH", http.StatusBadRequest)
		return
	}
	var lat, lon float64
	if _, err := fmt.Sscanf(r.URL.Query().Get("location"), "%f,%f", &lat, &lon); err != nil {
		http.Error(w, "location must be LAT,LON", http.StatusBadRequest)
		return
	}
	tint := uint8(int(lat*1000+lon*1000)&0x3f) + 0x80
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	horizon := height * 2 / 5
	for py := range height {
		for px := range width {
			var c color.RGBA
			mid := width / 2
			spread := (py - horizon) * width / (2 * max(1, height-horizon))
			switch {
			case py < horizon:
				c = color.RGBA{0x9c, 0xc8, 0xf0, 0xff} // sky
			case px > mid-spread/3 && px < mid+spread/3:
				c = color.RGBA{0x55, 0x55, 0x5a, 0xff} // road
			default:
				c = color.RGBA{tint, 0x70, 0x60, 0xff} // façades
			}
			img.SetRGBA(px, py, c)
		}
	}
	w.Header().Set("Content-Type", "image/png")
	_ = png.Encode(w, img)
}
