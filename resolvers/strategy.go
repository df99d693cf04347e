package resolvers

import (
	"context"
	"errors"
	"time"

	"github.com/cnpjgraph/cnpjgraph/fault"
)

// decide applies the cache strategy to one portal whose cached data was
// updated at updated (zero: nothing cached). It reports whether the cached
// data answers; when it does not, fetch has filled the online answer. With
// no upstream every online fetch fails as offline.
func (s *Service) decide(ctx context.Context, q CacheQuery, updated time.Time, fetch func(context.Context) error) (cached bool, err error) {
	age := s.now().Sub(updated)
	have := !updated.IsZero()
	switch q.Strategy {
	case Cache:
		return true, nil
	case CacheIfFresh, CacheIfError:
		if have && age <= days(q.MaxAge) {
			return true, nil
		}
	}
	err = s.online(ctx, fetch)
	if err == nil {
		return false, nil
	}
	// CACHE_IF_ERROR serves stale data no older than maxStale.
	if q.Strategy == CacheIfError && have && age <= days(q.MaxStale) {
		return true, nil
	}
	return false, err
}

// online runs fetch against the upstream, classifying its failure: a
// deadline is a 504, anything else means the source is offline (503).
func (s *Service) online(ctx context.Context, fetch func(context.Context) error) error {
	if s.upstream == nil {
		return fault.E(fault.Unavailable, fault.MsgOffline, errors.New("no upstream configured"))
	}
	err := fetch(ctx)
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
	return fault.E(fault.Unavailable, fault.MsgOffline, err)
}
