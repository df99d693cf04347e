package securitytest_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/cnpjgraph/cnpjgraph/auth"
	"github.com/cnpjgraph/cnpjgraph/db/dbtest"
)

var update = flag.Bool("update", false, "rewrite testdata/credential-matrix.md from the expectations")

const matrixFile = "testdata/credential-matrix.md"

// routeKind is how a route answers a refusal.
type routeKind int

const (
	restRoute    routeKind = iota // a REST lookup: the contract's JSON error
	fileRoute                     // a REST file route: the only routes a signed URL opens
	graphqlRoute                  // a GraphQL request: refused at the door, or its root field refused whole
	nestedField                   // a GraphQL field below a lookup: refused alone, the rest of the answer kept
)

// route is one way into the data.
type route struct {
	name       string
	kind       routeKind
	permission string // what the lookup it reaches needs (the door's for a query of no lookup)
	method     string
	path       string
	query      url.Values
	graphql    string // POST /graphql: the query
	at         string // GraphQL: the path of the refused field's error
}

func routes() []route {
	office, person := dbtest.SerproBranch, dbtest.SerproMembers[0].Person.ID()
	q := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	rest := func(name, perm, path string, query url.Values) route {
		return route{name: "GET " + name, kind: restRoute, permission: perm, method: http.MethodGet, path: path, query: query}
	}
	file := func(name, perm, path string, query url.Values) route {
		r := rest(name, perm, path, query)
		r.kind = fileRoute
		return r
	}
	gql := func(field, perm, query string) route {
		return route{name: "POST /graphql " + field, kind: graphqlRoute, permission: perm, method: http.MethodPost, path: "/graphql", graphql: query, at: field}
	}
	nested := func(field, perm, query, at string) route {
		r := gql(field, perm, query)
		r.kind, r.at = nestedField, at
		return r
	}
	getGraphQL := route{name: "GET /graphql office", kind: graphqlRoute, permission: auth.ReadOffice, method: http.MethodGet, path: "/graphql",
		query: q("query", `{ office(taxId: "`+office+`") { taxId } }`), at: "office"}
	return []route{
		rest("/office/{taxId}", auth.ReadOffice, "/office/"+office, nil),
		rest("/company/{id}", auth.ReadCompany, "/company/"+dbtest.SerproRoot, nil),
		rest("/person/{id}", auth.ReadPerson, "/person/"+person, nil),
		rest("/rfb", auth.ReadRFB, "/rfb", q("taxId", office)),
		rest("/simples", auth.ReadSimples, "/simples", q("taxId", office)),
		rest("/companies/{taxId}", auth.ReadOffice, "/companies/"+office, nil),
		rest("/list", auth.ReadList, "/list", nil),
		file("/rfb/certificate", auth.ReadCertificate, "/rfb/certificate", q("taxId", office, "pages", "REGISTRATION")),
		file("/simples/certificate", auth.ReadCertificate, "/simples/certificate", q("taxId", office)),
		file("/office/{taxId}/map", auth.ReadMap, "/office/"+office+"/map", q("width", "80", "height", "80")),
		file("/office/{taxId}/street", auth.ReadStreet, "/office/"+office+"/street", q("width", "80", "height", "80")),
		gql("(no lookup)", auth.ReadGraphQL, `{ __typename }`),
		gql("office", auth.ReadOffice, `{ office(taxId: "`+office+`") { taxId } }`),
		withPath(gql("offices", auth.ReadOffice, `{ offices(taxIds: ["`+office+`"]) { taxId } }`), "offices.0"),
		gql("company", auth.ReadCompany, `{ company(id: "`+dbtest.SerproRoot+`") { name } }`),
		gql("person", auth.ReadPerson, `{ person(id: "`+person+`") { name } }`),
		gql("rfb", auth.ReadRFB, `{ rfb(taxId: "`+office+`") { taxId } }`),
		gql("simples", auth.ReadSimples, `{ simples(taxId: "`+office+`") { taxId } }`),
		getGraphQL,
		nested("office.company.offices", auth.ReadCompany,
			`{ office(taxId: "`+office+`") { company { offices(first: 1) { totalCount } } } }`, "office.company.offices"),
		nested("office.company.members.person.membership", auth.ReadPerson,
			`{ office(taxId: "`+office+`") { company { members { person { membership(first: 1) { totalCount } } } } } }`,
			"office.company.members.0.person.membership"),
		nested("person.membership.company.members", auth.ReadCompany,
			`{ person(id: "`+person+`") { membership(first: 1) { nodes { company { members { role { id } } } } } } }`,
			"person.membership.nodes.0.company.members"),
	}
}

// The expected answers, written as the table shows them: HTTP status,
// then the error: its code (REST: the body's code; GraphQL: extensions
// code/status), message, and the contract's extra field.
const (
	answered  = "200"
	invalid   = `401 401 "invalid authorization"`
	suspended = `403 403 "account has been suspended" reason=payment overdue`
)

// refused is REST's refusal for lacking permission (also the auth door's
// on /graphql).
func refused(permission string) string {
	return `403 403 "not enough privileges" permission=` + permission
}

// lacking is what a credential without the route's permission gets.
func lacking(r route) string {
	switch {
	case r.kind == restRoute, r.kind == fileRoute, r.permission == auth.ReadGraphQL:
		return refused(r.permission)
	case r.kind == nestedField:
		// The refused edge is null with its error; what the root lookup
		// may show still answers, so the response is a 200.
		return `200 FORBIDDEN/403 "not enough privileges" permission=` + r.permission + " at " + r.at
	default:
		// A root field refused whole: nothing answered is REST's 403.
		return `403 FORBIDDEN/403 "not enough privileges" permission=` + r.permission + " at " + r.at
	}
}

// signedOpens is what a valid signed URL gets: a file route's answer; any
// other route's refusal, since a signed URL opens nothing else (GraphQL:
// at the door).
func signedOpens(r route) string {
	switch r.kind {
	case fileRoute:
		return answered
	case restRoute:
		return refused(r.permission)
	}
	return refused(auth.ReadGraphQL)
}

func withPath(r route, at string) route {
	r.at = at
	return r
}

func always(s string) func(route) string { return func(route) string { return s } }

// attempt is a request's credential: in the header, or in the URL.
type attempt struct {
	header string
	target func(r route) string // nil: the route's plain URL
}

// scenario is a credential in one state.
type scenario struct {
	kind, state string
	na          string // why it does not apply to this kind of credential
	setup       func(w *world) func(r route) []attempt
	want        func(r route) string
}

func plainURL(r route) string {
	if len(r.query) == 0 {
		return r.path
	}
	return r.path + "?" + r.query.Encode()
}

func scenarios() []scenario {
	const key, token, link = "API key", "JWT", "signed URL"
	header := func(h string) []attempt { return []attempt{{header: h}} }
	signed := func(w *world, keyID int64, expires time.Time) []attempt {
		return []attempt{{target: func(r route) string { return w.auth.SignURL(r.path, r.query, keyID, expires) }}}
	}
	later := now.Add(90 * 24 * time.Hour)
	suspend := func(w *world, a auth.Account) {
		if err := auth.Suspend(context.Background(), w.db, a.ID, "payment overdue"); err != nil {
			w.t.Fatal(err)
		}
	}
	revoke := func(w *world, k auth.Key) {
		if err := auth.RevokeKey(context.Background(), w.db, k.ID, now); err != nil {
			w.t.Fatal(err)
		}
	}
	jwtOf := func(w *world, a auth.Account, perms []string, ttl time.Duration) string {
		tok, err := w.auth.IssueJWT(a.ID, perms, ttl)
		if err != nil {
			w.t.Fatal(err)
		}
		return tok
	}
	// keyLacking gives each route's scenario a key without its permission.
	keyLacking := func(w *world) func(permission string) auth.Key {
		a := w.account()
		keys := map[string]auth.Key{}
		return func(p string) auth.Key {
			if _, ok := keys[p]; !ok {
				keys[p], _ = w.key(a, allBut(p))
			}
			return keys[p]
		}
	}
	return []scenario{
		{kind: key, state: "valid", want: always(answered), setup: func(w *world) func(route) []attempt {
			_, secret := w.key(w.account(), nil)
			return func(route) []attempt { return header(secret) }
		}},
		{kind: key, state: "expired", na: "API keys do not expire: they are valid until revoked"},
		{kind: key, state: "tampered", want: always(invalid), setup: func(w *world) func(route) []attempt {
			_, secret := w.key(w.account(), nil)
			last := secret[len(secret)-1]
			return func(route) []attempt { return header(secret[:len(secret)-1] + string(rune('A'+(last+1)%26))) }
		}},
		{kind: key, state: "revoked key", want: always(invalid), setup: func(w *world) func(route) []attempt {
			k, secret := w.key(w.account(), nil)
			revoke(w, k)
			return func(route) []attempt { return header(secret) }
		}},
		{kind: key, state: "suspended account", want: always(suspended), setup: func(w *world) func(route) []attempt {
			a := w.account()
			_, secret := w.key(a, nil)
			suspend(w, a)
			return func(route) []attempt { return header(secret) }
		}},
		{kind: key, state: "missing permission", want: lacking, setup: func(w *world) func(route) []attempt {
			a := w.account()
			secrets := map[string]string{}
			return func(r route) []attempt {
				if _, ok := secrets[r.permission]; !ok {
					_, secrets[r.permission] = w.key(a, allBut(r.permission))
				}
				return header(secrets[r.permission])
			}
		}},
		{kind: key, state: "wrong algorithm", na: "an API key is an opaque random string, looked up by its hash: no algorithm to choose"},
		{kind: key, state: "first link format", na: "only signed URLs had a first format"},

		{kind: token, state: "valid", want: always(answered), setup: func(w *world) func(route) []attempt {
			tok := jwtOf(w, w.account(), nil, time.Hour)
			return func(route) []attempt { return header("Bearer " + tok) }
		}},
		{kind: token, state: "expired", want: always(invalid), setup: func(w *world) func(route) []attempt {
			tok := jwtOf(w, w.account(), nil, -time.Second)
			return func(route) []attempt { return header(tok) }
		}},
		{kind: token, state: "tampered", want: always(invalid), setup: func(w *world) func(route) []attempt {
			// The claims widened (every permission, a later exp), the signature kept.
			a := w.account()
			parts := strings.Split(jwtOf(w, a, []string{auth.ReadOffice}, time.Hour), ".")
			claims := fmt.Sprintf(`{"sub":"%d","exp":%d}`, a.ID, later.Unix())
			tok := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + "." + parts[2]
			return func(route) []attempt { return header(tok) }
		}},
		{kind: token, state: "revoked key", na: "a JWT names no key: it ends at its exp, or with its account's suspension"},
		{kind: token, state: "suspended account", want: always(suspended), setup: func(w *world) func(route) []attempt {
			a := w.account()
			tok := jwtOf(w, a, nil, time.Hour)
			suspend(w, a)
			return func(route) []attempt { return header(tok) }
		}},
		{kind: token, state: "missing permission", want: lacking, setup: func(w *world) func(route) []attempt {
			a := w.account()
			return func(r route) []attempt { return header(jwtOf(w, a, allBut(r.permission), time.Hour)) }
		}},
		{kind: token, state: "wrong algorithm", want: always(invalid), setup: func(w *world) func(route) []attempt {
			// HS512 with the right secret, RS256, and alg none: only HS256 is accepted.
			a := w.account()
			claims := jwt.MapClaims{"sub": strconv.FormatInt(a.ID, 10), "exp": later.Unix()}
			rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				w.t.Fatal(err)
			}
			var toks []string
			for _, s := range []struct {
				m   jwt.SigningMethod
				key any
			}{{jwt.SigningMethodHS512, []byte(jwtSecret)}, {jwt.SigningMethodRS256, rsaKey}, {jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType}} {
				tok, err := jwt.NewWithClaims(s.m, claims).SignedString(s.key)
				if err != nil {
					w.t.Fatal(err)
				}
				toks = append(toks, tok)
			}
			return func(route) []attempt {
				return []attempt{{header: toks[0]}, {header: toks[1]}, {header: toks[2]}}
			}
		}},
		{kind: token, state: "first link format", na: "only signed URLs had a first format"},

		{kind: link, state: "valid", want: signedOpens, setup: func(w *world) func(route) []attempt {
			k, _ := w.key(w.account(), nil)
			return func(route) []attempt { return signed(w, k.ID, later) }
		}},
		{kind: link, state: "expired", want: always(invalid), setup: func(w *world) func(route) []attempt {
			k, _ := w.key(w.account(), nil)
			return func(route) []attempt { return signed(w, k.ID, now.Add(-time.Second)) }
		}},
		{kind: link, state: "tampered", want: always(invalid), setup: func(w *world) func(route) []attempt {
			// A signed parameter changed: the expiry pushed back a day.
			k, _ := w.key(w.account(), nil)
			return func(route) []attempt {
				return []attempt{{target: func(r route) string {
					u, _ := url.Parse(w.auth.SignURL(r.path, r.query, k.ID, later))
					q := u.Query()
					q.Set("expires", strconv.FormatInt(later.Add(24*time.Hour).Unix(), 10))
					return u.Path + "?" + q.Encode()
				}}}
			}
		}},
		{kind: link, state: "revoked key", want: always(invalid), setup: func(w *world) func(route) []attempt {
			k, _ := w.key(w.account(), nil)
			revoke(w, k)
			return func(route) []attempt { return signed(w, k.ID, later) }
		}},
		{kind: link, state: "suspended account", want: always(suspended), setup: func(w *world) func(route) []attempt {
			a := w.account()
			k, _ := w.key(a, nil)
			suspend(w, a)
			return func(route) []attempt { return signed(w, k.ID, later) }
		}},
		{kind: link, state: "missing permission", want: signedLacking, setup: func(w *world) func(route) []attempt {
			lackingKey := keyLacking(w)
			return func(r route) []attempt { return signed(w, lackingKey(r.permission).ID, later) }
		}},
		{kind: link, state: "wrong algorithm", na: "one algorithm, HMAC-SHA256 under SIGNING_KEY, named by no field of the URL"},
		{kind: link, state: "first link format", want: always(invalid), setup: func(w *world) func(route) []attempt {
			// Signed for an account (account=), as links were before they
			// belonged to keys: refused after the upgrade.
			a := w.account()
			return func(route) []attempt {
				return []attempt{{target: func(r route) string { return firstFormatLink(r.path, r.query, a.ID, later) }}}
			}
		}},
	}
}

// signedLacking is a signed URL's answer when its key lacks the route's
// permission: a file route refuses it naming that permission; the others
// refuse every signed URL anyway.
func signedLacking(r route) string {
	if r.kind == fileRoute {
		return refused(r.permission)
	}
	return signedOpens(r)
}

// TestCredentialMatrix: every credential kind × every route × every state,
// with the answer expected of each, as listed in testdata/credential-matrix.md
// (the table to audit; -update rewrites it from the expectations here).
func TestCredentialMatrix(t *testing.T) {
	w := newWorld(t, worldOptions{})
	var table strings.Builder
	table.WriteString(matrixHeader)
	for _, sc := range scenarios() {
		if sc.na != "" {
			fmt.Fprintf(&table, "| %s | %s | every route | n/a: %s |\n", sc.kind, sc.state, sc.na)
			continue
		}
		credentialFor := sc.setup(w)
		for _, r := range routes() {
			want := sc.want(r)
			fmt.Fprintf(&table, "| %s | %s | `%s` | `%s` |\n", sc.kind, sc.state, r.name, want)
			for i, at := range credentialFor(r) {
				if got := outcomeOf(r, w.serve(at.request(r))); got != want {
					t.Errorf("%s, %s, %s (attempt %d):\n got  %s\n want %s", sc.kind, sc.state, r.name, i+1, got, want)
				}
			}
		}
	}
	if *update {
		if err := os.WriteFile(matrixFile, []byte(table.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile(matrixFile)
	if err != nil || string(golden) != table.String() {
		t.Errorf("%s is not the table this test checks (%v): run go test ./securitytest -run CredentialMatrix -update and review the diff", matrixFile, err)
	}
}

const matrixHeader = `# Credentials × routes × states

Generated by TestCredentialMatrix (` + "`go test ./securitytest -run CredentialMatrix -update`" + `),
which checks every row against the running router; review this file's diff.

Answers: the HTTP status, then the error: its code (REST: the body's ` + "`code`" + `; GraphQL:
` + "`extensions.code`/`extensions.status`" + `), its message, and the contract's extra field
(` + "`permission`, `reason`" + `), and for a GraphQL error the path of its field. A REST error
body is ` + "`{\"code\": 403, \"message\": \"not enough privileges\", \"permission\": \"read:office\"}`" + `.
The auth door answers /graphql with REST's body too (401, a suspension, a missing
` + "`read:graphql`" + `); a refused lookup inside a query is a GraphQL error, and when nothing
of the query answered, the HTTP status is REST's. A credential that does not apply to a state
is listed once, with the reason.

| credential | state | route | answer |
|---|---|---|---|
`

func (at attempt) request(r route) *http.Request {
	target := plainURL(r)
	if at.target != nil {
		target = at.target(r)
	}
	var req *http.Request
	if r.method == http.MethodPost {
		body := `{"query":` + strconv.Quote(r.graphql) + `}`
		req = httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequest(r.method, target, nil)
	}
	if at.header != "" {
		req.Header.Set("Authorization", at.header)
	}
	return req
}

// outcomeOf writes an answer as the table does. A 200 counts as answered
// only when it carries what the route serves.
func outcomeOf(r route, a answer) string {
	status := strconv.Itoa(a.status)
	if errs, ok := a.body["errors"].([]any); ok && len(errs) > 0 {
		// Sibling fields fail concurrently: the error of the first path.
		var e map[string]any
		var at string
		for _, x := range errs {
			xe, _ := x.(map[string]any)
			var steps []string
			p, _ := xe["path"].([]any)
			for _, step := range p {
				steps = append(steps, fmt.Sprint(step))
			}
			if xat := strings.Join(steps, "."); e == nil || xat < at {
				e, at = xe, xat
			}
		}
		ext, _ := e["extensions"].(map[string]any)
		return fmt.Sprintf("%s %v/%v %q", status, ext["code"], ext["status"], e["message"]) + extra(ext) + " at " + at
	}
	if a.status != http.StatusOK {
		if a.body == nil {
			return status + " without a JSON body (" + a.header.Get("Content-Type") + ")"
		}
		return fmt.Sprintf("%s %v %q", status, a.body["code"], a.body["message"]) + extra(a.body)
	}
	ct := a.header.Get("Content-Type")
	switch {
	case r.kind == fileRoute && (ct == "application/pdf" || ct == "image/png") && len(a.raw) > 0:
	case r.kind != fileRoute && strings.HasPrefix(ct, "application/json") && (r.path != "/graphql" || a.body["data"] != nil):
	default:
		return status + " but " + ct + ": " + string(a.raw[:min(len(a.raw), 200)])
	}
	return answered
}

func extra(fields map[string]any) string {
	var out string
	if p, ok := fields["permission"]; ok {
		out += fmt.Sprintf(" permission=%v", p)
	}
	if r, ok := fields["reason"]; ok {
		out += fmt.Sprintf(" reason=%v", r)
	}
	return out
}
