package provider_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/llm/openai"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// localAnswer answers as a small local model without JSON mode: JSON in a
// code fence after a sentence, with trailing commas, and reasoning in a
// <think> block first.
func localAnswer(r fakeopenai.Request) fakeopenai.Reply {
	fenced := func(json string) fakeopenai.Reply {
		return fakeopenai.Text("<think>Let me see.</think>\nHere you go:\n```json\n" + json + "\n```")
	}
	switch sys := r.SystemText(); {
	case strings.HasPrefix(sys, "agentmemory:prompt=interaction_metadata"):
		return fenced(`{"summary": "The client will roll the Acme 401k into a Roth IRA.", "mentioned_topics": ["401k rollover",], "entities": ["Acme", "Roth IRA",],}`)
	case strings.HasPrefix(sys, "agentmemory:prompt=cumulative_summary"):
		return fakeopenai.Text("<think>Short.</think>\nSummary: The client will roll the Acme 401k into a Roth IRA.")
	case strings.HasPrefix(sys, "agentmemory:prompt=session_summary"):
		return fenced(`{"summary": "Decided to roll the Acme 401k into a Roth IRA.", "key_topics": ["401k rollover",],}`)
	case strings.HasPrefix(sys, "agentmemory:prompt=session_reflection"):
		return fenced(`{"reflection_flag": "insight", "insights": [{"category": "financial_goals", "insight_text": "The client rolls the Acme 401k into a Roth IRA.", "confidence": 0.9, "importance": "high",},],}`)
	case strings.HasPrefix(sys, "agentmemory:prompt="):
		return fakeopenai.Text("?")
	}
	return fakeopenai.Text("Noted.")
}

// Memory on a local server that refuses both JSON mode and tools, with
// automatic retrieval (the retrieve_user_facts tool needs tools): what a
// user tells in one session is stored, summarised, reflected on and
// brought back in the next, and JSON mode is asked for once per client.
func TestMemoryOnALocalServerWithoutJSONModeOrTools(t *testing.T) {
	ctx := context.Background()
	srv := fakeopenai.New(t, fakeopenai.WithEmbeddingDimensions(dims), fakeopenai.WithoutJSONMode(), fakeopenai.WithoutToolCalling())
	srv.HandleChat(localAnswer)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := openai.Config{BaseURL: srv.URL(), ChatModel: "qwen3", EmbeddingModel: "emb", EmbeddingModelDimensions: dims, MaxRetries: -1, Logger: quiet}
	chat, err := openai.NewChat(cfg)
	require.NoError(t, err)
	cfg.ChatModel = "qwen3-mini"
	mini, err := openai.NewChat(cfg)
	require.NoError(t, err)
	emb, err := openai.NewEmbedder(cfg)
	require.NoError(t, err)
	st, err := sqlite.Open(ctx, sqlitetest.NewFile(t), sqlite.Config{Dimensions: dims})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	mem, err := provider.New(st, provider.Config{UserID: "u1", Chat: chat, Mini: mini, Embedder: emb,
		Retrieval: provider.RetrievalAuto, RetryBackoff: time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { mem.Close(context.Background()) })
	a := agent.New(chat, agent.Config{Instructions: "You are a financial advisor.", ContextProviders: []agent.ContextProvider{mem}})

	first, err := a.NewUserSession("u1")
	require.NoError(t, err)
	_, err = a.Run(ctx, first, agent.UserText("I will roll my Acme 401k into a Roth IRA next month."))
	require.NoError(t, err)
	res, err := mem.EndSession(ctx, first)
	require.NoError(t, err)
	require.NoError(t, mem.Flush(ctx))
	require.Len(t, res.Pruned, 1)
	assert.False(t, res.Pruned[0].MetadataPending)
	assert.Equal(t, "The client will roll the Acme 401k into a Roth IRA.", res.Pruned[0].Interaction.Summary)
	assert.Equal(t, "Decided to roll the Acme 401k into a Roth IRA.", res.Session.Summary)
	ins, err := st.ListInsights(ctx, "u1", store.InsightFilter{})
	require.NoError(t, err)
	require.Len(t, ins, 1)
	assert.Equal(t, "The client rolls the Acme 401k into a Roth IRA.", ins[0].InsightText)

	second, err := a.NewUserSession("u1")
	require.NoError(t, err)
	_, err = a.Run(ctx, second, agent.UserText("What did I decide about my Acme 401k?"))
	require.NoError(t, err)
	reqs := srv.ChatRequests()
	last := reqs[len(reqs)-1]
	require.False(t, strings.HasPrefix(last.SystemText(), "agentmemory:prompt="), "the main agent's request is the last")
	assert.Empty(t, last.Chat.Tools, "automatic retrieval offers no tool")
	assert.Contains(t, last.Text(), "Decided to roll the Acme 401k into a Roth IRA.", "the session summary, in the init block")
	assert.Contains(t, last.Text(), "The client rolls the Acme 401k into a Roth IRA.", "the insight, retrieved automatically")

	// Each client asked for JSON mode once and was refused; no request
	// offered tools.
	byModel := map[string]int{}
	for _, r := range reqs {
		if len(r.Chat.ResponseFormat) > 0 {
			byModel[r.Chat.Model]++
		}
		assert.Empty(t, r.Chat.Tools)
	}
	assert.Equal(t, map[string]int{"qwen3": 1, "qwen3-mini": 1}, byModel)
}
