package download

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// retryPolicy bounds the attempts at one request or file and spaces them.
type retryPolicy struct {
	retries       int           // failed attempts tolerated after the first
	minBackoff    time.Duration // wait after the first failure; doubled each time
	maxBackoff    time.Duration
	maxRetryAfter time.Duration // cap on a server's Retry-After
}

// transientError is a failure worth another attempt: a timeout, a reset or
// cut connection, a 5xx or 429. after is the server's Retry-After, if any.
type transientError struct {
	err   error
	after time.Duration
}

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

func transient(err error) error { return &transientError{err: err} }

// run calls try until it succeeds, fails for good, or has failed retries+1
// times in a row. An attempt that moved a download forward (progressed)
// starts the count again: a flaky server that cuts a large file every few
// hundred MiB must not exhaust the attempts.
func (p retryPolicy) run(ctx context.Context, what string, logf func(string, ...any), try func() (progressed bool, err error)) error {
	failures := 0
	for {
		progressed, err := try()
		if err == nil {
			return nil
		}
		var t *transientError
		if !errors.As(err, &t) || ctx.Err() != nil {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			return err
		}
		if progressed {
			failures = 0
		}
		failures++
		if failures > p.retries {
			return fmt.Errorf("giving up after %d failed attempts: %w", failures, err)
		}
		wait := p.backoff(failures)
		if t.after > 0 {
			wait = min(t.after, p.maxRetryAfter)
		}
		logf("%s: %v; retry %d of %d in %s", what, err, failures, p.retries, wait.Round(time.Millisecond))
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return context.Cause(ctx)
		case <-timer.C:
		}
	}
}

// backoff is exponential with jitter in [d/2, d), so parallel downloads
// that failed together do not come back together.
func (p retryPolicy) backoff(failures int) time.Duration {
	d := p.minBackoff
	for i := 1; i < failures && d < p.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.maxBackoff)
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2)
}

// statusError turns an unexpected HTTP status into an error, transient for
// 408, 429 and 5xx.
func statusError(what string, res *http.Response) error {
	err := fmt.Errorf("%s: server answered %s", what, res.Status)
	switch {
	case res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w (the share refused its token: check RFB_SHARE_URL)", err)
	case res.StatusCode == http.StatusNotFound && what == "PROPFIND":
		return fmt.Errorf("%w (no such share or folder: has the Receita moved the files? check RFB_SHARE_URL)", err)
	case res.StatusCode == http.StatusRequestTimeout || res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500:
		return &transientError{err: err, after: retryAfter(res.Header.Get("Retry-After"), time.Now())}
	}
	return err
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// networkError classifies an error of a request or of reading its body:
// certificate problems are for an operator to fix, the rest (timeouts,
// resets, refused or cut connections) is worth another attempt.
func networkError(err error) error {
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	if errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &record) {
		return err
	}
	return transient(err)
}
