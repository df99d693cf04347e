package imagery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	xdraw "golang.org/x/image/draw"

	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/service"
)

// StreetConfig configures the street-imagery provider.
type StreetConfig struct {
	// Template is a Street View Static-compatible URL. Placeholders {lat},
	// {lon}, {width}, {height} and {fov} are replaced; a template without
	// any gets location, size and fov query parameters appended.
	Template string
	// Timeout bounds one image fetch (default 5s).
	Timeout time.Duration
}

// Street proxies a street-imagery provider.
type Street struct {
	cfg    StreetConfig
	client *http.Client
}

// NewStreet returns the proxy, or an error when the template is unusable.
func NewStreet(cfg StreetConfig) (*Street, error) {
	u, err := url.Parse(strings.NewReplacer("{", "", "}", "").Replace(cfg.Template))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("street imagery URL %q: want an http(s) URL", redact(cfg.Template))
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	return &Street{cfg: cfg, client: newHTTPClient()}, nil
}

// StreetOptions are the validated parameters of a street request.
type StreetOptions = service.StreetOptions

// url is the provider's URL for the view.
func (s *Street) url(p Point, o StreetOptions) string {
	lat := strconv.FormatFloat(p.Lat, 'f', 6, 64)
	lon := strconv.FormatFloat(p.Lon, 'f', 6, 64)
	t := s.cfg.Template
	if strings.Contains(t, "{lat}") || strings.Contains(t, "{lon}") {
		return strings.NewReplacer("{lat}", lat, "{lon}", lon, "{width}", strconv.Itoa(o.Width),
			"{height}", strconv.Itoa(o.Height), "{fov}", strconv.Itoa(o.FOV)).Replace(t)
	}
	q := url.Values{}
	q.Set("location", lat+","+lon)
	q.Set("size", strconv.Itoa(o.Width)+"x"+strconv.Itoa(o.Height))
	q.Set("fov", strconv.Itoa(o.FOV))
	sep := "?"
	if strings.Contains(t, "?") {
		sep = "&"
	}
	return t + sep + q.Encode()
}

// Image fetches the view at p. Whatever the provider's format (JPEG for
// Street View), the image is decoded, so the caller re-encodes it as PNG;
// one of another size is scaled to the size asked for.
func (s *Street) Image(ctx context.Context, p Point, o StreetOptions) (image.Image, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	body, _, err := fetch(ctx, s.client, s.url(p, o))
	if err != nil {
		return nil, providerErr(err, fault.MsgStreetDown)
	}
	img, _, err := image.Decode(bytes.NewReader(body))
	if err != nil {
		return nil, fault.E(fault.Unavailable, fault.MsgStreetDown, errors.Join(errors.New("street imagery is not an image"), err))
	}
	if b := img.Bounds(); b.Dx() != o.Width || b.Dy() != o.Height {
		dst := image.NewRGBA(image.Rect(0, 0, o.Width, o.Height))
		xdraw.CatmullRom.Scale(dst, dst.Bounds(), img, b, xdraw.Src, nil)
		img = dst
	}
	return img, nil
}
