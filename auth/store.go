package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/cnpjgraph/cnpjgraph/db"
)

// Administration of plans, accounts and keys. Functions take sqlx.ExtContext
// so they run on the pool or inside a transaction alike.

// ErrNotFound means no such plan, account or key.
var ErrNotFound = errors.New("not found")

// ErrExists means an account of that name exists already.
var ErrExists = errors.New("already exists")

// Plan is a daily credit allowance and a per-minute request rate.
type Plan struct {
	Name              string `db:"name"`
	CreditsPerDay     int64  `db:"credits_per_day"`
	RequestsPerMinute int    `db:"requests_per_minute"`
}

// Account as stored; Credits is the balance as of today (the daily refill applied).
type Account struct {
	ID               int64          `db:"id"`
	Name             string         `db:"name"`
	Plan             string         `db:"plan"`
	Status           string         `db:"status"`
	SuspensionReason *string        `db:"suspension_reason"`
	Credits          int64          `db:"credits"`
	Permissions      pq.StringArray `db:"permissions"` // nil: all
	CreatedAt        time.Time      `db:"created_at"`
}

// Key is an API key without its secret, which is never stored.
type Key struct {
	ID          int64          `db:"id"`
	AccountID   int64          `db:"account_id"`
	Prefix      string         `db:"prefix"`
	Name        string         `db:"name"`
	Permissions pq.StringArray `db:"permissions"` // nil: all the account holds
	CreatedAt   time.Time      `db:"created_at"`
	RevokedAt   *time.Time     `db:"revoked_at"`
}

// Usage sums an account's ledger per UTC day and route.
type Usage struct {
	Day      time.Time `db:"day"`
	Route    string    `db:"route"`
	Requests int64     `db:"requests"`
	Credits  int64     `db:"credits"`
	Errors   int64     `db:"errors"`
}

// KeyPrefix starts every API key, so a credential's kind is known at a glance.
const KeyPrefix = "cg_"

// newKey returns a fresh key: the prefix and 32 random bytes, base64url.
func newKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand panics rather)
	return KeyPrefix + base64.RawURLEncoding.EncodeToString(b)
}

func hashKey(key string) [32]byte { return sha256.Sum256([]byte(key)) }

// utcDay is the calendar day of t in UTC, the unit of the credit refill.
func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// SetPlan creates or updates a plan.
func SetPlan(ctx context.Context, q sqlx.ExtContext, p Plan) error {
	if p.CreditsPerDay < 0 || p.RequestsPerMinute <= 0 || strings.TrimSpace(p.Name) == "" {
		return fmt.Errorf("plan needs a name, credits >= 0 and a rate > 0")
	}
	_, err := q.ExecContext(ctx, `
		INSERT INTO plans (name, credits_per_day, requests_per_minute) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET credits_per_day = EXCLUDED.credits_per_day,
			requests_per_minute = EXCLUDED.requests_per_minute`, p.Name, p.CreditsPerDay, p.RequestsPerMinute)
	return err
}

// Plans lists the plans by name.
func Plans(ctx context.Context, q sqlx.ExtContext) ([]Plan, error) {
	var out []Plan
	err := sqlx.SelectContext(ctx, q, &out, `SELECT name, credits_per_day, requests_per_minute FROM plans ORDER BY name`)
	return out, err
}

const accountColumns = `a.id, a.name, a.plan, a.status, a.suspension_reason,
	CASE WHEN a.credits_day < $1 THEN p.credits_per_day ELSE a.credits END AS credits,
	a.permissions, a.created_at`

// maxNameBytes bounds account and key names: they are labels in the
// operator's listings, not documents.
const maxNameBytes = 100

// CreateAccount creates an account on plan (free when empty) holding the
// plan's allowance for today; perms nil means all permissions.
func CreateAccount(ctx context.Context, q sqlx.ExtContext, name, plan string, perms []string, now time.Time) (Account, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return Account{}, fmt.Errorf("account needs a name")
	}
	if len(name) > maxNameBytes {
		return Account{}, fmt.Errorf("account name of %d bytes: at most %d", len(name), maxNameBytes)
	}
	if _, err := strconv.ParseInt(name, 10, 64); err == nil {
		// FindAccount would take it for an id.
		return Account{}, fmt.Errorf("account name %q: a name of digits alone reads as an account id; add a letter", name)
	}
	// Names are unique case aside, so "ACME" is not a second "acme" to
	// mistake for the first (checked here: a unique index on lower(name)
	// would fail its migration where such pairs exist already).
	var same string
	switch err := sqlx.GetContext(ctx, q, &same, `SELECT name FROM accounts WHERE lower(name) = lower($1) LIMIT 1`, name); {
	case err == nil:
		return Account{}, fmt.Errorf("account %q: %w (as %q: names are compared case aside)", name, ErrExists, same)
	case !errors.Is(err, sql.ErrNoRows):
		return Account{}, err
	}
	if plan == "" {
		plan = "free"
	}
	var a Account
	err := sqlx.GetContext(ctx, q, &a, `
		WITH p AS (SELECT name, credits_per_day FROM plans WHERE name = $3),
		a AS (
			INSERT INTO accounts (name, plan, credits, credits_day, permissions)
			SELECT $2, p.name, p.credits_per_day, $1, $4 FROM p
			RETURNING *)
		SELECT a.id, a.name, a.plan, a.status, a.suspension_reason, a.credits, a.permissions, a.created_at FROM a`,
		utcDay(now), name, plan, nullableArray(perms))
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("plan %q: %w", plan, ErrNotFound)
	}
	if db.IsUniqueViolation(err) {
		return a, fmt.Errorf("account %q: %w", name, ErrExists)
	}
	return a, err
}

// FindAccount finds an account by id (all digits) or by name.
func FindAccount(ctx context.Context, q sqlx.ExtContext, ref string, now time.Time) (Account, error) {
	var a Account
	where := "a.name = $2"
	if _, err := strconv.ParseInt(ref, 10, 64); err == nil {
		where = "a.id = $2::bigint"
	}
	err := sqlx.GetContext(ctx, q, &a, `SELECT `+accountColumns+`
		FROM accounts a JOIN plans p ON p.name = a.plan WHERE `+where, utcDay(now), ref)
	if errors.Is(err, sql.ErrNoRows) {
		return a, fmt.Errorf("account %q: %w", ref, ErrNotFound)
	}
	return a, err
}

// Accounts lists every account by id.
func Accounts(ctx context.Context, q sqlx.ExtContext, now time.Time) ([]Account, error) {
	var out []Account
	err := sqlx.SelectContext(ctx, q, &out, `SELECT `+accountColumns+`
		FROM accounts a JOIN plans p ON p.name = a.plan ORDER BY a.id`, utcDay(now))
	return out, err
}

func execOne(ctx context.Context, q sqlx.ExtContext, what string, query string, args ...any) error {
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return nil
}

// Suspend suspends an account; its credentials then fail with the reason.
func Suspend(ctx context.Context, q sqlx.ExtContext, accountID int64, reason string) error {
	if strings.TrimSpace(reason) == "" {
		return fmt.Errorf("a suspension needs a reason")
	}
	return execOne(ctx, q, "account", `UPDATE accounts SET status = 'suspended', suspension_reason = $2 WHERE id = $1`, accountID, reason)
}

// Resume lifts a suspension.
func Resume(ctx context.Context, q sqlx.ExtContext, accountID int64) error {
	return execOne(ctx, q, "account", `UPDATE accounts SET status = 'active', suspension_reason = NULL WHERE id = $1`, accountID)
}

// GrantCredits adds n credits to today's balance (after today's refill); the
// next daily refill resets the balance to the plan allowance, so a lasting
// increase is a change of plan.
func GrantCredits(ctx context.Context, q sqlx.ExtContext, accountID, n int64, now time.Time) error {
	return execOne(ctx, q, "account", `
		UPDATE accounts a SET
			credits = GREATEST(0, CASE WHEN a.credits_day < $2 THEN p.credits_per_day ELSE a.credits END + $3),
			credits_day = GREATEST(a.credits_day, $2)
		FROM plans p WHERE a.id = $1 AND p.name = a.plan`, accountID, utcDay(now), n)
}

// ChangePlan moves an account to another plan. Today's balance becomes the
// new allowance minus what was already spent today under the old one.
func ChangePlan(ctx context.Context, q sqlx.ExtContext, accountID int64, plan string, now time.Time) error {
	return execOne(ctx, q, "account or plan", `
		UPDATE accounts a SET plan = np.name,
			credits = GREATEST(0, np.credits_per_day - GREATEST(0, op.credits_per_day -
				CASE WHEN a.credits_day < $3 THEN op.credits_per_day ELSE a.credits END)),
			credits_day = GREATEST(a.credits_day, $3)
		FROM plans op, plans np
		WHERE a.id = $1 AND op.name = a.plan AND np.name = $2`, accountID, plan, utcDay(now))
}

// SetAccountPermissions restricts an account (nil: all permissions).
func SetAccountPermissions(ctx context.Context, q sqlx.ExtContext, accountID int64, perms []string) error {
	return execOne(ctx, q, "account", `UPDATE accounts SET permissions = $2 WHERE id = $1`, accountID, nullableArray(perms))
}

// AddKey creates an API key for an account and returns it with the secret,
// which exists only in this return value. perms nil: all the account holds.
func AddKey(ctx context.Context, q sqlx.ExtContext, accountID int64, name string, perms []string) (Key, string, error) {
	if name = strings.TrimSpace(name); len(name) > maxNameBytes {
		return Key{}, "", fmt.Errorf("key name of %d bytes: at most %d", len(name), maxNameBytes)
	}
	secret := newKey()
	h := hashKey(secret)
	var k Key
	err := sqlx.GetContext(ctx, q, &k, `
		INSERT INTO api_keys (account_id, prefix, hash, name, permissions) VALUES ($1, $2, $3, $4, $5)
		RETURNING id, account_id, prefix, name, permissions, created_at, revoked_at`,
		accountID, secret[:len(KeyPrefix)+8], h[:], name, nullableArray(perms))
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && pqErr.Code == "23503" {
		return k, "", fmt.Errorf("account %d: %w", accountID, ErrNotFound)
	}
	return k, secret, err
}

// Keys lists an account's keys, revoked ones included.
func Keys(ctx context.Context, q sqlx.ExtContext, accountID int64) ([]Key, error) {
	var out []Key
	err := sqlx.SelectContext(ctx, q, &out, `
		SELECT id, account_id, prefix, name, permissions, created_at, revoked_at
		FROM api_keys WHERE account_id = $1 ORDER BY id`, accountID)
	return out, err
}

// RevokeKey revokes a key for good.
func RevokeKey(ctx context.Context, q sqlx.ExtContext, keyID int64, now time.Time) error {
	return execOne(ctx, q, fmt.Sprintf("key %d", keyID), `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1`, keyID, now)
}

// AccountUsage sums the ledger per UTC day and route since the given time.
func AccountUsage(ctx context.Context, q sqlx.ExtContext, accountID int64, since time.Time) ([]Usage, error) {
	var out []Usage
	err := sqlx.SelectContext(ctx, q, &out, `
		SELECT (date_trunc('day', at AT TIME ZONE 'UTC'))::date AS day, route,
			count(*) AS requests, COALESCE(sum(cost), 0) AS credits,
			count(*) FILTER (WHERE status >= 400) AS errors
		FROM usage WHERE account_id = $1 AND at >= $2
		GROUP BY 1, 2 ORDER BY 1, 2`, accountID, since)
	return out, err
}

// DevAccountName is the account `make run` creates and reuses.
const DevAccountName = "development"

// EnsureDevAccount creates the development account on plan dev, or reuses it
// (active again and on plan dev), and returns a fresh API key for it.
func EnsureDevAccount(ctx context.Context, d *sqlx.DB) (string, error) {
	tx, err := d.BeginTxx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer func() { _ = tx.Rollback() }()
	now := time.Now()
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO plans (name, credits_per_day, requests_per_minute) VALUES ('dev', 1000000, 1000000)
		ON CONFLICT (name) DO NOTHING`); err != nil {
		return "", err
	}
	var id int64
	err = tx.GetContext(ctx, &id, `
		INSERT INTO accounts (name, plan, credits, credits_day)
		SELECT $1, name, credits_per_day, $2 FROM plans WHERE name = 'dev'
		ON CONFLICT (name) DO UPDATE SET status = 'active', suspension_reason = NULL
		RETURNING id`, DevAccountName, utcDay(now))
	if err != nil {
		return "", fmt.Errorf("development account: %w", err)
	}
	if err := ChangePlan(ctx, tx, id, "dev", now); err != nil {
		return "", err
	}
	_, secret, err := AddKey(ctx, tx, id, "make run "+now.UTC().Format(time.RFC3339), nil)
	if err != nil {
		return "", err
	}
	return secret, tx.Commit()
}

// nullableArray stores nil as NULL (all permissions) and anything else as a list.
func nullableArray(s []string) any {
	if s == nil {
		return nil
	}
	return pq.StringArray(s)
}
