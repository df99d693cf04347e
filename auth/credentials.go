package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
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
	KeyID       int64  // the API key's id: of the key (Credential "key") or of the key that signed the URL ("signature"); 0 for a JWT
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
	keyByHash, keyByID, accountByID, debit, balance, refund *sqlx.Stmt
}

const (
	identityColumns = `a.id, a.name, a.plan, a.status = 'suspended', COALESCE(a.suspension_reason, ''), a.permissions, p.requests_per_minute`
	keyColumns      = `SELECT k.id, k.permissions, k.revoked_at IS NOT NULL, ` + identityColumns + `
		FROM api_keys k JOIN accounts a ON a.id = k.account_id JOIN plans p ON p.name = a.plan`
	qKeyByHash   = keyColumns + ` WHERE k.hash = $1`
	qKeyByID     = keyColumns + ` WHERE k.id = $1`
	qAccountByID = `SELECT ` + identityColumns + `
		FROM accounts a JOIN plans p ON p.name = a.plan WHERE a.id = $1`
)

func (st *statements) prepare(ctx context.Context, d *sqlx.DB) error {
	for _, p := range []struct {
		dst **sqlx.Stmt
		q   string
	}{{&st.keyByHash, qKeyByHash}, {&st.keyByID, qKeyByID}, {&st.accountByID, qAccountByID}, {&st.debit, qDebit}, {&st.balance, qBalance}, {&st.refund, qRefund}} {
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
	for _, s := range []*sqlx.Stmt{st.keyByHash, st.keyByID, st.accountByID, st.debit, st.balance, st.refund} {
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
	id, err := scanKey(s.stmts.keyByHash.QueryRowContext(ctx, h[:]))
	if err != nil {
		return id, err
	}
	s.keys.put(h, id)
	return id, nil
}

// keyIdentityByID is the current state of the key that signed a URL: the
// link is worth what that key is worth now, with the same cache delay as
// the key itself.
func (s *Service) keyIdentityByID(ctx context.Context, keyID int64) (identity, error) {
	if id, ok := s.keysByID.get(keyID); ok {
		return id, nil
	}
	id, err := scanKey(s.stmts.keyByID.QueryRowContext(ctx, keyID))
	if err != nil {
		return id, err
	}
	s.keysByID.put(keyID, id)
	return id, nil
}

func scanKey(row *sql.Row) (identity, error) {
	var (
		id             identity
		keyPerms, accP pq.StringArray
	)
	err := row.Scan(&id.keyID, &keyPerms, &id.revoked,
		&id.accountID, &id.name, &id.plan, &id.suspended, &id.reason, &accP, &id.rate)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return id, fmt.Errorf("auth: key lookup: %w", err)
	default:
		id.found = true
		id.keyPerms, id.accountPerms = permissionsOf(keyPerms), permissionsOf(accP)
	}
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
		var keyID int64
		keyID, err = s.verifySignedURL(r)
		if err == nil {
			// The key that asked for the link, as it is now: revoked,
			// suspended or stripped of the permission, the link is too.
			id, err = s.keyIdentityByID(ctx, keyID)
		}
		// A signed URL opens exactly the file it names and nothing else.
		narrow = bit(FilePermission(r.URL.Path)) & signable
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
