package fault

// Public messages of the map, street and geocoding providers behind the
// image routes. A provider that does not answer in time is a 504 with
// MsgTimeout, like any other.
const (
	MsgMapNotConfigured      = "map provider is not configured"
	MsgStreetNotConfigured   = "street imagery provider is not configured"
	MsgMapDown               = "map provider is unavailable"
	MsgStreetDown            = "street imagery provider is unavailable"
	MsgNoLocation            = "no coordinates are known for this office's address"
	MsgGeocoderNotConfigured = "geocoder is not configured"
	MsgGeocoderDown          = "geocoder is unavailable"
)
