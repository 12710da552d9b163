package cosmos

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// delta returns the requests per kind made between two Stats snapshots.
func delta(before, after Stats) map[Op]int64 {
	out := map[Op]int64{}
	for op, s := range after {
		if n := s.Requests - before[op].Requests; n > 0 {
			out[op] = n
		}
	}
	return out
}

// TestRoundTripsPerInvokingAndPrune counts the Cosmos requests of the hot
// path: a warm Invoking reads nothing (the session's memory is held in
// process), a turn is two requests (a query for its id and the next
// number, then a create-only write of its own item: no session document is
// rewritten), and a prune reads the session's newer turns and writes twice
// (the interaction document and the session state).
func TestRoundTripsPerInvokingAndPrune(t *testing.T) {
	ctx := t.Context()
	s := openLauncher(t, nil)
	model, emb := offlineModels(t)

	// No sweep: its query at the provider's start would be counted with
	// the hot path's when it comes late (it did, under CI's load).
	mem, err := provider.New(s, provider.Config{Chat: model, Embedder: emb, KeeperConfig: keeper.Config{K: 2}, SweepInterval: -1})
	require.NoError(t, err)
	defer mem.Close(ctx)
	a := agent.New(model, agent.Config{ContextProviders: []agent.ContextProvider{mem}})
	sess, err := a.NewUserSession("alice")
	require.NoError(t, err)
	require.NoError(t, mem.StartSession(ctx, sess))

	before := s.Stats()
	_, err = mem.Invoking(ctx, &agent.InvokingContext{Agent: a, Session: sess, Messages: []agent.Message{agent.UserText("hello")}})
	require.NoError(t, err)
	assert.Empty(t, delta(before, s.Stats()), "a warm Invoking makes no request")

	before = s.Stats()
	require.NoError(t, mem.Record(ctx, sess, agent.UserText("I save $500 a month.")))
	assert.Equal(t, map[Op]int64{OpQuery: 1, OpCreate: 1}, delta(before, s.Stats()), "a turn is one query and one create")

	k, err := keeper.New(s, keeper.Config{Mini: model, Embedder: emb, K: 2})
	require.NoError(t, err)
	ks, err := k.Open(ctx, "alice", "direct-prune")
	require.NoError(t, err)
	for _, text := range []string{"My 401k is at Acme.", "I want to retire at 60."} {
		_, err := ks.AddTurn(ctx, store.Turn{Messages: []store.TurnMessage{{ID: text, Role: "user", Content: text}}})
		require.NoError(t, err)
	}
	before = s.Stats()
	res, err := ks.Prune(ctx)
	require.NoError(t, err)
	require.Len(t, res, 1)
	d := delta(before, s.Stats())
	assert.Equal(t, map[Op]int64{OpQuery: 1, OpUpsert: 1, OpReplace: 1}, d, "a prune reads newer turns, writes the interaction and the session state, nothing else")
	t.Logf("requests: warm Invoking 0, turn 2, prune %d", d[OpQuery]+d[OpUpsert]+d[OpReplace])
}
