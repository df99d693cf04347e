package rest_test

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

const (
	ok      = dbtest.SerproBranch
	invalid = "taxId must be a valid CNPJ"
	ufs     = "registrations must contain only: BR, AC, AL, AM, AP, BA, CE, DF, ES, GO, MA, MG, MS, MT, PA, PB, PE, PI, PR, RJ, RN, RO, RR, RS, SC, SP, SE, TO"
	tooOld  = "maxAge must not be greater than 3650"
	notInt  = "maxAge must be an integer"
	stales  = "maxStale must not be greater than 3650"
	strat   = "strategy must be one of: CACHE, CACHE_IF_FRESH, CACHE_IF_ERROR, ONLINE"
	online  = "maxAge must not be sent with strategy ONLINE"
	compID  = "id must be a company id: 1 to 8 digits, or 8 characters of digits and uppercase letters"
	persID  = "id must be a person id of 36 characters"
	boolean = "must be a boolean: true, false, 1 or 0"
)

// TestMalformedRequests: each malformed request gets a 400 naming exactly
// the violated rules, never a 500.
func TestMalformedRequests(t *testing.T) {
	s := newServer(t)
	huge := strings.Repeat("9", 100000)
	cases := []struct {
		target string
		want   []string
	}{
		// Tax ids in the path.
		{"/office/33.683.111-0002-80", []string{invalid}},
		{"/office/33683111%2F000280", []string{invalid}},
		{"/office/33683111000281", []string{invalid}},
		{"/office/33683111000290", []string{invalid}},
		{"/office/3368311100028", []string{invalid}},
		{"/office/336831110002800", []string{invalid}},
		{"/office/1", []string{invalid}},
		{"/office/ABCDEFGHIJKLMN", []string{invalid}},
		{"/office/12abc34501de35", []string{invalid}},
		{"/office/12ABC34501DEAB", []string{invalid}},
		{"/office/12ABC34501DE36", []string{invalid}},
		{"/office/%2033683111000280", []string{invalid}},
		{"/office/33683111000280%20", []string{invalid}},
		{"/office/33683111000280%00", []string{invalid}},
		{"/office/%00", []string{invalid}},
		{"/office/%zz", []string{invalid}},
		{"/office/%EF%BC%93%EF%BC%93683111000280", []string{invalid}}, // fullwidth digits
		{"/office/%D9%A33683111000280", []string{invalid}},            // Arabic-Indic digit
		{"/office/" + huge, []string{invalid}},
		{"/office/-3683111000280", []string{invalid}},
		// Office query parameters.
		{"/office/" + ok + "?simples=yes", []string{"simples " + boolean}},
		{"/office/" + ok + "?simples=", []string{"simples " + boolean}},
		{"/office/" + ok + "?simples=TRUE", []string{"simples " + boolean}},
		{"/office/" + ok + "?simples=true&simples=false", []string{"simples must be given only once"}},
		{"/office/" + ok + "?registrations=XX", []string{ufs}},
		{"/office/" + ok + "?registrations=pr", []string{ufs}},
		{"/office/" + ok + "?registrations=PR,XX", []string{ufs}},
		{"/office/" + ok + "?registrations=PR&registrations=ZZ", []string{ufs}},
		{"/office/" + ok + "?registrations=PR;RS", []string{"query string must be correctly URL-encoded"}},
		{"/office/" + ok + "?registrations=" + huge, []string{ufs}},
		{"/office/" + ok + "?cccStates=QQ", []string{strings.Replace(ufs, "registrations", "cccStates", 1)}},
		{"/office/" + ok + "?embeds=MAPS", []string{"embeds must contain only: SIMPLES, CCC"}},
		{"/office/" + ok + "?maxAge=abc", []string{notInt}},
		{"/office/" + ok + "?maxAge=", []string{notInt}},
		{"/office/" + ok + "?maxAge=1.5", []string{notInt}},
		{"/office/" + ok + "?maxAge=-1", []string{"maxAge must not be less than 1"}},
		{"/office/" + ok + "?maxAge=0", []string{"maxAge must not be less than 1"}},
		{"/office/" + ok + "?maxAge=3651", []string{tooOld}},
		{"/office/" + ok + "?maxAge=99999999999999999999999", []string{tooOld}},
		{"/office/" + ok + "?maxAge=%EF%BC%91", []string{notInt}},
		{"/office/" + ok + "?maxAge=1e3", []string{notInt}},
		{"/office/" + ok + "?maxAge=1&maxAge=2", []string{"maxAge must be given only once"}},
		{"/office/" + ok + "?maxStale=0", []string{"maxStale must not be less than 1"}},
		{"/office/" + ok + "?maxStale=4000", []string{stales}},
		{"/office/" + ok + "?maxStale=x", []string{"maxStale must be an integer"}},
		{"/office/" + ok + "?strategy=online", []string{strat}},
		{"/office/" + ok + "?strategy=", []string{}},
		{"/office/" + ok + "?strategy=FAST", []string{strat}},
		{"/office/" + ok + "?strategy=ONLINE&maxAge=1", []string{online}},
		{"/office/" + ok + "?strategy=ONLINE&strategy=CACHE", []string{"strategy must be given only once"}},
		{"/office/" + ok + "?a=%zz", []string{"query string must be correctly URL-encoded"}},
		// Several violations at once are all named.
		{"/office/123?simples=2&registrations=XX&maxAge=0&maxStale=9999&strategy=NOPE",
			[]string{invalid, "simples " + boolean, ufs, strat, "maxAge must not be less than 1", stales}},
		{"/office/123?strategy=ONLINE&maxAge=4000", []string{invalid, tooOld, online}},
		// Registry and Simples lookups.
		{"/rfb", []string{"taxId is required"}},
		{"/rfb?taxId=", []string{invalid}},
		{"/rfb?taxId=33683111000281", []string{invalid}},
		{"/rfb?taxId=33.683.111/0002-80", []string{invalid}},
		{"/rfb?taxId=" + ok + "&taxId=" + ok, []string{"taxId must be given only once"}},
		{"/rfb?taxId=" + ok + "&strategy=ONLINE&maxAge=5", []string{online}},
		{"/rfb?taxId=%00", []string{invalid}},
		{"/rfb?taxid=" + ok, []string{"taxId is required"}},
		{"/simples", []string{"taxId is required"}},
		{"/simples?taxId=" + ok + "&history=maybe", []string{"history " + boolean}},
		{"/simples?taxId=abc&history=2", []string{invalid, "history " + boolean}},
		{"/simples?taxId=" + ok + "&maxStale=-5", []string{"maxStale must not be less than 1"}},
		{"/simples?taxId=" + huge, []string{invalid}},
		// Company and person ids.
		{"/company/123456789", []string{compID}},
		{"/company/ABC", []string{compID}},
		{"/company/abcdefgh", []string{compID}},
		{"/company/33.683.111", []string{compID}},
		{"/company/-1", []string{compID}},
		{"/company/%00", []string{compID}},
		{"/company/33683111000280", []string{compID}},
		{"/company/%zz", []string{compID}},
		{"/person/abc", []string{persID}},
		{"/person/" + strings.Repeat("a", 36), []string{persID}},
		{"/person/" + strings.Replace(dbtest.OKBRMember.ID(), "-", "_", 1), []string{persID}},
		{"/person/" + dbtest.OKBRMember.ID() + "0", []string{persID}},
		{"/person/" + strings.Repeat("g", 8) + dbtest.OKBRMember.ID()[8:], []string{persID}},
	}
	if len(cases) < 60 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		name := c.target
		if len(name) > 80 {
			name = name[:80] + "..."
		}
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.URL.RawQuery = ""
			if i := strings.IndexByte(c.target, '?'); i >= 0 {
				req.URL.RawQuery = c.target[i+1:]
				setPath(req, c.target[:i])
			} else {
				setPath(req, c.target)
			}
			r := s.do(t, req)
			if r.header.Get("Content-Type") != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", r.header.Get("Content-Type"))
			}
			if len(c.want) == 0 {
				if r.status != 200 {
					t.Errorf("status %d: %s", r.status, r.body)
				}
				return
			}
			if r.status != 400 {
				t.Fatalf("status %d, want 400: %s", r.status, r.body)
			}
			body := r.object(t)
			if body["code"] != jsonNumber(400) || body["message"] != "request validation failed" {
				t.Errorf("body %s", r.body)
			}
			var got []string
			for _, c := range body["constraints"].([]any) {
				got = append(got, c.(string))
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("constraints\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// setPath sets an escaped path on a request as a server would parse it.
func setPath(req *http.Request, escaped string) {
	req.URL.RawPath = ""
	if p, err := unescapePath(escaped); err == nil {
		req.URL.Path = p
		if req.URL.EscapedPath() != escaped {
			req.URL.RawPath = escaped
		}
	} else {
		// An invalid escape: net/http would reject it with a 400 of its own
		// before the router; keep it raw so the router's decoding is tested.
		req.URL.Path = escaped
		req.URL.RawPath = escaped
	}
}
