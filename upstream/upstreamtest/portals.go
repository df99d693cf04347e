// Package upstreamtest is a stand-in for the commercial CNPJá API's
// online-only portals, for tests: it answers GET /ccc, /ccc/certificate,
// /suframa and /suframa/certificate in the CNPJá shapes (@cnpja/sdk 1.8.1:
// CccDto, SuframaDto; PDFs for the certificates) for a few fixture tax ids,
// and hands every other request to the instance behind it (a cnpjgraph over
// the fixture), so an edge in front of it sees one source speaking the
// whole CNPJá wire.
package upstreamtest

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Tax ids the portals know (db/dbtest's fixture).
const (
	CCCTaxID      = "33683111000280" // SERPRO's branch: registered in DF and SP
	SuframaTaxID  = "11222333000181" // the big company's head office: registered at the SUFRAMA
	NoSuframaText = "suframa registration not found"
)

// CCCNumbers are the registrations CCCTaxID has, by state.
var CCCNumbers = map[string]string{"DF": "0734779900141", "SP": "111222333444"}

// SuframaNumber is SuframaTaxID's SUFRAMA registration.
const SuframaNumber = "200400029"

// PDF is the certificate every certificate route answers.
var PDF = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")

// Portals answers the online-only portals and passes the rest to Next.
type Portals struct {
	Next http.Handler
	// Updated is the time the portals say they obtained their data.
	Updated time.Time

	mu    sync.Mutex
	calls map[string]int
	last  map[string]string // the last query string per path
}

// Calls is how many requests a path (e.g. "/ccc") received.
func (p *Portals) Calls(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[path]
}

// LastQuery is the query string of the last request to path.
func (p *Portals) LastQuery(path string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last[path]
}

func (p *Portals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/ccc", "/ccc/certificate", "/suframa", "/suframa/certificate":
	default:
		p.Next.ServeHTTP(w, r)
		return
	}
	p.mu.Lock()
	if p.calls == nil {
		p.calls, p.last = map[string]int{}, map[string]string{}
	}
	p.calls[r.URL.Path]++
	p.last[r.URL.Path] = r.URL.RawQuery
	p.mu.Unlock()
	taxID := r.URL.Query().Get("taxId")
	updated := p.Updated.UTC().Format("2006-01-02T15:04:05.000Z")
	switch {
	case r.URL.Path == "/ccc" && taxID == CCCTaxID:
		jsonAnswer(w, 200, fmt.Sprintf(`{"taxId":%q,"updated":%q,"name":"SERVICO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)",
			"originState":"DF","registrations":[
			{"number":%q,"state":"DF","enabled":true,"statusDate":"2004-05-22","status":{"id":1,"text":"Sem restrição"},"type":{"id":1,"text":"IE Normal"}},
			{"number":%q,"state":"SP","enabled":false,"statusDate":"2019-03-01","status":{"id":2,"text":"Bloqueado como destinatário na UF"},"type":{"id":2,"text":"IE Substituto Tributário"}}]}`,
			taxID, updated, CCCNumbers["DF"], CCCNumbers["SP"]))
	case r.URL.Path == "/ccc":
		jsonAnswer(w, 200, fmt.Sprintf(`{"taxId":%q,"updated":%q,"name":"SEM INSCRICOES","originState":"SP","registrations":[]}`, taxID, updated))
	case r.URL.Path == "/suframa" && taxID == SuframaTaxID:
		jsonAnswer(w, 200, fmt.Sprintf(`{"taxId":%q,"updated":%q,"number":%q,"name":"GRANDE REDE DE LOJAS S.A.",
			"since":"2020-01-01","head":true,"approved":true,"approvalDate":"2021-01-01","status":{"id":1,"text":"Ativa"},
			"nature":{"id":2054,"text":"Sociedade Anônima Fechada"},
			"address":{"municipality":1302603,"street":"Avenida Djalma Batista","number":"1661","district":"Chapada","city":"Manaus",
			"state":"AM","details":"Sala 1","zip":"69050010","country":{"id":76,"name":"Brasil"}},
			"phones":[{"type":"LANDLINE","area":"92","number":"33334444"}],
			"emails":[{"ownership":"CORPORATE","address":"contato@granderede.com.br","domain":"granderede.com.br"}],
			"mainActivity":{"id":4711302,"text":"Comércio varejista de mercadorias em geral","performed":true},
			"sideActivities":[{"id":6311900,"text":"Tratamento de dados","performed":false}],
			"incentives":[{"tribute":"IPI","benefit":"Isenção","purpose":"Consumo Interno, Industrialização e Utilização","basis":"Decreto 7.212 de 2010 (Art. 81)"}]}`,
			taxID, updated, SuframaNumber))
	case r.URL.Path == "/suframa":
		jsonAnswer(w, 404, `{"code":404,"message":"`+NoSuframaText+`"}`)
	case strings.HasSuffix(r.URL.Path, "/certificate") && (taxID == CCCTaxID || taxID == SuframaTaxID):
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(PDF)
	default:
		jsonAnswer(w, 404, `{"code":404,"message":"`+NoSuframaText+`"}`)
	}
}

func jsonAnswer(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}
