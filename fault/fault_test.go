package fault_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/lib/pq"

	"github.com/cnpjgraph/cnpjgraph/fault"
)

type notFound struct{}

func (notFound) Error() string  { return "row missing" }
func (notFound) NotFound() bool { return true }

func TestClassify(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("query offices: %w", err) }
	cases := []struct {
		err     error
		status  int
		code    string
		message string
	}{
		{fault.Invalid("taxId must be a valid CNPJ"), 400, "BAD_REQUEST", "request validation failed"},
		{wrap(fault.E(fault.NotFound, fault.MsgTaxIDNotFound, nil)), 404, "NOT_FOUND", "tax id not registered at revenue service"},
		{wrap(notFound{}), 404, "NOT_FOUND", "not found"},
		{wrap(context.DeadlineExceeded), 504, "GATEWAY_TIMEOUT", "failed to fulfill request within timeout"},
		{wrap(context.Canceled), 504, "GATEWAY_TIMEOUT", "failed to fulfill request within timeout"},
		{wrap(&pq.Error{Code: "57014"}), 504, "GATEWAY_TIMEOUT", "failed to fulfill request within timeout"},
		{wrap(&pq.Error{Code: "55P03"}), 504, "GATEWAY_TIMEOUT", "failed to fulfill request within timeout"},
		{wrap(&pq.Error{Code: "57P01"}), 503, "SERVICE_UNAVAILABLE", "database is unavailable"},
		{wrap(&pq.Error{Code: "57P03"}), 503, "SERVICE_UNAVAILABLE", "database is unavailable"},
		{wrap(&pq.Error{Code: "08006"}), 503, "SERVICE_UNAVAILABLE", "database is unavailable"},
		{wrap(&pq.Error{Code: "53300"}), 503, "SERVICE_UNAVAILABLE", "database is unavailable"},
		{wrap(&pq.Error{Code: "42P01"}), 503, "SERVICE_UNAVAILABLE", "registry data has not been imported yet"},
		{wrap(&pq.Error{Code: "42703"}), 500, "INTERNAL_SERVER_ERROR", "unexpected error"},
		{wrap(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), 503, "SERVICE_UNAVAILABLE", "database is unavailable"},
		{wrap(driver.ErrBadConn), 503, "SERVICE_UNAVAILABLE", "database is unavailable"},
		{wrap(io.ErrUnexpectedEOF), 503, "SERVICE_UNAVAILABLE", "database is unavailable"},
		{errors.New("boom"), 500, "INTERNAL_SERVER_ERROR", "unexpected error"},
		{fault.E(fault.Unavailable, fault.MsgOffline, nil), 503, "SERVICE_UNAVAILABLE", "rfb data fetching is offline"},
		{fault.E(fault.Unauthenticated, fault.MsgMissingAuth, nil), 401, "UNAUTHENTICATED", "missing authorization"},
		{fault.E(fault.PermissionDenied, fault.MsgPrivileges, nil), 403, "FORBIDDEN", "not enough privileges"},
		{wrap(fault.E(fault.TooLarge, fault.MsgBodyTooLarge, nil)), 413, "PAYLOAD_TOO_LARGE", "request body too large"},
		{fault.E(fault.ResourceExhausted, fault.MsgRateLimit, nil), 429, "TOO_MANY_REQUESTS", "rate limit exceeded"},
	}
	for _, c := range cases {
		f := fault.Classify(c.err)
		if f.Status() != c.status || f.Code() != c.code || f.Message != c.message {
			t.Errorf("%v: %d %s %q, want %d %s %q", c.err, f.Status(), f.Code(), f.Message, c.status, c.code, c.message)
		}
	}
	if fault.Classify(nil) != nil {
		t.Error("nil error classified")
	}
}

// TestCauseKept: the internal cause stays reachable for logs but is not
// the public message.
func TestCauseKept(t *testing.T) {
	cause := errors.New(`pq: relation "cnpj.offices" does not exist`)
	f := fault.Classify(fmt.Errorf("query: %w", cause))
	if !errors.Is(f, cause) || f.Message != fault.MsgUnexpected {
		t.Errorf("%+v", f)
	}
}

func TestKindsAppendOnly(t *testing.T) {
	// Published values: reordering the kinds would change them.
	want := map[fault.Kind]string{0: "internal", 1: "not_found", 2: "invalid_argument", 3: "unauthenticated",
		4: "permission_denied", 5: "resource_exhausted", 6: "unavailable", 7: "deadline_exceeded"}
	for k, name := range want {
		if k.String() != name {
			t.Errorf("kind %d is %s, want %s", k, k, name)
		}
	}
}
