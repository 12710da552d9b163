package lease_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/lease"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// open returns two handles on one SQLite file: two processes.
func open(t *testing.T) (*sqlite.Store, *sqlite.Store) {
	t.Helper()
	path := sqlitetest.NewFile(t)
	a, err := sqlite.Open(t.Context(), path, sqlite.Config{Dimensions: 8})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	b, err := sqlite.Open(t.Context(), path, sqlite.Config{Dimensions: 8})
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return a, b
}

func TestHeldUntilReleased(t *testing.T) {
	a, b := open(t)
	release, err := lease.Acquire(t.Context(), a, "u1", "proc-a", lease.Config{Poll: time.Millisecond})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	_, err = lease.Acquire(ctx, b, "u1", "proc-b", lease.Config{Poll: time.Millisecond})
	require.ErrorIs(t, err, lease.ErrHeld)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "proc-a")

	other, err := lease.Acquire(t.Context(), b, "u2", "proc-b", lease.Config{})
	require.NoError(t, err, "another user's lease is another lease")
	other()

	release()
	releaseB, err := lease.Acquire(t.Context(), b, "u1", "proc-b", lease.Config{})
	require.NoError(t, err)
	st, err := a.GetUserState(t.Context(), "u1")
	require.NoError(t, err)
	assert.Equal(t, "proc-b", st.LeaseOwner)
	releaseB()
	st, err = a.GetUserState(t.Context(), "u1")
	require.NoError(t, err)
	assert.Empty(t, st.LeaseOwner)
}

func TestExpiredLeaseIsTakenOver(t *testing.T) {
	a, b := open(t)
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	releaseA, err := lease.Acquire(t.Context(), a, "u1", "proc-a", lease.Config{TTL: time.Minute, Now: clock})
	require.NoError(t, err)
	// proc-a dies holding it; a minute later proc-b takes over.
	mu.Lock()
	now = now.Add(61 * time.Second)
	mu.Unlock()
	releaseB, err := lease.Acquire(t.Context(), b, "u1", "proc-b", lease.Config{TTL: time.Minute, Now: clock})
	require.NoError(t, err)
	releaseA() // a late release by the old holder leaves the new lease alone
	st, err := b.GetUserState(t.Context(), "u1")
	require.NoError(t, err)
	assert.Equal(t, "proc-b", st.LeaseOwner)
	releaseB()
}

func TestOneHolderAtATime(t *testing.T) {
	a, b := open(t)
	var holders, most atomic.Int32
	var wg sync.WaitGroup
	for w := range 6 {
		st := []*sqlite.Store{a, b}[w%2]
		wg.Go(func() {
			for range 5 {
				release, err := lease.Acquire(t.Context(), st, "u1", fmt.Sprintf("proc-%d", w), lease.Config{Poll: time.Millisecond})
				if !assert.NoError(t, err) {
					return
				}
				n := holders.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(time.Millisecond)
				holders.Add(-1)
				release()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(1), most.Load(), "never two holders at once")
}
