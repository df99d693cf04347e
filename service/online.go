package service

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// The lookups whose data exists only at an online source: an office's
// record at the CCC (state registrations) and at the SUFRAMA, and their
// certificates. The dump carries none of it, so without a source for the
// portal they answer 503 with the portal's offline sentence, whatever the
// strategy; with one, they follow the cache strategies like the registry
// record: the overlay keeps every online answer, CACHE never goes online,
// and each fetch costs Prices.Online.

// MsgSuframaNotFound is the 404 of an office the SUFRAMA does not know.
const MsgSuframaNotFound = "tax id not registered at suframa"

// CCCQuery is a parsed CCC lookup: the registrations of the states asked
// for (BR every state, ORIGIN the office's own).
type CCCQuery struct {
	TaxID  cnpj.CNPJ
	States []string
	Cache  CacheQuery
}

// SuframaQuery is a parsed SUFRAMA lookup.
type SuframaQuery struct {
	TaxID cnpj.CNPJ
	Cache CacheQuery
}

// PortalCertificateQuery asks for the certificate a portal issues: the CCC
// (State: the registration's UF, "" for the office's own) or the SUFRAMA.
type PortalCertificateQuery struct {
	Portal string // PortalRegistrations or PortalSuframa
	TaxID  cnpj.CNPJ
	State  string
}

// onlineOnly is the 503 of a portal no source serves, checked before the
// lookup is admitted: a request that cannot be answered here costs nothing.
func (s *Service) onlineOnly(portal string) error {
	if s.source.Serves(portal) {
		return nil
	}
	return fault.E(fault.Unavailable, OfflineMessage(portal), errors.New("no online source for "+portal))
}

// CCC is the lookup of an office's state registrations at the CCC (GET /ccc).
func (s *Service) CCC(ctx context.Context, q CCCQuery) (model.CCC, error) {
	if err := s.onlineOnly(PortalRegistrations); err != nil {
		return model.CCC{}, err
	}
	return metered(ctx, s, KindCCC, func(b *bill) (model.CCC, error) {
		rec, updated, err := onlineRecord[model.CCC](ctx, s, b, q.TaxID, q.Cache, PortalRegistrations, db.PortalCCCRecord,
			func(ctx context.Context) (any, time.Time, error) {
				r, err := s.source.CCC(ctx, q.TaxID)
				if r.Registrations == nil {
					r.Registrations = []model.Registration{}
				}
				return r, r.Updated, err
			})
		if err != nil {
			return model.CCC{}, err
		}
		rec.Updated, rec.TaxID = updated, string(q.TaxID)
		rec.Registrations = pickStates(rec.Registrations, q.States, rec.OriginState)
		return rec, nil
	})
}

// Suframa is the lookup of an office's SUFRAMA registration (GET /suframa):
// 404 when the SUFRAMA does not know it.
func (s *Service) Suframa(ctx context.Context, q SuframaQuery) (model.Suframa, error) {
	if err := s.onlineOnly(PortalSuframa); err != nil {
		return model.Suframa{}, err
	}
	return metered(ctx, s, KindSuframa, func(b *bill) (model.Suframa, error) {
		list, updated, err := s.suframa(ctx, b, q.TaxID, q.Cache)
		if err != nil {
			return model.Suframa{}, err
		}
		if len(list) == 0 {
			return model.Suframa{}, fault.E(fault.NotFound, MsgSuframaNotFound, nil)
		}
		rec := list[0]
		rec.Updated, rec.TaxID = updated, string(q.TaxID)
		return rec, nil
	})
}

// suframa reads the SUFRAMA portal of a tax id under the strategy: the
// office's registrations, none when it has none (a known "none" is cached
// like any answer).
func (s *Service) suframa(ctx context.Context, b *bill, taxID cnpj.CNPJ, cq CacheQuery) ([]model.Suframa, time.Time, error) {
	list, updated, err := onlineRecord[[]model.Suframa](ctx, s, b, taxID, cq, PortalSuframa, db.PortalSuframa,
		func(ctx context.Context) (any, time.Time, error) {
			l, err := s.source.Suframa(ctx, taxID)
			var at time.Time
			for _, r := range l {
				if r.Updated.After(at) {
					at = r.Updated
				}
			}
			if l == nil {
				l = []model.Suframa{}
			}
			return l, at, err
		})
	if err != nil {
		return nil, time.Time{}, err
	}
	if list == nil {
		list = []model.Suframa{}
	}
	return list, updated, nil
}

// PortalCertificate is the PDF a portal issues for an office, fetched from
// the source each time: a certificate lookup (Prices.Certificate) that also
// pays for its online fetch (Prices.Online). Certificates are not kept: a
// certificate attests the portal's data on the day it is issued.
func (s *Service) PortalCertificate(ctx context.Context, q PortalCertificateQuery) ([]byte, error) {
	if err := s.onlineOnly(q.Portal); err != nil {
		return nil, err
	}
	return metered(ctx, s, KindCertificate, func(b *bill) ([]byte, error) {
		var pdf []byte
		err := s.fetchOnline(ctx, b, q.Portal, func(ctx context.Context) error {
			var err error
			pdf, err = s.source.Certificate(ctx, q.Portal, q.TaxID, q.State)
			return err
		})
		return pdf, err
	})
}

// onlineRecord answers a record of an online-only portal under the cache
// strategy: the overlay's copy (kept under key) when it is fresh enough,
// else the source's through get, which the overlay then keeps. It returns
// the record and its updated: the record's own time when cached, the
// request time when fetched online.
func onlineRecord[T any](ctx context.Context, s *Service, b *bill, taxID cnpj.CNPJ, cq CacheQuery, portal, key string,
	get func(context.Context) (any, time.Time, error)) (T, time.Time, error) {
	var zero, v T
	now, mark := s.now(), s.fetched.mark()
	var updated time.Time
	if cq.Strategy != Online {
		rec, ok, err := db.OverlayRecordOf(ctx, s.store.Q, string(taxID), key)
		if err != nil {
			return zero, time.Time{}, storeErr(err, "")
		}
		if ok {
			if err := json.Unmarshal(rec.Body, &v); err != nil {
				// A record that no longer decodes (the model changed) is
				// absent: the next online answer replaces it.
				s.log.Warn("overlay record unreadable", slog.String("portal", key),
					slog.String("taxId", string(taxID)), slog.String("error", err.Error()))
				v = zero
			} else {
				updated = rec.Updated
			}
		}
	}
	if cq.Strategy == Cache && updated.IsZero() {
		return zero, time.Time{}, fault.E(fault.NotFound, fault.MsgCacheMissing, nil)
	}
	var body []byte
	cached, err := s.decide(ctx, b, portal, cq, now, updated, func(ctx context.Context) error {
		var err error
		body, err = s.fetch(ctx, key, taxID, mark, get)
		return err
	})
	switch {
	case err != nil:
		return zero, time.Time{}, err
	case cached:
		return v, updated, nil
	}
	var fresh T
	if err := json.Unmarshal(body, &fresh); err != nil {
		return zero, time.Time{}, err
	}
	return fresh, now, nil
}
