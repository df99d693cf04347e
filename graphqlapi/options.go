package graphqlapi

import "github.com/cnpjgraph/cnpjgraph/service"

// officeOptions reads the office lookup's options beyond the spec as REST
// reads them (rest/surface.go): simplesHistory implies simples; links are
// checked with the same sentence; an empty list asks for no link.
func officeOptions(cs *service.Constraints, q *service.OfficeQuery, simplesHistory, suframa, geocoding *bool, links []string) {
	if simplesHistory != nil && *simplesHistory {
		q.Simples, q.SimplesHistory = true, true
	}
	q.Suframa = suframa != nil && *suframa
	q.Geocoding = geocoding != nil && *geocoding
	if links != nil {
		q.Links = cs.ParseLinks("links", links)
		if q.Links == nil {
			q.Links = []string{}
		}
	}
}
