package reach

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnreachableCancelsTheGuardedCall(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	_, refused := net.Dial("tcp", addr)
	require.Error(t, refused)
	unknown := &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}
	other := errors.New("connection reset by peer")

	assert.True(t, Unreachable(refused))
	assert.True(t, Unreachable(unknown))
	assert.False(t, Unreachable(other))
	assert.False(t, Unreachable(&net.DNSError{Err: "i/o timeout", Name: "x.example", IsTimeout: true}))
	assert.False(t, Unreachable(nil))

	ctx, done := Guard(context.Background())
	Report(ctx, other)
	assert.NoError(t, ctx.Err(), "another failure leaves the call to its retries")
	assert.NoError(t, Err(ctx))
	Report(ctx, refused)
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	assert.Equal(t, refused, Err(ctx))
	done()
	assert.Equal(t, refused, Err(ctx), "done keeps the cause")

	Report(context.Background(), refused) // outside Guard: nothing to cancel, no panic
	ctx, done = Guard(context.Background())
	done()
	assert.NoError(t, Err(ctx), "a call that ended normally has no cause")
}
