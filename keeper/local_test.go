package keeper_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
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
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// localModel answers memory's prompts as a local model without JSON mode
// does: JSON in a code fence after a sentence, with trailing commas, and
// its reasoning in a <think> block first.
func localModel(r fakeopenai.Request) fakeopenai.Reply {
	switch sys := r.SystemText(); {
	case strings.HasPrefix(sys, prompts.Marker(prompts.NameInteractionMetadata)):
		return fakeopenai.Text("<think>Topics: rollover. {\"summary\": \"draft\"}</think>\nHere is the metadata:\n```json\n" +
			`{"summary": "The client plans a 401k rollover.", "mentioned_topics": ["rollover",], "entities": ["401k",],}` + "\n```")
	case strings.HasPrefix(sys, prompts.Marker(prompts.NameCumulativeSummary)):
		return fakeopenai.Text("<think>Short.</think>\nSummary: The client plans a 401k rollover.")
	case strings.HasPrefix(sys, prompts.Marker(prompts.NameSessionSummary)):
		return fakeopenai.Text("Sure!\n```json\n{\"summary\": \"A session about a rollover.\", \"key_topics\": [\"rollover\",],}\n```")
	}
	return fakeopenai.Text("?")
}

// A local server that refuses response_format (as LM Studio refuses
// json_object): the keeper's metadata, cumulative summary and session
// summary all come through, JSON mode is asked for once, and nothing is
// flagged for a retry.
func TestPruneAndEndOnAServerWithoutJSONMode(t *testing.T) {
	ctx := context.Background()
	srv := fakeopenai.New(t, fakeopenai.WithoutJSONMode())
	srv.HandleChat(localModel)
	mini, err := openai.NewChat(openai.Config{BaseURL: srv.URL(), ChatModel: "qwen3", MaxRetries: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	lex, err := lexical.New(lexical.Config{Dimensions: dims})
	require.NoError(t, err)
	emb, err := affine.New(lex, 0)
	require.NoError(t, err)
	st, err := sqlite.Open(ctx, sqlitetest.NewFile(t), sqlite.Config{Dimensions: emb.Dimensions()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	k, err := keeper.New(st, keeper.Config{Mini: mini, Embedder: emb, K: 2, ActiveTurns: 1, Now: func() time.Time { return time.Unix(1e9, 0) }})
	require.NoError(t, err)
	s, err := k.Open(ctx, "u1", "s1")
	require.NoError(t, err)
	addTurns(t, s, 1, 3)

	res, err := s.Prune(ctx)
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.False(t, res[0].MetadataPending)
	in, err := st.GetInteraction(ctx, "u1", res[0].Interaction.ID)
	require.NoError(t, err)
	assert.Equal(t, "The client plans a 401k rollover.", in.Summary)
	assert.Equal(t, []string{"rollover"}, in.Metadata.MentionedTopics)
	assert.Equal(t, []string{"401k"}, in.Metadata.Entities)
	assert.Equal(t, "The client plans a 401k rollover.", s.State().CumulativeSummary)

	end, err := s.End(ctx)
	require.NoError(t, err)
	assert.Equal(t, "A session about a rollover.", end.Session.Summary)
	assert.Equal(t, []string{"rollover"}, end.Session.KeyTopics)
	pending, err := st.ListInteractions(ctx, "u1", store.InteractionFilter{MetadataPending: true})
	require.NoError(t, err)
	assert.Empty(t, pending, "nothing left for a retry")

	// One request asked for JSON mode and was refused; every later JSON
	// prompt went without it, on the first try.
	var withFormat, jsonPrompts int
	for _, r := range srv.ChatRequests() {
		if len(r.Chat.ResponseFormat) > 0 {
			withFormat++
		}
		sys := r.SystemText()
		if strings.HasPrefix(sys, prompts.Marker(prompts.NameInteractionMetadata)) || strings.HasPrefix(sys, prompts.Marker(prompts.NameSessionSummary)) {
			jsonPrompts++
		}
	}
	assert.Equal(t, 1, withFormat)
	assert.Equal(t, 4, jsonPrompts, "metadata twice (refused, retried) and once for the last turn, the session summary once")
	assert.Contains(t, mini.Refused(), "response_format:json_object")
}
