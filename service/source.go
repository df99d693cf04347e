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
	PortalRegistrations = db.PortalRegistrations // state registrations (the CCC)
	PortalSuframa       = db.PortalSuframa       // SUFRAMA registrations
)

// OfflineMessage is the 503 sentence of a portal that cannot be fetched:
// the Receita's portals (registry, Simples) say rfb, the others name
// themselves.
func OfflineMessage(portal string) string {
	switch portal {
	case PortalRegistrations:
		return fault.MsgOfflineCCC
	case PortalSuframa:
		return fault.MsgOfflineSuframa
	}
	return fault.MsgOffline
}

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
	// CCC fetches the office's record at the CCC, every state (portal
	// PortalRegistrations).
	CCC(ctx context.Context, taxID cnpj.CNPJ) (model.CCC, error)
	// Suframa fetches the office's SUFRAMA registrations: none when it is
	// not registered there.
	Suframa(ctx context.Context, taxID cnpj.CNPJ) ([]model.Suframa, error)
	// Certificate fetches the PDF certificate of portal (PortalRegistrations,
	// with the state of the registration or "" for the office's own;
	// PortalSuframa).
	Certificate(ctx context.Context, portal string, taxID cnpj.CNPJ, state string) ([]byte, error)
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
	return nil, offline(PortalRegistrations)
}

// CCC is offline.
func (Offline) CCC(context.Context, cnpj.CNPJ) (model.CCC, error) {
	return model.CCC{}, offline(PortalRegistrations)
}

// Suframa is offline.
func (Offline) Suframa(context.Context, cnpj.CNPJ) ([]model.Suframa, error) {
	return nil, offline(PortalSuframa)
}

// Certificate is offline.
func (Offline) Certificate(_ context.Context, portal string, _ cnpj.CNPJ, _ string) ([]byte, error) {
	return nil, offline(portal)
}

func offline(portal string) error {
	return fault.E(fault.Unavailable, OfflineMessage(portal), errors.New("no online source is configured"))
}
