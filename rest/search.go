package rest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cnpjgraph/cnpjgraph/service"
	"github.com/cnpjgraph/cnpjgraph/wire"
)

// searches serves GET /office and GET /person: query parameters only,
// answered as {"next", "limit", "count", "records"} (docs/api.md, "Search").
type searches struct {
	svc *service.Service
}

// searchRequest reads a search's parameters: limit, token, and every other
// parameter a filter, its values a list, comma-joined and/or repeated as
// the lookups' lists are (a filter of one value sent twice is then told it
// takes a single value). Whether each is a filter of this search is the
// service layer's to say (unknown → 400).
func searchRequest(r *http.Request, cs *service.Constraints) service.SearchRequest {
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		cs.Add("query string must be correctly URL-encoded")
	}
	req := service.SearchRequest{Filters: map[string][]string{}}
	for name, vs := range values {
		if (name == "limit" || name == "token") && len(vs) > 1 {
			cs.Add(name + " must be given only once")
		}
		switch name {
		case "limit":
			n, err := strconv.Atoi(vs[0])
			if err != nil {
				cs.Add("limit must be an integer from 1 to " + strconv.Itoa(service.MaxSearchLimit))
				continue
			}
			req.Limit = &n
		case "token":
			req.Token = vs[0]
		default:
			var items []string
			for _, v := range vs {
				for item := range strings.SplitSeq(v, ",") {
					if item = strings.TrimSpace(item); item != "" {
						items = append(items, item)
					}
				}
			}
			req.Filters[name] = items
		}
	}
	return req
}

// validSearch reads and validates a search request, answering the 400
// itself before the search is admitted or priced.
func validSearch(w http.ResponseWriter, r *http.Request, person bool) (service.SearchRequest, bool) {
	var cs service.Constraints
	req := searchRequest(r, &cs)
	err := cs.Err()
	if err == nil {
		err = service.ParseSearch(person, req)
	}
	if err != nil {
		writeError(w, r, err)
		return req, false
	}
	return req, true
}

// writePage writes a search page, {"next", "limit", "count", "records"},
// around its records, already encoded (by hand for offices, by
// encoding/json for persons); the header X-Count-Exact says whether count
// is every match or PostgreSQL's estimate (docs/api.md, "Search"). Written
// by hand: encoding/json re-scans a json.RawMessage whole to compact it,
// a tenth of the server's time on a page of ten offices.
func writePage[T any](w http.ResponseWriter, p service.SearchPage[T], records []byte) {
	w.Header().Set("X-Count-Exact", strconv.FormatBool(p.Exact))
	body := make([]byte, 0, len(records)+96)
	body = append(body, `{"next":`...)
	if p.Next != "" {
		body = strconv.AppendQuote(body, p.Next) // hexadecimal: nothing to escape
	} else {
		body = append(body, "null"...)
	}
	body = append(body, `,"limit":`...)
	body = strconv.AppendInt(body, int64(p.Limit), 10)
	body = append(body, `,"count":`...)
	body = strconv.AppendInt(body, p.Count, 10)
	body = append(body, `,"records":`...)
	body = append(body, records...)
	writeBody(w, http.StatusOK, append(body, '}'))
}

// offices serves GET /office.
func (h searches) offices(w http.ResponseWriter, r *http.Request) {
	req, ok := validSearch(w, r, false)
	if !ok {
		return
	}
	p, err := h.svc.SearchOffices(r.Context(), req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	records := []byte{'['}
	for i, o := range p.Records {
		if i > 0 {
			records = append(records, ',')
		}
		if records, err = wire.MarshalOffice(records, o); err != nil {
			writeError(w, r, err)
			return
		}
	}
	writePage(w, p, append(records, ']'))
}

// persons serves GET /person.
func (h searches) persons(w http.ResponseWriter, r *http.Request) {
	req, ok := validSearch(w, r, true)
	if !ok {
		return
	}
	p, err := h.svc.SearchPersons(r.Context(), req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	records := make([]wire.PersonLookup, len(p.Records))
	for i, person := range p.Records {
		records[i] = wire.PersonLookupOf(person)
	}
	body, err := json.Marshal(records)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writePage(w, p, body)
}
