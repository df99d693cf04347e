package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Principal is who a request runs as.
type Principal struct {
	AccountID   int64
	Account     string // the account's name
	Plan        string
	Rate        int // requests per minute
	Permissions Permissions
	Credential  string // "key", "jwt" or "signature"
	KeyID       int64  // the API key's id, for Credential "key"
}

// identity is what a credential lookup yields; cached as a whole.
type identity struct {
	found        bool
	revoked      bool
	keyID        int64
	keyPerms     Permissions
	accountID    int64
	name         string
	plan         string
	suspended    bool
	reason       string
	accountPerms Permissions
	rate         int
}

// statements are the hot-path queries, prepared once per pool connection.
type statements struct {
	keyByHash, accountByID, debit, balance, refund *sqlx.Stmt
}

const (
	identityColumns = `a.id, a.name, a.plan, a.status = 'suspended', COALESCE(a.suspension_reason, ''), a.permissions, p.requests_per_minute`
	qKeyByHash      = `SELECT k.id, k.permissions, k.revoked_at IS NOT NULL, ` + identityColumns + `
		FROM api_keys k JOIN accounts a ON a.id = k.account_id JOIN plans p ON p.name = a.plan
		WHERE k.hash = $1`
	qAccountByID = `SELECT ` + identityColumns + `
		FROM accounts a JOIN plans p ON p.name = a.plan WHERE a.id = $1`
)

func (st *statements) prepare(ctx context.Context, d *sqlx.DB) error {
	for _, p := range []struct {
		dst **sqlx.Stmt
		q   string
	}{{&st.keyByHash, qKeyByHash}, {&st.accountByID, qAccountByID}, {&st.debit, qDebit}, {&st.balance, qBalance}, {&st.refund, qRefund}} {
		stmt, err := d.PreparexContext(ctx, p.q) //nolint:sqlclosecheck // lives as long as the Service; closed by Close
		if err != nil {
			st.close()
			return fmt.Errorf("auth: prepare: %w (are the migrations applied?)", err)
		}
		*p.dst = stmt
	}
	return nil
}

func (st *statements) close() {
	for _, s := range []*sqlx.Stmt{st.keyByHash, st.accountByID, st.debit, st.balance, st.refund} {
		if s != nil {
			_ = s.Close()
		}
	}
}

func (s *Service) keyIdentity(ctx context.Context, key string) (identity, error) {
	h := hashKey(key)
	if id, ok := s.keys.get(h); ok {
		return id, nil
	}
	var (
		id             identity
		keyPerms, accP pq.StringArray
	)
	err := s.stmts.keyByHash.QueryRowContext(ctx, h[:]).Scan(&id.keyID, &keyPerms, &id.revoked,
		&id.accountID, &id.name, &id.plan, &id.suspended, &id.reason, &accP, &id.rate)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return id, fmt.Errorf("auth: key lookup: %w", err)
	default:
		id.found = true
		id.keyPerms, id.accountPerms = permissionsOf(keyPerms), permissionsOf(accP)
	}
	s.keys.put(h, id)
	return id, nil
}

func (s *Service) accountIdentity(ctx context.Context, accountID int64) (identity, error) {
	if id, ok := s.accounts.get(accountID); ok {
		return id, nil
	}
	var (
		id   identity
		accP pq.StringArray
	)
	err := s.stmts.accountByID.QueryRowContext(ctx, accountID).Scan(&id.accountID, &id.name, &id.plan,
		&id.suspended, &id.reason, &accP, &id.rate)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return id, fmt.Errorf("auth: account lookup: %w", err)
	default:
		id.found = true
		id.keyPerms, id.accountPerms = All, permissionsOf(accP)
	}
	s.accounts.put(accountID, id)
	return id, nil
}

// credential returns the raw credential of the Authorization header, with or
// without the Bearer scheme.
func credential(r *http.Request) (string, bool) {
	h, ok := r.Header["Authorization"]
	if !ok || len(h) == 0 {
		return "", false
	}
	v := strings.TrimSpace(h[0])
	if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		v = strings.TrimSpace(v[7:])
	}
	return v, true
}

// authenticate resolves the request's credential. It returns the principal
// whenever the account is known, also alongside a suspension or privilege
// error, so that such answers are still accounted to it.
func (s *Service) authenticate(r *http.Request, perm string) (*Principal, error) {
	ctx := r.Context()
	var (
		id   identity
		kind string
		err  error
	)
	narrow := All
	raw, ok := credential(r)
	switch {
	case ok && strings.HasPrefix(raw, KeyPrefix):
		kind = "key"
		id, err = s.keyIdentity(ctx, raw)
	case ok && strings.Count(raw, ".") == 2:
		kind = "jwt"
		var accountID int64
		accountID, narrow, err = s.parseJWT(raw)
		if err == nil {
			id, err = s.accountIdentity(ctx, accountID)
		}
	case ok:
		return nil, ErrInvalid
	case r.URL.RawQuery != "" && r.URL.Query().Has("signature"):
		kind = "signature"
		var accountID int64
		accountID, err = s.verifySignedURL(r)
		if err == nil {
			id, err = s.accountIdentity(ctx, accountID)
		}
		// A signed URL opens exactly the file it names and nothing else.
		narrow = bit(filePermission(r.URL.Path)) & signable
	default:
		return nil, ErrMissing
	}
	if err != nil {
		return nil, err
	}
	if !id.found || id.revoked {
		return nil, ErrInvalid
	}
	p := &Principal{
		AccountID:   id.accountID,
		Account:     id.name,
		Plan:        id.plan,
		Rate:        id.rate,
		Permissions: id.accountPerms & id.keyPerms & narrow,
		Credential:  kind,
		KeyID:       id.keyID,
	}
	if id.suspended {
		return p, &SuspendedError{Reason: id.reason}
	}
	if perm != "" && !p.Permissions.Has(perm) {
		return p, &PrivilegeError{Permission: perm}
	}
	return p, nil
}

// tokenClaims are the JWT claims read: sub (the account id), exp and an
// optional permissions list that narrows the account's.
type tokenClaims struct {
	jwt.RegisteredClaims
	Permissions *[]string `json:"permissions,omitempty"`
}

func (s *Service) parseJWT(raw string) (int64, Permissions, error) {
	if len(s.jwtSecret) == 0 {
		return 0, 0, ErrInvalid
	}
	var c tokenClaims
	parser := jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}), jwt.WithExpirationRequired(), jwt.WithTimeFunc(s.now))
	if _, err := parser.ParseWithClaims(raw, &c, func(*jwt.Token) (any, error) { return s.jwtSecret, nil }); err != nil {
		return 0, 0, ErrInvalid
	}
	accountID, err := strconv.ParseInt(c.Subject, 10, 64)
	if err != nil {
		return 0, 0, ErrInvalid
	}
	narrow := All
	if c.Permissions != nil {
		narrow = permissionsOf(*c.Permissions)
	}
	return accountID, narrow, nil
}

// IssueJWT signs an HS256 token for an account, valid for ttl; perms nil
// keeps the account's permissions, otherwise narrows them.
func (s *Service) IssueJWT(accountID int64, perms []string, ttl time.Duration) (string, error) {
	if len(s.jwtSecret) == 0 {
		return "", errors.New("auth: JWT_SECRET is not set")
	}
	now := s.now()
	c := tokenClaims{RegisteredClaims: jwt.RegisteredClaims{
		Subject:   strconv.FormatInt(accountID, 10),
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
	}}
	if perms != nil {
		c.Permissions = &perms
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(s.jwtSecret)
}

// URL signatures. The signed message is the escaped path, "?", and the
// canonical query: every parameter except signature, sorted by key then
// value, each key=value query-escaped, joined by "&". The query carries
// account (who pays) and expires (unix seconds), so both are signed.

// SignURL returns path?query with account, expires and signature added: a
// link that opens exactly that URL, for the account, until expires.
func (s *Service) SignURL(path string, query url.Values, account string, expires time.Time) string {
	q := make(url.Values, len(query)+2)
	for k, v := range query {
		if k != "signature" {
			q[k] = append([]string(nil), v...)
		}
	}
	q.Set("account", account)
	q.Set("expires", strconv.FormatInt(expires.Unix(), 10))
	escaped := (&url.URL{Path: path}).EscapedPath()
	canon := canonicalQuery(q)
	return escaped + "?" + canon + "&signature=" + base64.RawURLEncoding.EncodeToString(s.mac(escaped, canon))
}

func (s *Service) mac(escapedPath, canonical string) []byte {
	m := hmac.New(sha256.New, s.signingKey)
	m.Write([]byte(escapedPath))
	m.Write([]byte{'?'})
	m.Write([]byte(canonical))
	return m.Sum(nil)
}

func canonicalQuery(q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		vs := append([]string(nil), q[k]...)
		sort.Strings(vs)
		ek := url.QueryEscape(k)
		for _, v := range vs {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(ek)
			b.WriteByte('=')
			b.WriteString(url.QueryEscape(v))
		}
	}
	return b.String()
}

func (s *Service) verifySignedURL(r *http.Request) (int64, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil || len(q["signature"]) != 1 || len(q["expires"]) != 1 || len(q["account"]) != 1 {
		return 0, ErrInvalid
	}
	sig, err := base64.RawURLEncoding.DecodeString(q.Get("signature"))
	if err != nil {
		return 0, ErrInvalid
	}
	q.Del("signature")
	if !hmac.Equal(sig, s.mac(r.URL.EscapedPath(), canonicalQuery(q))) {
		return 0, ErrInvalid
	}
	expires, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	if err != nil || s.now().Unix() >= expires {
		return 0, ErrInvalid
	}
	accountID, err := strconv.ParseInt(q.Get("account"), 10, 64)
	if err != nil {
		return 0, ErrInvalid
	}
	return accountID, nil
}
