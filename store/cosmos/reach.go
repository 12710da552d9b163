package cosmos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/agentmemory/agentmemory/internal/reach"
)

// ErrUnreachable reports an account endpoint that refused the connection
// or whose host name does not resolve: Open, and any later call, fails
// with it at once, naming the endpoint and the cause, instead of after the
// SDK's retries (about a minute, ending in "failed to retrieve account
// properties: context deadline exceeded").
var ErrUnreachable = errors.New("cosmos: account unreachable")

// probeTimeout bounds Open's connection to the account.
const probeTimeout = 4 * time.Second

// probe connects to the account's host and port, so that an unreachable
// endpoint fails Open within seconds with its cause. Behind a proxy (the
// environment's HTTPS_PROXY or HTTP_PROXY for the endpoint) the SDK talks
// to the proxy, not the host, and nothing is probed.
func probe(ctx context.Context, endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("cosmos: Config.Endpoint %q: want an absolute https URL", endpoint)
	}
	if p, err := http.ProxyFromEnvironment(&http.Request{URL: u}); err != nil || p != nil {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	switch {
	case err == nil:
		return conn.Close()
	case reach.Unreachable(err):
		return fmt.Errorf("%w: %s: %w", ErrUnreachable, endpoint, err)
	}
	return fmt.Errorf("cosmos: connect to %s: %w", endpoint, err)
}

// failFast is the pipeline policy closest to the transport: an attempt
// that finds the endpoint unreachable fails with an error that azcore's
// retry policy does not retry (it has the NonRetriable method azcore looks
// for) and that names the endpoint and the cause.
type failFast struct{ endpoint string }

func (p failFast) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if reach.Unreachable(err) {
		return nil, &unreachableError{endpoint: p.endpoint, err: err}
	}
	return resp, err
}

// withFailFast returns the per-retry policies with failFast last, without
// changing the caller's slice.
func withFailFast(policies []policy.Policy, endpoint string) []policy.Policy {
	return append(slices.Clip(policies), failFast{endpoint})
}

type unreachableError struct {
	endpoint string
	err      error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("%v: %s: %v", ErrUnreachable, e.endpoint, e.err)
}

// Unwrap gives ErrUnreachable only: the cause is in the message, but a
// connection error in the chain would make azcosmos's own retry policy
// retry the request (three more attempts a second apart, then another
// region's endpoint: a refused connection or an unknown host is a
// configuration or an outage of the account, not of one region).
func (e *unreachableError) Unwrap() error { return ErrUnreachable }

// NonRetriable marks the error as not worth retrying for azcore's retry
// policy (its errorinfo.NonRetriable interface).
func (e *unreachableError) NonRetriable() {}
