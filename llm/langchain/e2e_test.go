package langchain_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/embeddings"
	lcopenai "github.com/tmc/langchaingo/llms/openai"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/internal/logtest"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/llm/langchain"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

const e2eDims = 8

// memoryScript answers the fake server's chat requests: memory prompts by
// their marker line, the retrieval mini-agent with one search, the main
// agent with retrieve_user_facts when asked what was decided.
type memoryScript struct {
	mu       sync.Mutex
	prompts  map[string]int
	miniSeen []string // tool results the mini-agent received
}

func (s *memoryScript) answer(r fakeopenai.Request) fakeopenai.Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	msgs := r.Chat.Messages
	last := msgs[len(msgs)-1]
	name, isPrompt := strings.CutPrefix(strings.SplitN(r.SystemText(), "\n", 2)[0], prompts.MarkerPrefix)
	if isPrompt {
		s.prompts[name]++
	}
	switch {
	case !isPrompt:
	case name == prompts.NameInteractionMetadata:
		return fakeopenai.JSON(map[string]any{"summary": "The client discussed a 401k rollover.", "mentioned_topics": []string{"401k", "rollover"}, "entities": []string{"Acme"}})
	case name == prompts.NameCumulativeSummary:
		return fakeopenai.Text(fmt.Sprintf("The client is planning a 401k rollover (update %d).", s.prompts[name]))
	case name == prompts.NameSessionSummary:
		return fakeopenai.JSON(map[string]any{"summary": "Decided to roll the Acme 401k into a Roth IRA.", "key_topics": []string{"401k rollover"}})
	case name == prompts.NameSessionReflection:
		return fakeopenai.JSON(map[string]any{"reflection_flag": "insight", "insights": []map[string]any{
			{"category": "financial_goals", "insight_text": "The client wants to roll the Acme 401k into a Roth IRA.", "confidence": 0.9, "importance": "high"},
		}})
	case name == prompts.NameFactRetrieval && last.Role == "tool":
		s.miniSeen = append(s.miniSeen, last.Content)
		return fakeopenai.Text("The client decided to roll the Acme 401k into a Roth IRA.")
	case name == prompts.NameFactRetrieval:
		return fakeopenai.ToolCalls(fakeopenai.Call("s1", "search_interactions", `{"query":"401k rollover"}`))
	default:
		return fakeopenai.Error(400, "unscripted prompt "+name)
	}
	switch {
	case last.Role == "tool":
		return fakeopenai.Text("You decided to roll your Acme 401k into a Roth IRA.")
	case strings.Contains(last.Content, "decide"):
		return fakeopenai.ToolCalls(fakeopenai.Call("r1", "retrieve_user_facts", `{"query":"401k decision"}`))
	}
	return fakeopenai.Text("Noted: " + last.Content)
}

// TestMemoryThroughLangchaingo runs the memory provider on the adapter —
// chat, mini and embedder all langchaingo's OpenAI client over the fake
// server — with a SQLite store: two sessions, pruning, summaries,
// reflection, and retrieval through the mini-agent.
func TestMemoryThroughLangchaingo(t *testing.T) {
	ctx := context.Background()
	srv := fakeopenai.New(t)
	script := &memoryScript{prompts: map[string]int{}}
	srv.HandleChat(script.answer)

	llm := newLLM(t, srv, lcopenai.WithModel("main"), lcopenai.WithEmbeddingModel("emb"), lcopenai.WithEmbeddingDimensions(e2eDims))
	chat := newChat(t, llm, langchain.ChatConfig{})
	mini := newChat(t, llm, langchain.ChatConfig{Model: "mini"})
	lce, err := embeddings.NewEmbedder(llm)
	require.NoError(t, err)
	emb, err := langchain.NewEmbedder(lce, langchain.EmbedderConfig{Model: "emb", Dimensions: e2eDims})
	require.NoError(t, err)

	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "memory.db"), sqlite.Config{Dimensions: e2eDims})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	var logs logtest.Logs
	logger := logs.Logger(&slog.HandlerOptions{Level: slog.LevelWarn})
	mem, err := provider.New(st, provider.Config{
		UserID: "u1", Chat: chat, Mini: mini, Embedder: emb, KeeperConfig: keeper.Config{K: 3},
		RetryBackoff: time.Millisecond, Logger: logger,
	})
	require.NoError(t, err)
	t.Cleanup(func() { mem.Close(context.Background()) })
	advisor := agent.New(chat, agent.Config{
		Instructions:     "You are a financial advisor.",
		ContextProviders: []agent.ContextProvider{mem},
		Logger:           logger,
	})

	// Session 1: seven turns, pruned in chunks of three, then ended.
	sess, err := advisor.NewUserSession("u1")
	require.NoError(t, err)
	require.NoError(t, mem.StartSession(ctx, sess))
	for i, q := range []string{
		"I am 35 and want to retire at 60.", "My old 401k from Acme holds $40,000.", "Should I roll it over?",
		"Into a Roth IRA, I think.", "I can save $500 a month.", "I worry about volatility.", "Let's do the rollover.",
	} {
		resp, err := advisor.Run(ctx, sess, agent.UserText(q))
		require.NoError(t, err, "turn %d", i+1)
		assert.Equal(t, "Noted: "+q, resp.Text())
	}
	res, err := mem.EndSession(ctx, sess)
	require.NoError(t, err)
	require.NoError(t, mem.Flush(ctx))
	assert.Equal(t, "Decided to roll the Acme 401k into a Roth IRA.", res.Session.Summary)
	assert.Equal(t, store.SessionCompleted, res.Session.Status)
	assert.Len(t, res.Session.SummaryVector, e2eDims)

	docs, err := st.ListInteractions(ctx, "u1", store.InteractionFilter{SessionID: sess.ID()})
	require.NoError(t, err)
	require.Len(t, docs, 3, "turns 1-3, 4-6 and 7")
	assert.Equal(t, [2]int{1, 3}, [2]int{docs[0].FirstTurn, docs[0].LastTurn})
	for _, d := range docs {
		assert.Equal(t, "The client discussed a 401k rollover.", d.Summary)
		assert.Equal(t, []string{"401k", "rollover"}, d.Metadata.MentionedTopics)
		assert.False(t, d.MetadataPending)
		// The vectors came through langchaingo, which embeds text with its
		// newlines replaced by spaces.
		assert.Equal(t, fakeopenai.Vector(strings.ReplaceAll(d.Content, "\n", " "), e2eDims), d.ContentVector)
		assert.Len(t, d.SummaryVector, e2eDims)
	}
	insights, err := st.ListInsights(ctx, "u1", store.InsightFilter{})
	require.NoError(t, err)
	require.Len(t, insights, 1)
	assert.Equal(t, "The client wants to roll the Acme 401k into a Roth IRA.", insights[0].InsightText)
	assert.Len(t, insights[0].InsightVector, e2eDims)

	// Session 2: the init block carries session 1's summary, and the model
	// asks memory what was decided.
	next, err := advisor.NewUserSession("u1")
	require.NoError(t, err)
	resp, err := advisor.Run(ctx, next, agent.UserText("What did we decide about my 401k?"))
	require.NoError(t, err)
	assert.Equal(t, "You decided to roll your Acme 401k into a Roth IRA.", resp.Text())
	require.Len(t, resp.Messages, 3)
	assert.Contains(t, resp.Messages[1].Text, "The client decided to roll the Acme 401k into a Roth IRA.", "the mini-agent's answer reached the main agent")
	require.Len(t, script.miniSeen, 1)
	assert.Contains(t, script.miniSeen[0], "user: My old 401k from Acme holds $40,000.", "the mini-agent's search found session 1")
	require.NoError(t, mem.Flush(ctx))

	// What went over the wire.
	var sawInit bool
	for _, r := range srv.ChatRequests() {
		name, isPrompt := strings.CutPrefix(strings.SplitN(r.SystemText(), "\n", 2)[0], prompts.MarkerPrefix)
		switch {
		case !isPrompt:
			assert.Equal(t, "main", r.Chat.Model)
			require.NotEmpty(t, r.Chat.Tools)
			assert.Equal(t, "retrieve_user_facts", r.Chat.Tools[0].Function.Name)
			if r.LastUserText() == "What did we decide about my 401k?" && strings.Contains(r.Chat.Messages[1].Content, "<session_initialization>") {
				sawInit = true
				assert.Contains(t, r.Chat.Messages[1].Content, "Decided to roll the Acme 401k into a Roth IRA.")
			}
		case name == prompts.NameInteractionMetadata, name == prompts.NameSessionSummary:
			assert.Equal(t, "mini", r.Chat.Model, name)
			assert.JSONEq(t, `{"type":"json_object"}`, string(r.Chat.ResponseFormat), name)
		case name == prompts.NameSessionReflection:
			assert.Equal(t, "main", r.Chat.Model, "reflection uses the main model")
			assert.JSONEq(t, `{"type":"json_object"}`, string(r.Chat.ResponseFormat))
		case name == prompts.NameCumulativeSummary, name == prompts.NameFactRetrieval:
			assert.Equal(t, "mini", r.Chat.Model, name)
		}
	}
	assert.True(t, sawInit, "session 2's first request carried the init block")
	assert.Equal(t, 3, script.prompts[prompts.NameInteractionMetadata])
	assert.Equal(t, 1, script.prompts[prompts.NameSessionReflection])
	for _, r := range srv.EmbeddingRequests() {
		assert.Equal(t, "emb", r.Embeddings.Model)
		assert.Equal(t, e2eDims, r.Embeddings.Dimensions)
	}
	assert.NotEmpty(t, srv.EmbeddingRequests())
	assert.Empty(t, logs.String(), "no memory failure was logged")
}
