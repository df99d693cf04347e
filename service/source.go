package service

import (
	"context"
	"errors"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/db"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/model"
)

// Portals a source fetches online, by the names the overlay and
// UPSTREAM_PORTALS use.
const (
	PortalRegistry      = db.PortalRegistry      // the federal registry record: office, company, members
	PortalSimples       = db.PortalSimples       // Simples Nacional and SIMEI, with history
	PortalRegistrations = db.PortalRegistrations // state registrations
)

// Source is an online source of records (a CNPJá-compatible API), one
// method per portal.
type Source interface {
	// Serves reports whether the source fetches portal online. For the
	// portals it does not serve, the imported snapshot is authoritative.
	Serves(portal string) bool
	// Registry fetches the federal registry record of an office, with its
	// company and members.
	Registry(ctx context.Context, taxID cnpj.CNPJ) (model.Office, error)
	// Simples fetches the Simples Nacional and SIMEI state, with history.
	Simples(ctx context.Context, taxID cnpj.CNPJ) (model.SimplesRecord, error)
	// Registrations fetches state registrations for the given UFs (BR: all).
	Registrations(ctx context.Context, taxID cnpj.CNPJ, states []string) ([]model.Registration, error)
}

// Offline is the source of a service configured without one: it serves no
// portal and refuses every fetch as offline, the contract's 503.
type Offline struct{}

var errOffline = fault.E(fault.Unavailable, fault.MsgOffline, errors.New("no online source is configured"))

// Serves serves no portal.
func (Offline) Serves(string) bool { return false }

// Registry is offline.
func (Offline) Registry(context.Context, cnpj.CNPJ) (model.Office, error) {
	return model.Office{}, errOffline
}

// Simples is offline.
func (Offline) Simples(context.Context, cnpj.CNPJ) (model.SimplesRecord, error) {
	return model.SimplesRecord{}, errOffline
}

// Registrations is offline.
func (Offline) Registrations(context.Context, cnpj.CNPJ, []string) ([]model.Registration, error) {
	return nil, errOffline
}
