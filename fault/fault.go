// Package fault is the one classification of errors: every failure that
// reaches a client, over REST or GraphQL, is turned into a *fault.Error here,
// and its Kind alone decides the HTTP status and the GraphQL extensions.code.
package fault

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"
	"time"
)

// Kind is a class of failure. The list is append-only: kinds are published as
// GraphQL codes and must keep their meaning.
type Kind uint8

// Kinds of failure.
const (
	Internal          Kind = iota // a bug or an unexpected failure: 500
	NotFound                      // the thing asked for does not exist: 404
	InvalidArgument               // the request is malformed: 400
	Unauthenticated               // no or a bad credential: 401
	PermissionDenied              // valid credential, not allowed: 403
	ResourceExhausted             // credits or rate limit: 429
	Unavailable                   // a backing service is down: 503
	DeadlineExceeded              // no answer in time: 504
	TooLarge                      // the request is bigger than allowed (its body): 413
)

var kinds = [...]struct {
	name   string
	status int
	code   string
}{
	Internal:          {"internal", 500, "INTERNAL_SERVER_ERROR"},
	NotFound:          {"not_found", 404, "NOT_FOUND"},
	InvalidArgument:   {"invalid_argument", 400, "BAD_REQUEST"},
	Unauthenticated:   {"unauthenticated", 401, "UNAUTHENTICATED"},
	PermissionDenied:  {"permission_denied", 403, "FORBIDDEN"},
	ResourceExhausted: {"resource_exhausted", 429, "TOO_MANY_REQUESTS"},
	Unavailable:       {"unavailable", 503, "SERVICE_UNAVAILABLE"},
	DeadlineExceeded:  {"deadline_exceeded", 504, "GATEWAY_TIMEOUT"},
	TooLarge:          {"too_large", 413, "PAYLOAD_TOO_LARGE"},
}

func (k Kind) String() string {
	if int(k) < len(kinds) {
		return kinds[k].name
	}
	return "internal"
}

// Status is the HTTP status of the kind.
func (k Kind) Status() int {
	if int(k) < len(kinds) {
		return kinds[k].status
	}
	return 500
}

// Code is the GraphQL extensions.code of the kind.
func (k Kind) Code() string {
	if int(k) < len(kinds) {
		return kinds[k].code
	}
	return "INTERNAL_SERVER_ERROR"
}

// Public messages of the contract. Clients match on some of them, so they
// are spelled exactly as interface-spec.md does.
const (
	MsgValidation      = "request validation failed"
	MsgTaxIDNotFound   = "tax id not registered at revenue service"
	MsgCompanyNotFound = "company not registered at revenue service"
	MsgPersonNotFound  = "person not found"
	MsgCacheMissing    = "cached data unavailable"
	MsgOffline         = "rfb data fetching is offline"
	MsgOfflineCCC      = "ccc data fetching is offline"
	MsgOfflineSuframa  = "suframa data fetching is offline"
	MsgTimeout         = "failed to fulfill request within timeout"
	MsgUnexpected      = "unexpected error"
	MsgDatabaseDown    = "database is unavailable"
	MsgNoSnapshot      = "registry data has not been imported yet"
	MsgMissingAuth     = "missing authorization"
	MsgInvalidAuth     = "invalid authorization"
	MsgSuspended       = "account has been suspended"
	MsgPrivileges      = "not enough privileges"
	MsgNoCredits       = "not enough credits"
	MsgRateLimit       = "rate limit exceeded"
	MsgBodyTooLarge    = "request body too large"
)

// Error is a classified failure: what the client is told (Kind, Message and
// the extra public fields) and what only the log sees (Cause).
type Error struct {
	Kind    Kind
	Message string

	// Extra public fields; zero values are not shown.
	Constraints []string // InvalidArgument: one readable sentence per violated rule
	Reason      string   // PermissionDenied: why an account is suspended
	Permission  string   // PermissionDenied: the permission lacking
	Required    *int     // ResourceExhausted: credits needed
	Remaining   *int     // ResourceExhausted: credits left
	// RetryAfter is when a rate-limited caller may try again: the
	// Retry-After header of REST and GraphQL answers alike.
	RetryAfter time.Duration

	// Cause is the internal error behind the fault: logged, never shown.
	Cause error
}

// E builds a fault of kind with the public message and an optional cause.
func E(kind Kind, message string, cause error) *Error {
	return &Error{Kind: kind, Message: message, Cause: cause}
}

// Invalid is the 400 of the contract with every violated rule.
func Invalid(constraints ...string) *Error {
	return &Error{Kind: InvalidArgument, Message: MsgValidation, Constraints: constraints}
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Kind.String() + ": " + e.Message + ": " + e.Cause.Error()
	}
	return e.Kind.String() + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Cause }

// Seconds is a Retry-After duration in whole seconds, at least 1.
func Seconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

// Status is the HTTP status of the fault.
func (e *Error) Status() int { return e.Kind.Status() }

// Code is the GraphQL extensions.code of the fault.
func (e *Error) Code() string { return e.Kind.Code() }

// classified is implemented by errors of other packages that know their
// place in this classification (auth's credential and limit errors).
type classified interface{ Fault() *Error }

// notFounder is implemented by store errors for a missing key, so that this
// package need not import the store.
type notFounder interface{ NotFound() bool }

// sqlStater is implemented by driver errors that carry a SQLSTATE (lib/pq's
// *pq.Error); matching the interface keeps the driver out of this package.
type sqlStater interface{ SQLState() string }

// Classify turns any error into a fault. A *Error anywhere in the chain wins;
// otherwise the cause decides: deadlines are 504, an unreachable or
// restarting database is 503, a missing key is 404, everything else 500.
func Classify(err error) *Error {
	if err == nil {
		return nil
	}
	var f *Error
	if errors.As(err, &f) {
		return f
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		// Canceled means the client went away; nobody reads the answer,
		// and the access line and the metrics count it as 499, not as a
		// server's 504 (rest's observe).
		return E(DeadlineExceeded, MsgTimeout, err)
	}
	var cf classified
	if errors.As(err, &cf) {
		f := cf.Fault()
		f.Cause = err
		return f
	}
	var nf notFounder
	if errors.As(err, &nf) && nf.NotFound() {
		return E(NotFound, "not found", err)
	}
	var st sqlStater
	if errors.As(err, &st) {
		return classifySQLState(st.SQLState(), err)
	}
	if unreachable(err) {
		return E(Unavailable, MsgDatabaseDown, err)
	}
	return E(Internal, MsgUnexpected, err)
}

func classifySQLState(state string, err error) *Error {
	switch {
	case state == "57014": // query_canceled: statement_timeout or our own cancel at the deadline
		return E(DeadlineExceeded, MsgTimeout, err)
	case state == "55P03": // lock_not_available (lock_timeout)
		return E(DeadlineExceeded, MsgTimeout, err)
	case len(state) == 5 && state[:2] == "08", // connection exception
		state == "57P01", state == "57P02", state == "57P03", // shutdown, crash, starting up
		state == "53300", // too_many_connections
		state == "3D000": // the database itself is missing
		return E(Unavailable, MsgDatabaseDown, err)
	case state == "3F000", state == "42P01": // schema or table missing: nothing imported yet
		return E(Unavailable, MsgNoSnapshot, err)
	}
	return E(Internal, MsgUnexpected, err)
}

// unreachable reports whether err means the database could not be talked to.
func unreachable(err error) bool {
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.Is(err, driver.ErrBadConn),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed),
		errors.As(err, &oe), errors.As(err, &ne):
		return true
	}
	return false
}
