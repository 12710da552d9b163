package memoryservice

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// clock is a settable time source, starting at the real time.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return time.Now().Add(c.off) }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

// expiredRecords returns the deletion-log records of userID with the
// reason ttl_expired.
func expiredRecords(t *testing.T, st store.Store, userID string) int {
	t.Helper()
	recs, err := st.(store.DeletionLog).ListDeletions(context.Background(), 0, 0)
	require.NoError(t, err)
	n := 0
	for _, r := range recs {
		if r.Reason == provider.ReasonExpired && r.UserID == userID {
			n++
		}
	}
	return n
}

// default_ttl_seconds: once a scope's memories are older than it, list,
// get and search never return them, even before the sweep; the sweep then
// deletes them, logged as ttl_expired; a store without a TTL and newer
// memories are untouched.
func TestDefaultTTLExpiresMemories(t *testing.T) {
	clk := &clock{}
	s := start(t, dbPath(t), Config{Now: clk.Now, SweepInterval: time.Hour})
	s.createStore("brief", map[string]any{"default_ttl_seconds": 3600})
	s.createStore("lasting", nil)
	for _, name := range []string{"brief", "lasting"} {
		operations(t, s.wait(name, s.update(name, "alice", 0, "I prefer dark roast coffee in the morning.")))
	}
	before := s.list("brief", "alice", "")
	require.NotEmpty(t, before)
	assert.Contains(t, contents(s.search("brief", "alice", "coffee")), "coffee")

	clk.Add(2 * time.Hour)
	assert.Empty(t, s.list("brief", "alice", ""), "expired: not listed")
	assert.Empty(t, s.search("brief", "alice", "coffee"), "expired: not found")
	code, out, _ := s.do("GET", "/memory_stores/brief/items/"+before[0]["memory_id"].(string), nil)
	assert.Equal(t, http.StatusNotFound, code, "expired: not got: %v", out)
	assert.Contains(t, contents(s.list("lasting", "alice", "")), "coffee", "no TTL, no expiry")
	assert.Zero(t, expiredRecords(t, s.st, UserID("brief", "alice")), "hidden before the sweep, not yet deleted")

	// A memory written now is not expired.
	operations(t, s.wait("brief", s.update("brief", "alice", 0, "My sister Maya lives in Lisbon.")))
	assert.Contains(t, contents(s.search("brief", "alice", "Where does Maya live?")), "Lisbon")

	require.NoError(t, s.svc.sweep(context.Background()))
	assert.Equal(t, 1, expiredRecords(t, s.st, UserID("brief", "alice")), "the sweep's deletions, logged")
	ss, err := s.st.ListSessions(context.Background(), UserID("brief", "alice"), store.SessionFilter{})
	require.NoError(t, err)
	require.Len(t, ss, 1, "the old session and its turns are deleted, the new one kept")
	turns, err := s.st.ListTurns(context.Background(), UserID("brief", "alice"), ss[0].ID, 0)
	require.NoError(t, err)
	for _, tu := range turns {
		for _, m := range tu.Messages {
			assert.NotContains(t, m.Content, "coffee")
		}
	}
	assert.Contains(t, contents(s.list("brief", "alice", "")), "Lisbon")
	assert.Zero(t, expiredRecords(t, s.st, UserID("lasting", "alice")))
	assert.Contains(t, contents(s.list("lasting", "alice", "")), "coffee")

	// Through MCP too: the tools read only what has not expired.
	clk.Add(2 * time.Hour)
	cs, err := mcpSession(t, s, "", "brief", "alice")
	require.NoError(t, err)
	defer cs.Close()
	assert.NotContains(t, callText(t, cs, "search_memory", map[string]any{"query": "Maya Lisbon"}), "Lisbon")
}

// The sweep runs by itself every SweepInterval.
func TestSweepRunsPeriodically(t *testing.T) {
	clk := &clock{}
	s := start(t, dbPath(t), Config{Now: clk.Now, SweepInterval: 20 * time.Millisecond})
	s.createStore("brief", map[string]any{"default_ttl_seconds": 60})
	operations(t, s.wait("brief", s.update("brief", "bob", 0, "I prefer tea.")))
	clk.Add(time.Hour)
	require.Eventually(t, func() bool { return expiredRecords(t, s.st, UserID("brief", "bob")) > 0 }, 10*time.Second, 20*time.Millisecond)
	ins, err := s.st.ListInsights(context.Background(), UserID("brief", "bob"), store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	assert.Empty(t, ins)
}

// An update still queued when its turns expire: the sweep removes them
// (rather than let the update draw fresh memories from expired turns), and
// the update then completes with nothing to create. Its run leaves an empty
// session document (no turn, no summary, no item), which the next sweep
// after the TTL removes.
func TestSweepWhileAnUpdateIsQueued(t *testing.T) {
	clk := &clock{}
	s := start(t, dbPath(t), Config{Now: clk.Now, SweepInterval: time.Hour})
	s.createStore("brief", map[string]any{"default_ttl_seconds": 60})
	id := s.update("brief", "cid", 1, "I prefer green tea.")
	clk.Add(time.Hour)
	require.NoError(t, s.svc.sweep(context.Background()))
	assert.Equal(t, 1, expiredRecords(t, s.st, UserID("brief", "cid")), "the queued update's turns, expired, are deleted")
	out := s.wait("brief", id)
	assert.Empty(t, operations(t, out))
	assert.Empty(t, s.list("brief", "cid", ""))
	ss, err := s.st.ListSessions(context.Background(), UserID("brief", "cid"), store.SessionFilter{})
	require.NoError(t, err)
	for _, d := range ss {
		assert.Empty(t, d.Summary)
		turns, err := s.st.ListTurns(context.Background(), UserID("brief", "cid"), d.ID, 0)
		require.NoError(t, err)
		assert.Empty(t, turns)
	}
	clk.Add(2 * time.Minute)
	require.NoError(t, s.svc.sweep(context.Background()))
	ss, err = s.st.ListSessions(context.Background(), UserID("brief", "cid"), store.SessionFilter{})
	require.NoError(t, err)
	assert.Empty(t, ss)
}
