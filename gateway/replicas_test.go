package gateway_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/gateway"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/store"
)

// Two gateway replicas on one store, a user's requests spread across
// them: a session in use through one is not ended by the other's idle
// timer, and ends once, idle; after it, both replicas go on in the same
// next session.
func TestTwoReplicasAgreeOnTheSessionAndItsIdleEnd(t *testing.T) {
	ctx := context.Background()
	path := sqlitetest.NewFile(t)
	const idle = time.Second
	tune := func(c *gateway.Config) { c.IdleTimeout = idle }
	one, two := newRigOn(t, path, tune), newRigOn(t, path, tune)
	replicas := []*rig{one, two}
	user := one.mem.UserID("alice")
	active := func() []*store.Session {
		t.Helper()
		ss, err := one.st.ListSessions(ctx, user, store.SessionFilter{Status: store.SessionActive})
		require.NoError(t, err)
		return ss
	}

	// The current session (no session named): a request through one,
	// then through two every 200 ms, until well past one's timer.
	for i := range 7 {
		replicas[min(i, 1)].ask("alice", "", fmt.Sprintf("Note %d: I am planning a trip to Lisbon.", i), fakeopenai.Text("Noted."))
		time.Sleep(idle / 5)
	}
	ss := active()
	require.Len(t, ss, 1, "one session, in use through both replicas: not ended by either's timer")
	first := ss[0].ID
	turns, err := one.st.ListTurns(ctx, user, first, 0)
	require.NoError(t, err)
	assert.Len(t, turns, 7, "every request's turn is in it")

	require.Eventually(t, func() bool {
		d, err := one.st.GetSession(ctx, user, first)
		return err == nil && d.Status == store.SessionCompleted
	}, 10*time.Second, 20*time.Millisecond, "the session ends once idle")
	require.NoError(t, one.gw.Flush(ctx))
	require.NoError(t, two.gw.Flush(ctx))

	// After the end, both replicas begin the same next session.
	one.ask("alice", "", "I booked the flight to Lisbon.", fakeopenai.Text("Great."))
	two.ask("alice", "", "And a hotel in Alfama.", fakeopenai.Text("Lovely."))
	ss = active()
	require.Len(t, ss, 1, "both replicas go on in one next session")
	assert.NotEqual(t, first, ss[0].ID)
	turns, err = one.st.ListTurns(ctx, user, ss[0].ID, 0)
	require.NoError(t, err)
	assert.Len(t, turns, 2)
}
