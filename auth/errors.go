package auth

import (
	"strconv"
	"time"

	"github.com/cnpjgraph/cnpjgraph/fault"
)

// The errors below carry exactly what the contract's error bodies need; the
// REST/GraphQL error classification (package fault) renders them:
//
//	ErrMissing          401 "missing authorization"
//	ErrInvalid          401 "invalid authorization"
//	*SuspendedError     403 "account has been suspended"  + reason
//	*PrivilegeError     403 "not enough privileges"       + permission
//	*RateLimitError     429 "rate limit exceeded"         + Retry-After header
//	*CreditsError       429 "not enough credits"          + required, remaining
//
// Each carries its classification (a Fault method), which fault.Classify
// honours, so REST bodies and GraphQL extensions.code come from one place.
var (
	// ErrMissing: the request carries no credential.
	ErrMissing error = &credentialError{fault.MsgMissingAuth}
	// ErrInvalid: the credential is unknown, revoked, expired, forged or malformed.
	ErrInvalid error = &credentialError{fault.MsgInvalidAuth}
)

type credentialError struct{ msg string }

func (e *credentialError) Error() string { return e.msg }

// Fault classifies the error as the contract's 401.
func (e *credentialError) Fault() *fault.Error { return fault.E(fault.Unauthenticated, e.msg, nil) }

// Fault classifies the error as the contract's 403 with reason.
func (e *SuspendedError) Fault() *fault.Error {
	f := fault.E(fault.PermissionDenied, fault.MsgSuspended, nil)
	f.Reason = e.Reason
	return f
}

// Fault classifies the error as the contract's 403 with permission.
func (e *PrivilegeError) Fault() *fault.Error {
	f := fault.E(fault.PermissionDenied, fault.MsgPrivileges, nil)
	f.Permission = e.Permission
	return f
}

// Fault classifies the error as the contract's 429 rate limit.
func (e *RateLimitError) Fault() *fault.Error {
	f := fault.E(fault.ResourceExhausted, fault.MsgRateLimit, nil)
	f.RetryAfter = e.RetryAfter
	return f
}

// Fault classifies the error as the contract's 429 with required and remaining.
func (e *CreditsError) Fault() *fault.Error {
	f := fault.E(fault.ResourceExhausted, fault.MsgNoCredits, nil)
	req, rem := int(e.Required), int(e.Remaining)
	f.Required, f.Remaining = &req, &rem
	return f
}

// SuspendedError is a valid credential of a suspended account.
type SuspendedError struct {
	Reason string
}

func (e *SuspendedError) Error() string { return "account has been suspended: " + e.Reason }

// PrivilegeError means the credential lacks Permission.
type PrivilegeError struct {
	Permission string
}

func (e *PrivilegeError) Error() string { return "not enough privileges: " + e.Permission }

// RateLimitError means the account's per-minute limit is used up until RetryAfter
// has passed.
type RateLimitError struct {
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string { return "rate limit exceeded" }

// RetryAfterSeconds is the Retry-After header value: whole seconds, at least 1.
func (e *RateLimitError) RetryAfterSeconds() string { return strconv.Itoa(fault.Seconds(e.RetryAfter)) }

// CreditsError means the account holds Remaining credits, fewer than Required.
type CreditsError struct {
	Required  int64
	Remaining int64
}

func (e *CreditsError) Error() string {
	return "not enough credits: required " + strconv.FormatInt(e.Required, 10) + ", remaining " + strconv.FormatInt(e.Remaining, 10)
}
