package service

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// What the rest of a CNPJá client's surface needs from the service: the
// postal codes, the caller's credits, and the office lookup's options that
// add to its answer (SUFRAMA, coordinates, links to files).

// MsgZipNotFound is the 404 of a postal code no office uses.
const MsgZipNotFound = "zip code not found: no establishment of the registry uses it"

// MsgNoCredits is the 404 of /credit on a server that keeps no accounts.
const MsgNoCredits = "credits are not accounted: this server runs without accounts"

// Zip is the postal code lookup (GET /zip/:code), from the live snapshot's
// offices. A code's answer changes only with the snapshot, and one used by
// thousands of offices reads them all, so answers are kept per snapshot.
func (s *Service) Zip(ctx context.Context, code string) (model.Zip, error) {
	return metered(ctx, s, KindZip, func(*bill) (model.Zip, error) {
		codes, err := s.snapshot(ctx)
		if err != nil {
			return model.Zip{}, err
		}
		key := zipKey{snapshot: codes.Snapshot.ID, code: code}
		if z, ok := s.zips.Get(key); ok {
			return z, nil
		}
		z, err := s.store.Zip(ctx, code)
		if err != nil {
			return model.Zip{}, storeErr(err, MsgZipNotFound)
		}
		s.zips.Add(key, z, 1)
		return z, nil
	})
}

// zipKey names a kept postal code answer.
type zipKey struct {
	snapshot int64
	code     string
}

// zipCacheEntries bounds the postal codes kept (about 200 bytes each).
const zipCacheEntries = 50_000

// ParseZip validates a CEP: 8 digits.
func (c *Constraints) ParseZip(name, s string) string {
	if len(s) != 8 || !cnpj.Digits(s) {
		c.Add(name + " must be a CEP of 8 digits")
		return ""
	}
	return s
}

// Balancer is implemented by meters that keep accounts: the credits the
// caller of ctx may still spend, false when ctx has no caller.
type Balancer interface {
	Balance(ctx context.Context) (model.Credits, bool, error)
}

// Credit is the caller's credits (GET /credit): free, for any valid
// credential. A server without accounts answers 404.
func (s *Service) Credit(ctx context.Context) (model.Credits, error) {
	return metered(ctx, s, KindCredit, func(*bill) (model.Credits, error) {
		b, ok := s.meter.(Balancer)
		if !ok {
			return model.Credits{}, fault.E(fault.NotFound, MsgNoCredits, nil)
		}
		c, ok, err := b.Balance(ctx)
		if err != nil {
			return model.Credits{}, err
		}
		if !ok {
			return model.Credits{}, fault.E(fault.NotFound, MsgNoCredits, nil)
		}
		return c, nil
	})
}

// Geocoder places an address (the configured geocoder, the one maps use):
// nil coordinates when it finds nothing.
type Geocoder interface {
	Geocode(ctx context.Context, a model.Address) (*model.Coordinates, error)
}

// SignLink signs a link to a file route for the caller of ctx, valid until
// expires: the path with its signed query (or an absolute URL), and false
// when the caller may not open it (lacks permission). package auth
// implements it for the request's credential.
type SignLink func(ctx context.Context, permission, path string, q url.Values, expires time.Time) (string, bool)

// LinkLifetime is how long the links in answers work, from the query date
// (interface-spec.md, "Limits": the legacy format's 90 days).
const LinkLifetime = 90 * 24 * time.Hour

// Link types of the office lookup's links option, in the order answers
// list them.
const (
	LinkRFBCertificate     = "RFB_CERTIFICATE"
	LinkSimplesCertificate = "SIMPLES_CERTIFICATE"
	LinkCCCCertificate     = "CCC_CERTIFICATE"
	LinkSuframaCertificate = "SUFRAMA_CERTIFICATE"
	LinkOfficeMap          = "OFFICE_MAP"
	LinkOfficeStreet       = "OFFICE_STREET"
)

// LinkTypes are the values of the links option.
var LinkTypes = []string{LinkRFBCertificate, LinkSimplesCertificate, LinkCCCCertificate,
	LinkSuframaCertificate, LinkOfficeMap, LinkOfficeStreet}

// ParseLinks validates the link types asked for, deduplicated in the order
// LinkTypes lists them.
func (c *Constraints) ParseLinks(name string, values []string) []string {
	asked := map[string]bool{}
	for _, v := range values {
		if !isLinkType(v) {
			c.Add(name + " must contain only: " + strings.Join(LinkTypes, ", "))
			continue
		}
		asked[v] = true
	}
	var out []string
	for _, t := range LinkTypes {
		if asked[t] {
			out = append(out, t)
		}
	}
	return out
}

func isLinkType(s string) bool {
	for _, t := range LinkTypes {
		if t == s {
			return true
		}
	}
	return false
}

// linkTarget is the file route a link type opens for an office, and the
// kind of lookup that route is (whose permission the caller needs).
func linkTarget(t string, taxID string) (Kind, string, url.Values) {
	office := "/office/" + taxID
	switch t {
	case LinkRFBCertificate:
		return KindCertificate, "/rfb/certificate", url.Values{"taxId": {taxID}}
	case LinkSimplesCertificate:
		return KindCertificate, "/simples/certificate", url.Values{"taxId": {taxID}}
	case LinkCCCCertificate:
		return KindCertificate, "/ccc/certificate", url.Values{"taxId": {taxID}}
	case LinkSuframaCertificate:
		return KindCertificate, "/suframa/certificate", url.Values{"taxId": {taxID}}
	case LinkOfficeMap:
		return KindMap, office + "/map", url.Values{}
	}
	return KindStreet, office + "/street", url.Values{}
}

type baseURLKey struct{}

// WithBaseURL records the scheme and host links in answers start with
// ("https://api.example.com"): the REST router sets it per request, from
// PUBLIC_URL or the request itself. Without it links are paths.
func WithBaseURL(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, baseURLKey{}, strings.TrimRight(base, "/"))
}

func baseURL(ctx context.Context) string {
	s, _ := ctx.Value(baseURLKey{}).(string)
	return s
}

// officeOptionsServed refuses, before the lookup is admitted, the options a
// configuration cannot serve: never silently dropped.
func (s *Service) officeOptionsServed(q OfficeQuery) error {
	if q.Geocoding && s.geocoder == nil {
		return fault.E(fault.Unavailable, fault.MsgGeocoderNotConfigured, errors.New("geocoding asked without GEOCODER_URL"))
	}
	if q.Suframa {
		if err := s.onlineOnly(PortalSuframa); err != nil {
			return err
		}
	}
	for _, t := range q.Links {
		var err error
		switch t {
		case LinkCCCCertificate:
			err = s.onlineOnly(PortalRegistrations)
		case LinkSuframaCertificate:
			err = s.onlineOnly(PortalSuframa)
		case LinkOfficeMap:
			if s.imagery == nil || !s.imagery.SupportsMap(MapTypes[0]) {
				err = fault.E(fault.Unavailable, fault.MsgMapNotConfigured, errors.New("map link asked without a map provider"))
			}
		case LinkOfficeStreet:
			if s.imagery == nil || !s.imagery.SupportsStreet() {
				err = fault.E(fault.Unavailable, fault.MsgStreetNotConfigured, errors.New("street link asked without a street provider"))
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// officeExtras adds what the office lookup's options ask for: SUFRAMA,
// coordinates, links.
func (s *Service) officeExtras(ctx context.Context, lk *lookup, q OfficeQuery, o *model.Office) error {
	if q.Suframa {
		list, _, err := s.suframa(ctx, lk.bill, q.TaxID, q.Cache)
		if err != nil {
			return err
		}
		o.Suframa = list
	}
	if q.Geocoding {
		c, err := s.geocode(ctx, lk.bill, q.TaxID, q.Cache, o.Address)
		if err != nil {
			return err
		}
		o.Address.Coordinates = c
	}
	if q.Links != nil {
		o.Links = s.links(ctx, q.Links, string(q.TaxID))
	}
	return nil
}

// links are the signed links of the types asked for that the caller may
// open; the others are left out.
func (s *Service) links(ctx context.Context, types []string, taxID string) []model.Link {
	out := make([]model.Link, 0, len(types))
	for _, t := range types {
		kind, path, q := linkTarget(t, taxID)
		if url, ok := s.Link(ctx, kind, path, q); ok {
			out = append(out, model.Link{Type: t, URL: url})
		}
	}
	return out
}

// Link is the link an answer gives to a file route (path?q) that a lookup
// of kind serves: absolute (WithBaseURL), signed for the caller of ctx when
// a signer is configured, valid for LinkLifetime; false when the caller may
// not open it, and an answer then carries no link.
func (s *Service) Link(ctx context.Context, kind Kind, path string, q url.Values) (string, bool) {
	ref := path
	if len(q) > 0 {
		ref += "?" + q.Encode()
	}
	if s.signLink != nil {
		var ok bool
		if ref, ok = s.signLink(ctx, kind.Permission(), path, q, s.now().Add(LinkLifetime)); !ok {
			return "", false
		}
	}
	if !strings.HasPrefix(ref, "https://") && !strings.HasPrefix(ref, "http://") {
		ref = baseURL(ctx) + ref
	}
	return ref, true
}

// geocoded is the overlay's record of a geocoder answer: the address it
// placed (as the geocoder was asked) and where; nil coordinates when the
// geocoder found nothing.
type geocoded struct {
	Address     string
	Coordinates *model.Coordinates
}

// addressKey names an address as the geocoder is asked about it.
func addressKey(a model.Address) string {
	return strings.Join([]string{a.Street, a.Number, a.District, a.City, a.State, a.Zip}, "|")
}

// geocode places an office's address with the geocoder. Answers are kept
// in the overlay with the address they place and reused, whatever their
// age, while the office's address stays the same; a new search costs
// Prices.Online. CACHE never asks the geocoder. An address abroad is not
// searched (no coordinates).
func (s *Service) geocode(ctx context.Context, b *bill, taxID cnpj.CNPJ, cq CacheQuery, a model.Address) (*model.Coordinates, error) {
	if a.Municipality == nil {
		return nil, nil
	}
	key := addressKey(a)
	if cq.Strategy != Online {
		rec, ok, err := db.OverlayRecordOf(ctx, s.store.Q, string(taxID), db.PortalGeocode)
		if err != nil {
			return nil, storeErr(err, "")
		}
		var g geocoded
		if ok && json.Unmarshal(rec.Body, &g) == nil && g.Address == key {
			return g.Coordinates, nil
		}
		if cq.Strategy == Cache {
			return nil, fault.E(fault.NotFound, fault.MsgCacheMissing, nil)
		}
	}
	if err := b.reserve(ctx, s.prices.Online); err != nil {
		return nil, err
	}
	leaveTurn(ctx) // the geocoder is slower than the cores
	c, err := s.geocoder.Geocode(ctx, a)
	if err != nil {
		b.refund(ctx, s.prices.Online)
		var f *fault.Error
		switch {
		case errors.As(err, &f):
			return nil, f
		case errors.Is(err, context.DeadlineExceeded):
			return nil, fault.E(fault.DeadlineExceeded, fault.MsgTimeout, err)
		}
		return nil, fault.E(fault.Unavailable, fault.MsgGeocoderDown, err)
	}
	body, err := json.Marshal(geocoded{Address: key, Coordinates: c})
	if err == nil {
		err = db.SaveOverlay(ctx, s.store.DB, db.OverlayRecord{TaxID: string(taxID), Portal: db.PortalGeocode, Updated: s.now().UTC(), Body: body})
	}
	if err != nil {
		// The answer is good; only its caching failed.
		s.log.Warn("geocode cache write failed", slog.String("taxId", string(taxID)), slog.String("error", err.Error()))
	}
	return c, nil
}
