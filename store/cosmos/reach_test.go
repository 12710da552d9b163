package cosmos

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
