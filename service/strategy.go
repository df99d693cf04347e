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
	"github.com/cnpjgraph/cnpjgraph/loaders"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// decide applies the cache strategy to one portal whose cached data was
// updated at updated (zero: nothing cached), at the request time now. It
// reports whether the cached data answers; when it does not, fetch has
// filled the online answer, paid for on b. Without a source for the portal
// every online fetch fails as offline.
func (s *Service) decide(ctx context.Context, b *bill, portal string, q CacheQuery, now, updated time.Time, fetch func(context.Context) error) (cached bool, err error) {
	age := now.Sub(updated)
	have := !updated.IsZero()
	switch q.Strategy {
	case Cache:
		return true, nil
	case CacheIfFresh, CacheIfError:
		if have && age <= days(q.MaxAge) {
			return true, nil
		}
	}
	err = s.fetchOnline(ctx, b, portal, fetch)
	if err == nil {
		return false, nil
	}
	// CACHE_IF_ERROR serves stale data no older than maxStale when the
	// fetch failed (offline, timeout); a source that answered "not
	// registered" did not fail.
	if q.Strategy == CacheIfError && have && age <= days(q.MaxStale) && failed(err) {
		return true, nil
	}
	return false, err
}

// failed reports whether an online error means the source could not
// answer, rather than that it answered no.
func failed(err error) bool {
	k := fault.Classify(err).Kind
	return k == fault.Unavailable || k == fault.DeadlineExceeded
}

// fetchOnline runs fetch against the source, the online price reserved on
// b first (so a caller who cannot pay is refused before the source is
// asked) and refunded when the fetch fails. It classifies the failure: a
// deadline is a 504, anything else means the source is offline (503).
func (s *Service) fetchOnline(ctx context.Context, b *bill, portal string, fetch func(context.Context) error) error {
	if !s.source.Serves(portal) {
		return fault.E(fault.Unavailable, OfflineMessage(portal), errors.New("no online source for "+portal))
	}
	if err := b.reserve(ctx, s.prices.Online); err != nil {
		return err
	}
	leaveTurn(ctx) // the source is slower than the cores
	err := fetch(ctx)
	if err != nil {
		b.refund(ctx, s.prices.Online)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return fault.E(fault.DeadlineExceeded, fault.MsgTimeout, err)
	}
	var f *fault.Error
	if errors.As(err, &f) {
		return f
	}
	return fault.E(fault.Unavailable, OfflineMessage(portal), err)
}

// fetch gets a portal's data for a tax id from the source and keeps it in
// the overlay. Concurrent requests for the same tax id and portal share one
// upstream call and one overlay write; each gets the encoded data and
// decodes its own copy, so no request can change another's answer. A
// request that read the overlay before a fetch of the same data ended (its
// mark, from fetchLog.mark, is older) takes that fetch's answer too: it
// only missed the shared call by a moment.
func (s *Service) fetch(ctx context.Context, portal string, taxID cnpj.CNPJ, mark uint64, get func(context.Context) (any, time.Time, error)) ([]byte, error) {
	key := portal + "/" + string(taxID)
	ch := s.flights.DoChan(key, func() (any, error) {
		if body, ok := s.fetched.since(key, mark); ok {
			return body, nil
		}
		// The first caller going away must not fail the others waiting on
		// the same call; its deadline still bounds the call.
		fctx := context.WithoutCancel(ctx)
		if dl, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			fctx, cancel = context.WithDeadline(fctx, dl)
			defer cancel()
		}
		v, at, err := get(fctx)
		if err != nil {
			return nil, err
		}
		body, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		// The overlay keeps when the source obtained the data (another
		// cnpjgraph may answer from its own cache), never a future time.
		if now := s.now(); at.IsZero() || at.After(now) {
			at = now
		}
		rec := db.OverlayRecord{TaxID: string(taxID), Portal: portal, Updated: at.UTC(), Body: body}
		if err := db.SaveOverlay(fctx, s.store.DB, rec); err != nil {
			// The answer is good; only its caching failed.
			s.log.Warn("overlay write failed", slog.String("portal", portal), slog.String("taxId", string(taxID)),
				slog.String("error", err.Error()))
		}
		s.fetched.add(key, body)
		return body, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.([]byte), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// lookup is one lookup's view of a tax id: the snapshot's and the overlay's
// records, read concurrently and once, the request time, and the bill that
// pays for what goes online.
type lookup struct {
	s       *Service
	bill    *bill
	taxID   cnpj.CNPJ
	cq      CacheQuery
	now     time.Time
	mark    uint64    // the fetch log's mark before any read (see fetch)
	codes   *db.Codes // nil: nothing imported (an edge instance)
	overlay map[string]db.OverlayRecord
	office  func() (model.Office, error) // the snapshot's office; nil when not read
	members func() ([]model.Member, error)
	history func() (db.SimplesHistory, error)
}

// reads is what a lookup reads of the snapshot beside the office and its
// company: the members (the registry portal), the company's Simples row
// (the Simples portal), its closed Simples periods.
type reads struct{ members, simples, history bool }

// begin starts the reads a lookup needs: the snapshot's office (with what r
// asks for) through the loaders, and meanwhile, when the source serves some
// portal, the overlay rows of every portal in one query. ONLINE reads
// nothing: every portal goes online.
func (s *Service) begin(ctx context.Context, b *bill, taxID cnpj.CNPJ, cq CacheQuery, r reads) (*lookup, error) {
	lk := &lookup{s: s, bill: b, taxID: taxID, cq: cq, now: s.now(), mark: s.fetched.mark()}
	var err error
	if lk.codes, err = s.codes(ctx); err != nil {
		return nil, err
	}
	if cq.Strategy == Online {
		return lk, nil
	}
	if lk.codes != nil && r.members && (!s.batches(ctx) || alone(ctx)) {
		// Nothing to batch with: the office, its company, members and
		// overlay records in one statement.
		// A GraphQL query (one that batches) may page the members'
		// memberships next: the persons with no other come with the lookup.
		found, err := s.store.OfficeLookup(ctx, string(taxID),
			db.OfficeLookupOptions{Overlay: s.overlay, Simples: r.simples, Sole: s.batches(ctx)})
		if err != nil {
			return nil, storeErr(err, "")
		}
		if len(found.Sole) > 0 {
			loaders.NoteSole(ctx, found.Sole)
		}
		if found.Company != nil && s.batches(ctx) {
			// Its members' company (Member.company) is this one.
			s.loaders(ctx).Companies.Prime(ctx, found.Company.Root, *found.Company)
		}
		lk.office = func() (model.Office, error) {
			if found.Office == nil {
				return model.Office{}, &db.NotFoundError{What: "office", Key: string(taxID)}
			}
			return *found.Office, nil
		}
		lk.members = func() ([]model.Member, error) { return found.Members, nil }
		if r.history {
			lk.history = s.loaders(ctx).SimplesHistory.Load(ctx, string(taxID.Root()))
		}
		lk.overlay = found.Overlay
		return lk, nil
	}
	if lk.codes != nil {
		// The loaders' offices come with their Simples whatever r says:
		// the batch is shared.
		l := s.loaders(ctx)
		root := string(taxID.Root())
		lk.office = l.Offices.Load(ctx, string(taxID))
		if r.members {
			lk.members = l.Members.Load(ctx, root)
		}
		if r.history {
			lk.history = l.SimplesHistory.Load(ctx, root)
		}
	}
	if s.overlay {
		if lk.overlay, err = db.Overlay(ctx, s.store.Q, string(taxID)); err != nil {
			return nil, storeErr(err, "")
		}
	}
	return lk, nil
}

// fromOverlay decodes the overlay record of a portal into v when the
// source serves the portal and the record is newer than the snapshot. A
// record that no longer decodes (the model changed) counts as absent: the
// next online answer replaces it.
func (lk *lookup) fromOverlay(portal string, v any, evenIfOlder bool) (time.Time, bool) {
	rec, ok := lk.overlay[portal]
	if !ok || !lk.s.source.Serves(portal) {
		return time.Time{}, false
	}
	if !evenIfOlder && lk.codes != nil && !rec.Updated.After(lk.codes.Updated()) {
		return time.Time{}, false
	}
	if err := json.Unmarshal(rec.Body, v); err != nil {
		lk.s.log.Warn("overlay record unreadable", slog.String("portal", portal),
			slog.String("taxId", string(lk.taxID)), slog.String("error", err.Error()))
		return time.Time{}, false
	}
	return rec.Updated, true
}

// snapshotOffice is the snapshot's office with its own copy of the company
// (the loaders' cached value is shared) and, when read, its members.
func (lk *lookup) snapshotOffice() (model.Office, error) {
	o, err := lk.office()
	if err != nil {
		return model.Office{}, err
	}
	company := *o.Company
	if lk.members != nil {
		m, err := lk.members()
		if err != nil {
			return model.Office{}, storeErr(err, "")
		}
		company.Members = m
	}
	o.Company = &company
	return o, nil
}

// cached picks a portal's cached record: the overlay's when it is newer
// than the snapshot, else the snapshot's (read through fromSnapshot), else
// an older overlay record of a tax id the snapshot lacks. Without a source
// for the portal the snapshot is authoritative: its time decides before the
// lookup, and a tax id it lacks is not registered.
func (lk *lookup) cached(portal string, v any, fromSnapshot func() error) (updated time.Time, missing error, err error) {
	if lk.cq.Strategy == Online {
		return time.Time{}, nil, nil
	}
	served := lk.s.source.Serves(portal)
	if !served && lk.codes == nil {
		return time.Time{}, nil, fault.E(fault.Unavailable, fault.MsgNoSnapshot, db.ErrNoSnapshot)
	}
	if t, ok := lk.fromOverlay(portal, v, false); ok {
		return t, nil, nil
	}
	if lk.codes == nil {
		return time.Time{}, nil, nil
	}
	err = fromSnapshot()
	var nf *db.NotFoundError
	switch {
	case err == nil:
		return lk.codes.Updated(), nil, nil
	case !errors.As(err, &nf):
		return time.Time{}, nil, storeErr(err, "")
	case !served:
		return lk.codes.Updated(), fault.E(fault.NotFound, fault.MsgTaxIDNotFound, err), nil
	}
	if t, ok := lk.fromOverlay(portal, v, true); ok {
		return t, nil, nil
	}
	return time.Time{}, nil, nil
}

// resolve decides one portal: the cached record (updated, or missing when
// the authoritative snapshot lacks the tax id) answers, or fetch goes
// online. It reports whether the answer came online; body is then the
// fetched data.
func (lk *lookup) resolve(ctx context.Context, portal string, updated time.Time, missing error,
	get func(context.Context) (any, time.Time, error)) (online bool, body []byte, err error) {
	if lk.cq.Strategy == Cache && updated.IsZero() {
		return false, nil, fault.E(fault.NotFound, fault.MsgCacheMissing, nil)
	}
	cached, err := lk.s.decide(ctx, lk.bill, portal, lk.cq, lk.now, updated, func(ctx context.Context) error {
		var err error
		body, err = lk.s.fetch(ctx, portal, lk.taxID, lk.mark, get)
		return err
	})
	switch {
	case err != nil:
		return false, nil, err
	case cached && missing != nil:
		return false, nil, missing
	case cached:
		return false, nil, nil
	}
	return true, body, nil
}

// registry answers the registry portal: office, company and members.
func (lk *lookup) registry(ctx context.Context) (model.Office, error) {
	var o model.Office
	updated, missing, err := lk.cached(PortalRegistry, &o, func() error {
		var err error
		o, err = lk.snapshotOffice()
		return err
	})
	if err != nil {
		return model.Office{}, err
	}
	online, body, err := lk.resolve(ctx, PortalRegistry, updated, missing, func(ctx context.Context) (any, time.Time, error) {
		o, err := lk.s.source.Registry(ctx, lk.taxID)
		if err != nil {
			return nil, time.Time{}, err
		}
		if o.Company == nil {
			o.Company = &model.Company{Root: string(lk.taxID.Root())}
		}
		// Special ids are ours: a stable small integer per distinct text.
		if o.Special != nil && o.Special.Text != "" {
			id, err := lk.s.store.Catalog.SpecialID(ctx, o.Special.Text)
			if err != nil {
				return nil, time.Time{}, err
			}
			o.Special.ID = id
		}
		return o, o.Updated, nil
	})
	if err != nil {
		return model.Office{}, err
	}
	if online {
		o = model.Office{}
		if err := json.Unmarshal(body, &o); err != nil {
			return model.Office{}, err
		}
		updated = lk.now
	}
	if o.Company == nil {
		o.Company = &model.Company{Root: string(lk.taxID.Root())}
	}
	// Cached answers carry the record's own time, online ones the request's.
	o.Updated, o.Company.Updated = updated, updated
	return o, nil
}

// simples answers the Simples portal, with history when asked for.
func (lk *lookup) simples(ctx context.Context, history bool) (model.SimplesRecord, error) {
	var rec model.SimplesRecord
	updated, missing, err := lk.cached(PortalSimples, &rec, func() error {
		o, err := lk.office()
		if err != nil {
			return err
		}
		rec = model.SimplesRecord{Simples: *o.Company.Simples, Simei: *o.Company.Simei}
		if lk.history != nil {
			h, err := lk.history()
			if err != nil {
				return storeErr(err, "")
			}
			rec.Simples.History = append([]model.SimplesPeriod{}, h.Simples...)
			rec.Simei.History = append([]model.SimplesPeriod{}, h.Simei...)
		}
		return nil
	})
	if err != nil {
		return model.SimplesRecord{}, err
	}
	online, body, err := lk.resolve(ctx, PortalSimples, updated, missing, func(ctx context.Context) (any, time.Time, error) {
		r, err := lk.s.source.Simples(ctx, lk.taxID)
		return r, r.Updated, err
	})
	if err != nil {
		return model.SimplesRecord{}, err
	}
	if online {
		rec = model.SimplesRecord{}
		if err := json.Unmarshal(body, &rec); err != nil {
			return model.SimplesRecord{}, err
		}
		updated = lk.now
	}
	rec.Updated, rec.TaxID, rec.Root = updated, string(lk.taxID), string(lk.taxID.Root())
	if !history {
		rec.Simples.History, rec.Simei.History = nil, nil
	} else {
		for _, h := range []*[]model.SimplesPeriod{&rec.Simples.History, &rec.Simei.History} {
			if *h == nil {
				*h = []model.SimplesPeriod{}
			}
		}
	}
	return rec, nil
}

// registrations answers the state-registration portal. The overlay keeps
// every state (the fetch asks for BR); the answer lists the states asked
// for, ORIGIN being the office's own. The dump carries no registrations:
// without a source for them the snapshot, authoritative, knows none, which
// is what CACHE and CACHE_IF_ERROR answer; CACHE_IF_FRESH and ONLINE insist
// on a fetch and are offline.
func (lk *lookup) registrations(ctx context.Context, states []string, o model.Office) ([]model.Registration, error) {
	if !lk.s.source.Serves(PortalRegistrations) && (lk.cq.Strategy == Cache || lk.cq.Strategy == CacheIfError) {
		return []model.Registration{}, nil
	}
	var all []model.Registration
	updated, _ := lk.fromOverlay(PortalRegistrations, &all, true)
	if lk.cq.Strategy == Online {
		updated = time.Time{}
	}
	online, body, err := lk.resolve(ctx, PortalRegistrations, updated, nil, func(ctx context.Context) (any, time.Time, error) {
		regs, err := lk.s.source.Registrations(ctx, lk.taxID, []string{"BR"})
		if regs == nil {
			regs = []model.Registration{}
		}
		return regs, time.Time{}, err
	})
	if err != nil {
		return nil, err
	}
	if online {
		all = nil
		if err := json.Unmarshal(body, &all); err != nil {
			return nil, err
		}
	}
	return pickStates(all, states, o.Address.State), nil
}

// pickStates keeps the registrations of the states asked for: BR is all,
// ORIGIN the office's state.
func pickStates(all []model.Registration, states []string, origin string) []model.Registration {
	out := make([]model.Registration, 0, len(all))
	want := make(map[string]bool, len(states))
	for _, st := range states {
		if st == "BR" {
			return append(out, all...)
		}
		if st == "ORIGIN" {
			st = origin
		}
		want[st] = true
	}
	for _, r := range all {
		if want[r.State] {
			out = append(out, r)
		}
	}
	return out
}

type aloneKey struct{}

// Alone marks a lookup that nothing batches with, though the request's
// loaders batch (GraphQL's single office field): it reads its office,
// company, members and overlay records in one statement of its own.
func Alone(ctx context.Context) context.Context { return context.WithValue(ctx, aloneKey{}, true) }

func alone(ctx context.Context) bool { return ctx.Value(aloneKey{}) != nil }
