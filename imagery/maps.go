package imagery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/jpeg" // satellite tiles and street imagery often come as JPEG
	"image/png"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/singleflight"

	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/service"

	"github.com/cnpjgraph/cnpjgraph/internal/lru"
)

// tileSize is the side of an XYZ tile in pixels.
const tileSize = 256

// TileTemplates builds the URL template of each map type: perType's own
// (MAP_TILE_URL_SATELLITE, ...), else base when it names {type}; a base
// without {type} serves only roadmap, so a satellite request is never
// silently answered with a road map.
func TileTemplates(base string, perType map[string]string) map[string]string {
	out := map[string]string{}
	for _, t := range service.MapTypes {
		switch {
		case perType[t] != "":
			out[t] = perType[t]
		case strings.Contains(base, "{type}"):
			out[t] = strings.ReplaceAll(base, "{type}", t)
		case base != "" && t == "roadmap":
			out[t] = base
		}
	}
	return out
}

// MapConfig configures the map renderer.
type MapConfig struct {
	// Templates maps a type to its XYZ URL template with {z}, {x} and {y}.
	Templates map[string]string
	// MaxZoom is the deepest zoom the tile server has (default 19); deeper
	// views are drawn from its tiles magnified.
	MaxZoom int
	// Timeout bounds the tile fetches of one render (default 5s).
	Timeout time.Duration
	// CacheBytes bounds the tile cache (default 64 MiB).
	CacheBytes int
}

// Maps renders map images from an XYZ tile server. Tiles are cached by
// type/z/x/y, and concurrent requests for one tile fetch it once.
type Maps struct {
	cfg    MapConfig
	client *http.Client
	tiles  *lru.Cache[string, []byte]
	group  singleflight.Group
}

// NewMaps returns a renderer, or an error when a template is unusable.
func NewMaps(cfg MapConfig) (*Maps, error) {
	if len(cfg.Templates) == 0 {
		return nil, errors.New("map: no tile URL template")
	}
	for t, tmpl := range cfg.Templates {
		if !strings.Contains(tmpl, "{z}") || !strings.Contains(tmpl, "{x}") || !strings.Contains(tmpl, "{y}") {
			return nil, fmt.Errorf("map: tile URL template of %s must contain {z}, {x} and {y}: %q", t, redact(tmpl))
		}
	}
	if cfg.MaxZoom <= 0 {
		cfg.MaxZoom = 19
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.CacheBytes == 0 {
		cfg.CacheBytes = 64 << 20
	}
	return &Maps{cfg: cfg, client: newHTTPClient(), tiles: lru.New[string, []byte](cfg.CacheBytes)}, nil
}

// Supports reports whether a template is configured for the map type.
func (m *Maps) Supports(typ string) bool { return m != nil && m.cfg.Templates[typ] != "" }

// MapOptions are the validated parameters of a map request.
type MapOptions = service.MapOptions

// worldPixel is the position of p at zoom level z in Web Mercator pixels.
func worldPixel(p Point, z float64) (x, y float64) {
	n := tileSize * math.Exp2(z)
	lat := math.Max(-85.05112878, math.Min(85.05112878, p.Lat)) * math.Pi / 180
	x = (p.Lon + 180) / 360 * n
	y = (1 - math.Log(math.Tan(lat)+1/math.Cos(lat))/math.Pi) / 2 * n
	return x, y
}

// Render draws the map centred on p with a marker at p. With scale 2 the
// same area is drawn with twice the pixels, from tiles one zoom deeper.
func (m *Maps) Render(ctx context.Context, p Point, o MapOptions) (*image.RGBA, error) {
	tmpl := m.cfg.Templates[o.Type]
	if tmpl == "" {
		return nil, fault.E(fault.Unavailable, fault.MsgMapNotConfigured, fmt.Errorf("no tile template for %s", o.Type))
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()

	w, h := o.Width*o.Scale, o.Height*o.Scale
	virtual := o.Zoom + int(math.Log2(float64(o.Scale))) // zoom of one output pixel
	z := min(virtual, m.cfg.MaxZoom)                     // zoom of the tiles fetched
	mag := 1 << (virtual - z)                            // output pixels per tile pixel
	cx, cy := worldPixel(p, float64(virtual))
	left, top := math.Floor(cx-float64(w)/2), math.Floor(cy-float64(h)/2)
	span := float64(tileSize * mag) // a tile's side in output pixels

	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{0xe5, 0xe3, 0xdf, 0xff}}, image.Point{}, draw.Src)

	n := 1 << z
	tx0, ty0 := int(math.Floor(left/span)), int(math.Floor(top/span))
	tx1, ty1 := int(math.Floor((left+float64(w)-1)/span)), int(math.Floor((top+float64(h)-1)/span))
	type placed struct {
		tile image.Image
		at   image.Rectangle
	}
	results := make([]placed, (tx1-tx0+1)*(ty1-ty0+1))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	i := 0
	for ty := ty0; ty <= ty1; ty++ {
		for tx := tx0; tx <= tx1; tx++ {
			slot := &results[i]
			i++
			if ty < 0 || ty >= n {
				continue // beyond the poles: background
			}
			x := ((tx % n) + n) % n // the world wraps east-west
			ox, oy := int(float64(tx)*span-left), int(float64(ty)*span-top)
			at := image.Rect(ox, oy, ox+int(span), oy+int(span))
			y := ty
			g.Go(func() error {
				tile, err := m.tile(gctx, tmpl, o.Type, z, x, y)
				if err != nil {
					return err
				}
				*slot = placed{tile: tile, at: at}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, providerErr(err, fault.MsgMapDown)
	}
	for _, r := range results {
		if r.tile == nil {
			continue
		}
		if mag == 1 && r.tile.Bounds().Dx() == tileSize {
			draw.Draw(img, r.at, r.tile, r.tile.Bounds().Min, draw.Over)
		} else {
			xdraw.ApproxBiLinear.Scale(img, r.at, r.tile, r.tile.Bounds(), draw.Over, nil)
		}
	}
	drawMarker(img, w/2, h/2, o.Scale)
	return img, nil
}

// tile returns a decoded tile, from the cache or the server; a tile the
// server does not have (404) is nil and leaves the background.
func (m *Maps) tile(ctx context.Context, tmpl, typ string, z, x, y int) (image.Image, error) {
	key := typ + "/" + strconv.Itoa(z) + "/" + strconv.Itoa(x) + "/" + strconv.Itoa(y)
	body, ok := m.tiles.Get(key)
	if !ok {
		v, err, _ := m.group.Do(key, func() (any, error) {
			u := strings.NewReplacer("{z}", strconv.Itoa(z), "{x}", strconv.Itoa(x), "{y}", strconv.Itoa(y), "{type}", typ).Replace(tmpl)
			b, _, err := fetch(ctx, m.client, u)
			var st *errStatus
			if errors.As(err, &st) && st.Status == http.StatusNotFound {
				return []byte(nil), nil
			}
			if err != nil {
				return nil, err
			}
			m.tiles.Add(key, b, len(b))
			return b, nil
		})
		if err != nil {
			return nil, err
		}
		body = v.([]byte)
	}
	if body == nil {
		return nil, nil
	}
	tile, _, err := image.Decode(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("tile %s: %w", key, err)
	}
	return tile, nil
}

// Marker colours: the pin's red and its white dot.
var (
	MarkerColor = color.RGBA{0xd9, 0x30, 0x25, 0xff}
	markerDot   = color.RGBA{0xff, 0xff, 0xff, 0xff}
	markerEdge  = color.RGBA{0x8c, 0x1b, 0x13, 0xff}
)

// drawMarker draws a map pin whose tip is at (x, y): a round head above a
// tail that narrows to the point.
func drawMarker(img *image.RGBA, x, y, scale int) {
	s := float64(scale)
	r := 9 * s
	hx, hy := float64(x), float64(y)-22*s // head centre
	for py := int(hy - r - 2*s); py <= y; py++ {
		for px := int(hx - r - 2*s); px <= int(hx+r+2*s); px++ {
			fx, fy := float64(px)+0.5, float64(py)+0.5
			d := math.Hypot(fx-hx, fy-hy)
			// The tail: a triangle from the head's width down to the tip.
			inTail := fy >= hy && fy <= float64(y)+1 && math.Abs(fx-hx) <= r*(float64(y)+1-fy)/(float64(y)+1-hy)
			switch {
			case d <= 3.2*s:
				img.SetRGBA(px, py, markerDot)
			case d <= r || inTail:
				img.SetRGBA(px, py, MarkerColor)
			case d <= r+1.2*s:
				img.SetRGBA(px, py, markerEdge)
			}
		}
	}
}

// EncodePNG encodes an image as PNG, fast: these images are made per
// request.
func EncodePNG(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
