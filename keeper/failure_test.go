package keeper_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/affine"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/llm/openai"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// A real model over HTTP that misbehaves: the keeper must store what it can
// and lose nothing.
func TestModelFailuresDuringPrune(t *testing.T) {
	ctx := context.Background()
	srv := fakeopenai.New(t)
	mini, err := openai.NewChat(openai.Config{BaseURL: srv.URL(), ChatModel: "mini", MaxRetries: -1})
	require.NoError(t, err)
	lex, err := lexical.New(lexical.Config{Dimensions: dims})
	require.NoError(t, err)
	emb, err := affine.New(lex, 0) // not lexical: its vectors are stored
	require.NoError(t, err)
	st, err := sqlite.Open(ctx, sqlitetest.NewFile(t), sqlite.Config{Dimensions: emb.Dimensions()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	k, err := keeper.New(st, keeper.Config{Mini: mini, Embedder: emb, K: 2, ActiveTurns: 1, Now: func() time.Time { return time.Unix(1e9, 0) }})
	require.NoError(t, err)
	s, err := k.Open(ctx, "u1", "s1")
	require.NoError(t, err)
	addTurns(t, s, 1, 2)

	// The model is down: the prune fails and nothing is recorded as pruned.
	srv.QueueError(503, "overloaded")
	_, err = s.Prune(ctx)
	require.Error(t, err)
	assert.Equal(t, 0, s.State().PrunedThrough)
	assert.Equal(t, 2, s.Pending())

	// Metadata that is not JSON, twice: stored without it, flagged; the
	// cumulative summary still comes.
	srv.QueueChat(
		fakeopenai.Text("Sure! Here is the metadata you asked for."),
		fakeopenai.Text(`{"summary": 42, "mentioned_topics": "`),
		fakeopenai.Text("The client plans a 401k rollover."),
	)
	res, err := s.Prune(ctx)
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.True(t, res[0].MetadataPending)
	pending, err := st.ListInteractions(ctx, "u1", store.InteractionFilter{MetadataPending: true})
	require.NoError(t, err)
	require.Len(t, pending, 1)
	assert.Empty(t, pending[0].Summary)
	assert.Len(t, pending[0].ContentVector, emb.Dimensions(), "still searchable by content")
	assert.Equal(t, "The client plans a 401k rollover.", s.State().CumulativeSummary)

	// At session end the flagged metadata is asked for again and completed.
	srv.QueueChat(
		fakeopenai.JSON(map[string]any{"summary": "Rollover planning.", "mentioned_topics": []string{"rollover"}, "entities": []string{"401k"}}),
		fakeopenai.JSON(map[string]any{"summary": "A session about a rollover.", "key_topics": []string{"rollover"}}),
	)
	end, err := s.End(ctx)
	require.NoError(t, err)
	assert.Equal(t, "A session about a rollover.", end.Session.Summary)
	fixed, err := st.GetInteraction(ctx, "u1", res[0].Interaction.ID)
	require.NoError(t, err)
	assert.False(t, fixed.MetadataPending)
	assert.Equal(t, "Rollover planning.", fixed.Summary)
	assert.Equal(t, []string{"401k"}, fixed.Metadata.Entities)
	assert.Len(t, fixed.SummaryVector, emb.Dimensions())
	assert.Contains(t, srv.ChatRequests()[4].LastUserText(), "user: Turn 1.", "the retry re-sent the stored conversation")

	// The metadata request fenced the conversation as data.
	reqs := srv.ChatRequests()
	require.GreaterOrEqual(t, len(reqs), 2)
	assert.Contains(t, reqs[1].SystemText(), "agentmemory:prompt=interaction_metadata")
	assert.Contains(t, reqs[1].LastUserText(), "<conversation>\nuser: Turn 1.")
}
