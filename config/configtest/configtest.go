// Package configtest holds wrong values of the settings, for the tests
// that check each one is refused with a message naming it.
package configtest

import (
	"reflect"
	"time"

	"github.com/cnpjgraph/cnpjgraph/config"
)

// Invalid holds, for every variable that can be wrong, a value that is;
// the free-text ones (keys, paths of the dev sample) accept anything.
var Invalid = map[string]string{
	"DATABASE_URL": "mysql://db/cnpj", "ADDR": "nowhere", "PPROF_ADDR": "nowhere", "METRICS_ADDR": "nowhere", "GOGC": "lots",
	"CORS_ORIGINS": "app.example.com/path", "PUBLIC_URL": "cnpj.example.com", "AUTH_DISABLED": "maybe",
	"JWT_SECRET": "short", "SIGNING_KEY": "short", "REDIS_URL": "http://127.0.0.1:6379",
	"UPSTREAM_URL": "ftp://central", "UPSTREAM_PORTALS": "rfb,everything", "UPSTREAM_STRATEGY": "SOMETIMES",
	"MAP_TILE_URL": "tiles.example.com/{z}/{x}/{y}.png", "MAP_TILE_URL_ROADMAP": "x", "MAP_TILE_URL_TERRAIN": "x",
	"MAP_TILE_URL_SATELLITE": "x", "MAP_TILE_URL_HYBRID": "x", "GEOCODER_URL": "nominatim", "STREET_IMAGE_URL": "streetview",
	"MUNICIPALITY_COORDINATES": "/nonexistent/municipios.csv",
	"RFB_SHARE_URL":            "https://host/index.php/apps", "TABMUN_URL": "file:///etc/TABMUN.CSV", "COUNTRIES_URL": "PAIS.csv",
	"LOG_LEVEL": "verbose", "TRUSTED_PROXIES": "nginx",
}

// FreeText are the variables no value of which is wrong.
var FreeText = []string{"PLAYGROUND_API_KEY", "UPSTREAM_KEY", "SAMPLE_DIR", "RFB_DIR"}

// InvalidValue is a wrong value of v: from Invalid, else by its type.
func InvalidValue(v config.Variable) (string, bool) {
	if s, ok := Invalid[v.Name]; ok {
		return s, true
	}
	switch {
	case v.Type == reflect.TypeFor[time.Duration]():
		return "soon", true
	case v.Kind == reflect.Int:
		return "many", true
	}
	return "", false
}
