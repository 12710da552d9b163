// Package reach tells a server that cannot be reached — the connection
// refused, or the host name unknown — from other network failures, and
// lets the attempt that meets one end its SDK's retry loop at once.
//
// SDKs (openai-go, azcore, azcosmos) retry every connection error with
// backoff, which is right for a reset or a timeout but turns a wrong port
// or host name into tens of seconds of waiting before an error that names
// neither. A call made under Guard's context, whose attempts are reported
// with Report (from an SDK middleware or pipeline policy), is cancelled by
// the first unreachable attempt; the retry loops stop on the cancelled
// context, and Err returns the attempt's error for the caller to report.
package reach

import (
	"context"
	"errors"
	"net"
	"syscall"
)

// Unreachable reports whether err is a refused connection or a host name
// that does not resolve.
func Unreachable(err error) bool {
	var dns *net.DNSError
	return err != nil && (errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &dns) && dns.IsNotFound))
}

type guardKey struct{}

// cause carries an unreachable attempt's error as the context's cause.
type cause struct{ err error }

func (c *cause) Error() string { return c.err.Error() }

// Guard returns a context for one call whose attempts Report watches, and
// its cancel function, which the caller must call when the call returns.
func Guard(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	ctx = context.WithValue(ctx, guardKey{}, cancel)
	return ctx, func() { cancel(nil) }
}

// Report cancels the call's guarded context when err, the error of one of
// its attempts, says the server is unreachable. Outside Guard it does
// nothing.
func Report(ctx context.Context, err error) {
	if !Unreachable(err) {
		return
	}
	if cancel, ok := ctx.Value(guardKey{}).(context.CancelCauseFunc); ok {
		cancel(&cause{err})
	}
}

// Err returns the error of the attempt that found the server unreachable
// during the call guarded by ctx, or nil.
func Err(ctx context.Context) error {
	var c *cause
	if errors.As(context.Cause(ctx), &c) {
		return c.err
	}
	return nil
}
