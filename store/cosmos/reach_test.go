package cosmos

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// An endpoint with nothing listening, or a host name that does not
// resolve, fails Open at once (under a 5 s deadline: an error other than
// ErrUnreachable, such as the deadline, fails the test), naming the
// endpoint and the cause; provisioning would otherwise retry for a minute.
func TestOpenFailsFastOnAnUnreachableEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := "https://" + l.Addr().String() + "/"
	require.NoError(t, l.Close())
	const unknown = "cosmos.agentmemory.invalid"
	cases := []struct{ endpoint, cause string }{{closed, "connection refused"}}
	var dnsErr *net.DNSError
	if _, err := net.DefaultResolver.LookupHost(context.Background(), unknown); errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		cases = append(cases, struct{ endpoint, cause string }{"https://" + unknown + ":443/", "no such host"})
	} else {
		t.Logf("this machine's resolver does not answer %s with \"no such host\" (%v): unknown host not tested", unknown, err)
	}
	for _, c := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := Open(ctx, Config{Endpoint: c.endpoint, Key: fakeKey, Dimensions: 3, CreateIfNotExists: true})
		cancel()
		require.ErrorIs(t, err, ErrUnreachable, c.endpoint)
		assert.ErrorContains(t, err, c.endpoint)
		assert.ErrorContains(t, err, c.cause)
	}
}

// An account that goes away after Open fails each call at once too
// (azcore would retry a refused connection for about a minute), before
// and after the client has read the account's properties.
func TestCallsFailFastWhenTheEndpointGoesAway(t *testing.T) {
	for _, populated := range []bool{false, true} {
		f := newFake(t, nil)
		s := f.open(t, func(c *Config) { c.ClientOptions = nil }) // the default retries
		if populated {
			_, err := s.ListSessions(t.Context(), "u", store.SessionFilter{})
			require.NoError(t, err)
		}
		f.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		start := time.Now()
		_, err := s.GetSession(ctx, "u", "s")
		cancel()
		t.Logf("populated %v: %v: %v", populated, time.Since(start), err)
		require.ErrorIs(t, err, ErrUnreachable, "account properties read before: %v", populated)
		assert.ErrorContains(t, err, f.srv.URL)
		assert.ErrorContains(t, err, "connection refused")
	}
}
