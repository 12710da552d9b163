package cosmos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/agentmemory/agentmemory/internal/reach"
)

// ErrUnreachable reports an account endpoint that refused the connection
// or whose host name does not resolve: Open fails with it at once, naming
// the endpoint and the cause, instead of after the SDK's retries (about a
// minute, ending in "context deadline exceeded").
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
