package retrieval

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// A search given up by its caller (the mini-agent answered first, the
// budget ran out) reads no follow-on chunk and logs no failure: the
// cancelled reads are the caller's doing, not memory's.
func TestFollowOnsOfAnAbandonedSearchLogNothing(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlitetest.NewFile(t), sqlite.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	first := &store.Interaction{ID: store.ChunkID("s", 1), SessionID: "s", FirstTurn: 1, LastTurn: 2, TurnIDs: []string{"a", "b"}, Content: "user: the Lisbon trip"}
	next := &store.Interaction{ID: store.ChunkID("s", 3), SessionID: "s", FirstTurn: 3, LastTurn: 4, TurnIDs: []string{"c", "d"}, Content: "user: three nights in Alfama"}
	require.NoError(t, st.PutInteraction(ctx, "u", first))
	require.NoError(t, st.PutInteraction(ctx, "u", next))
	var logs bytes.Buffer
	emb, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	r, err := New(st, Config{Embedder: emb, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)

	lead := &rankCandidate{doc: first, score: 1}
	got := r.followOns(ctx, "u", []*rankCandidate{lead}, map[string]*rankCandidate{first.ID: lead}, 5)
	require.Len(t, got, 2, "a live search reads the follow-on")

	done, cancel := context.WithCancel(ctx)
	cancel()
	got = r.followOns(done, "u", []*rankCandidate{lead}, map[string]*rankCandidate{first.ID: lead}, 5)
	assert.Len(t, got, 1)
	assert.Empty(t, logs.String())
}
