package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/cnpjgraph/cnpjgraph/cnpj"
	"github.com/cnpjgraph/cnpjgraph/fault"
	"github.com/cnpjgraph/cnpjgraph/model"
	"github.com/cnpjgraph/cnpjgraph/wire"
)

// The portals only an online source has: the CCC (state registrations,
// with the office's name and origin state) and the SUFRAMA, and their PDF
// certificates, read from the CNPJá routes of the same names.

// CCC fetches the office's record at the CCC, every state (GET
// /ccc?taxId=&states=ALL).
func (c *Client) CCC(ctx context.Context, taxID cnpj.CNPJ) (model.CCC, error) {
	var w wire.CCC
	q := url.Values{"taxId": {string(taxID)}, "states": {"ALL"}}
	if err := c.get(ctx, PortalRegistrations, "/ccc", q, &w); err != nil {
		return model.CCC{}, err
	}
	if w.TaxID != "" && w.TaxID != string(taxID) {
		return model.CCC{}, c.offline(PortalRegistrations, fmt.Errorf("asked for %s, the source answered %q", taxID, w.TaxID))
	}
	rec := w.Model()
	rec.TaxID = string(taxID)
	return rec, nil
}

// Suframa fetches the office's SUFRAMA registration (GET /suframa?taxId=):
// one, or none when the source says the SUFRAMA does not know the office.
func (c *Client) Suframa(ctx context.Context, taxID cnpj.CNPJ) ([]model.Suframa, error) {
	var w wire.Suframa
	err := c.get(ctx, PortalSuframa, "/suframa", url.Values{"taxId": {string(taxID)}}, &w)
	var f *fault.Error
	switch {
	case errors.As(err, &f) && f.Kind == fault.NotFound:
		return []model.Suframa{}, nil
	case err != nil:
		return nil, err
	}
	return []model.Suframa{w.Model(taxID)}, nil
}

// Certificate fetches a portal's PDF certificate: GET /ccc/certificate
// (with state, when given) or /suframa/certificate.
func (c *Client) Certificate(ctx context.Context, portal string, taxID cnpj.CNPJ, state string) ([]byte, error) {
	q := url.Values{"taxId": {string(taxID)}}
	path := "/suframa/certificate"
	if portal == PortalRegistrations {
		path = "/ccc/certificate"
		if state != "" {
			q.Set("state", state)
		}
	}
	var f pdfFile
	if err := c.get(ctx, portal, path, q, &f); err != nil {
		return nil, err
	}
	return f.body, nil
}

// notRegistered reports whether a 404's body says the tax id is unknown,
// rather than that the route is (a wrong base URL: "Cannot GET /x").
func notRegistered(e wire.Error) bool {
	return e.Code == http.StatusNotFound && e.Message != "" && !strings.HasPrefix(e.Message, "Cannot ")
}

// pdfFile is a binary answer: the body of a 200 whose type is a PDF.
type pdfFile struct{ body []byte }

// maxFile bounds a certificate.
const maxFile = 16 << 20

func (f *pdfFile) read(ctx context.Context, res *http.Response) error {
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "application/pdf" {
		return fmt.Errorf("the source answered %q, not a PDF", res.Header.Get("Content-Type"))
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, maxFile+1))
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return fmt.Errorf("read the certificate: %w", err)
	case len(b) > maxFile:
		return fmt.Errorf("the certificate is larger than %d bytes", maxFile)
	}
	f.body = b
	return nil
}
