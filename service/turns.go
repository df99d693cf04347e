package service

import (
	"context"
	"runtime"
	"sync"

	"github.com/cnpjgraph/cnpjgraph/fault"
)

// Lookups take turns, as searches do (searchTurn), but a whole request at
// a time: the doors take a place (LookupTurn) before a lookup request's
// work and give it back after it, so a GraphQL query's fields, resolved
// together and batched by the loaders, share one place. On a small box
// shared with PostgreSQL, 32 lookups at once meant 32 handlers taking
// turns on the cores and for the pool's 8 connections, which go to a
// random waiter; with as many places as connections the others wait in
// order of arrival, and the tail shortens (docs/benchmarks.md, "Lookups
// take turns").
//
// A request that waits on a provider (an online source, a geocoder, a map
// or street provider) gives its place up first, for good (leaveTurn): the
// cores are not what it waits for, and what it does after is little.

// DefaultLookupConcurrency is four per core Go may use, at least 8, as
// serve's default pool (serve gives the pool's size, DB_MAX_OPEN_CONNS).
// Four places on 2 cores left the cores idle while GraphQL queries waited
// for their loaders' batches: 15 % fewer of them.
func DefaultLookupConcurrency() int { return max(8, 4*runtime.GOMAXPROCS(0)) }

type turnKey struct{}

// LookupTurn waits for a place among the lookup requests running at once
// (Options.LookupConcurrency), in order of arrival, within ctx's deadline:
// past it, a 504 with the lookups' sentence. The context returned carries
// the place, for leaveTurn to give it back before a provider's wait; end
// gives it back (once, however often it and leaveTurn are called).
func (s *Service) LookupTurn(ctx context.Context) (_ context.Context, end func(), _ error) {
	if err := takePlace(ctx, s.lookupPlaces); err != nil {
		return ctx, nil, err
	}
	end = sync.OnceFunc(func() { <-s.lookupPlaces })
	return context.WithValue(ctx, turnKey{}, end), end, nil
}

// searchTurn waits for one of the searches' places (SearchSettings.
// Concurrency) and returns its release; a search whose deadline passes
// first fails as a timeout, and is refunded.
func (s *Service) searchTurn(ctx context.Context) (release func(), err error) {
	if err := takePlace(ctx, s.searchPlaces); err != nil {
		return nil, err
	}
	return func() { <-s.searchPlaces }, nil
}

// takePlace waits for one of places, in order of arrival (a channel's
// senders wait in line), within ctx's deadline: past it, a 504 with the
// lookups' sentence.
func takePlace(ctx context.Context, places chan struct{}) error {
	select {
	case places <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fault.E(fault.DeadlineExceeded, fault.MsgTimeout, context.Cause(ctx))
	}
}

// leaveTurn gives back the place of ctx's request, if it holds one.
func leaveTurn(ctx context.Context) {
	if end, ok := ctx.Value(turnKey{}).(func()); ok {
		end()
	}
}
