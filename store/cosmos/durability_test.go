package cosmos

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// TestConcurrentProvidersOnOneSession: four providers (four replicas, say)
// record one session at once on the Cosmos-protocol server. No turn is
// lost to contention, and once the session ends each turn is in exactly
// one interaction.
func TestConcurrentProvidersOnOneSession(t *testing.T) {
	ctx := context.Background()
	s := openLauncher(t, nil)
	model, emb := offlineModels(t)
	const writers, each = 4, 40
	mems := make([]*provider.MemoryProvider, writers)
	for i := range mems {
		var err error
		mems[i], err = provider.New(s, provider.Config{Chat: model, Embedder: emb, Reflection: provider.ReflectManual})
		require.NoError(t, err)
		defer mems[i].Close(ctx)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w, mem := range mems {
		wg.Go(func() {
			sess, err := agent.NewSession("shared", "alice")
			if err != nil {
				errs <- err
				return
			}
			for i := range each {
				if err := mem.Record(ctx, sess, agent.UserText(fmt.Sprintf("writer %d says %d", w, i))); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, mem := range mems {
		require.NoError(t, mem.Flush(ctx))
	}
	turns, err := s.ListTurns(ctx, "alice", "shared", 0)
	require.NoError(t, err)
	require.Len(t, turns, writers*each, "no turn lost")
	sess, err := agent.NewSession("shared", "alice")
	require.NoError(t, err)
	_, err = mems[2].EndSession(ctx, sess)
	require.NoError(t, err)

	docs, err := s.ListInteractions(ctx, "alice", store.InteractionFilter{SessionID: "shared"})
	require.NoError(t, err)
	covered := map[int]int{}
	for _, d := range docs {
		for seq := d.FirstTurn; seq <= d.LastTurn; seq++ {
			covered[seq]++
		}
	}
	for seq := 1; seq <= writers*each; seq++ {
		assert.Equal(t, 1, covered[seq], "turn %d is in exactly one interaction", seq)
	}
	sessions, err := s.ListSessions(ctx, "alice", store.SessionFilter{})
	require.NoError(t, err)
	assert.Len(t, sessions, 1, "turn items are not listed as sessions")
}

// TestDeleteUserEmptiesThePartition: after DeleteUser not one item of the
// user's partition is left in any container — documents, turns and the
// user state alike — and the other user's are all there.
func TestDeleteUserEmptiesThePartition(t *testing.T) {
	ctx := context.Background()
	s := openLauncher(t, nil)
	for _, user := range []string{"alice", "bob"} {
		for i := range 3 {
			id := fmt.Sprintf("%s-%d", user, i)
			require.NoError(t, s.PutInteraction(ctx, user, &store.Interaction{ID: "int-" + id, SessionID: "s1", FirstTurn: 1, LastTurn: 1, Content: "plan " + id}))
			require.NoError(t, s.PutInsight(ctx, user, &store.Insight{ID: "ins-" + id, InsightType: store.InsightSession, InsightText: "plan " + id}))
			require.NoError(t, s.AppendTurn(ctx, user, &store.Turn{ID: "turn-" + id, SessionID: "s1", Messages: []store.TurnMessage{{ID: "m-" + id, Role: "user", Content: "plan " + id}}}))
		}
		require.NoError(t, s.PutSession(ctx, user, &store.Session{ID: "s1", Summary: "plans"}))
		require.NoError(t, s.PutUserState(ctx, user, &store.UserState{SinceProfile: 1}))
	}
	count := func(user string) int {
		n := 0
		for _, kind := range store.Kinds {
			items, err := s.query(ctx, kind, user, "SELECT VALUE COUNT(1) FROM c", nil)
			require.NoError(t, err)
			for _, b := range items {
				var c int
				require.NoError(t, json.Unmarshal(b, &c))
				n += c
			}
		}
		return n
	}
	require.Equal(t, 3+3+3+1+1, count("alice"))
	require.NoError(t, s.DeleteUser(ctx, "alice"))
	assert.Zero(t, count("alice"), "every item of the partition is gone")
	assert.Equal(t, 3+3+3+1+1, count("bob"))
}
