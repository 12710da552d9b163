package retrieval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/llm/openai"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

const dims = 8

var docDate = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// seed stores two users' memories: alice's rollover plan and bob's secret.
func seed(t *testing.T, st store.Store, emb embed.Embedder) (aliceInteraction string) {
	t.Helper()
	ctx := context.Background()
	put := func(user, session, content string) string {
		v, err := embed.One(ctx, emb, content)
		require.NoError(t, err)
		d := &store.Interaction{ID: store.InteractionID(session, 1, 2), SessionID: session, Timestamp: docDate, FirstTurn: 1, LastTurn: 2,
			TurnIDs: []string{session + "-1", session + "-2"}, Content: content, ContentVector: v}
		require.NoError(t, st.PutInteraction(ctx, user, d))
		return d.ID
	}
	aliceInteraction = put("alice", "s-alice", "user: I will roll over my Acme 401k into a Roth IRA next Friday.\nassistant: Good plan.")
	put("bob", "s-bob", "user: My secret 401k rollover code is BOB-SECRET-42.\nassistant: Noted.")
	conf := 0.9
	v, err := embed.One(ctx, emb, "Prefers a Roth IRA rollover.")
	require.NoError(t, err)
	require.NoError(t, st.PutInsight(ctx, "alice", &store.Insight{ID: "ins-1", InsightType: store.InsightSession, InsightText: "Prefers a Roth IRA rollover.",
		InsightVector: v, Confidence: &conf, Category: "preference", CreatedAt: docDate, SessionIDs: []string{"s-alice"}}))
	return aliceInteraction
}

// seededLexical returns a store seeded through a lexical embedder, the
// embedder, and alice's interaction id.
func seededLexical(t *testing.T) (st *sqlite.Store, emb embed.Embedder, aliceInteraction string) {
	t.Helper()
	emb, err := lexical.New(lexical.Config{Dimensions: dims})
	require.NoError(t, err)
	st = openStore(t)
	return st, emb, seed(t, st, emb)
}

// openaiClients returns a chat client for chatModel and an embedder, both
// on srv.
func openaiClients(t *testing.T, srv *fakeopenai.Server, chatModel string) (agent.ChatClient, embed.Embedder) {
	t.Helper()
	cfg := openai.Config{BaseURL: srv.URL(), ChatModel: chatModel, EmbeddingModel: "emb", EmbeddingModelDimensions: dims, MaxRetries: -1}
	chat, err := openai.NewChat(cfg)
	require.NoError(t, err)
	emb, err := openai.NewEmbedder(cfg)
	require.NoError(t, err)
	return chat, emb
}

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlitetest.NewFile(t), sqlite.Config{Dimensions: dims})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

var idRE = regexp.MustCompile(`\[(int-[0-9a-f]+), (\d{4}-\d\d-\d\d)`)

// The whole exchange runs at a hosted model's pace (700 ms a chat call,
// 150 ms an embedding): the mini-agent answers within its default budget.
func TestMainAgentCallsRetrieveUserFactsThroughTheMiniAgent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := fakeopenai.New(t, fakeopenai.WithEmbeddingDimensions(dims),
		fakeopenai.WithLatency(fakeopenai.Latency{FirstToken: 700 * time.Millisecond, Embedding: 150 * time.Millisecond}))
	var mu sync.Mutex
	var miniRequests []fakeopenai.Request
	srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		msgs := r.Chat.Messages
		last := msgs[len(msgs)-1]
		if strings.HasPrefix(r.SystemText(), "agentmemory:prompt=fact_retrieval") {
			mu.Lock()
			miniRequests = append(miniRequests, r)
			mu.Unlock()
			if last.Role != "tool" {
				return fakeopenai.ToolCalls(
					fakeopenai.Call("m1", "search_interactions", `{"query":"401k rollover","top_k":3}`),
					fakeopenai.Call("m2", "search_insights", `{"query":"rollover","insight_type":"session"}`),
				)
			}
			// Answer by citing what the interaction search returned.
			found := idRE.FindStringSubmatch(msgs[len(msgs)-2].Content)
			if found == nil {
				return fakeopenai.Text("No relevant information found in memory.")
			}
			return fakeopenai.Text(fmt.Sprintf("- The user will roll the Acme 401k into a Roth IRA on 2026-03-06 [%s, %s]", found[1], found[2]))
		}
		if last.Role == "tool" {
			return fakeopenai.Text("You planned to roll it into a Roth IRA.")
		}
		return fakeopenai.ToolCalls(fakeopenai.Call("c1", retrieval.ToolName, `{"query":"what did I decide about my 401k rollover"}`))
	})
	chat, emb := openaiClients(t, srv, "gpt")
	st := openStore(t)
	want := seed(t, st, emb)

	r, err := retrieval.New(st, retrieval.Config{Embedder: emb, Mini: chat, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	a := agent.New(chat, agent.Config{Instructions: "You are a financial advisor.", Tools: []agent.Tool{r.Tool("alice")}})
	resp, err := a.Run(ctx, a.NewSession(), agent.UserText("What did I decide about my 401k?"))
	require.NoError(t, err)
	assert.Equal(t, "You planned to roll it into a Roth IRA.", resp.Text())

	// The mini-agent searched twice, then answered citing the stored document.
	require.Len(t, miniRequests, 2)
	assert.Equal(t, retrieval.DefaultMaxAnswerTokens, *miniRequests[0].Chat.MaxTokens, "the mini-agent's answers are bounded")
	assert.Contains(t, miniRequests[0].LastUserText(), "<request>\nwhat did I decide about my 401k rollover\n</request>")
	var toolMsgs []string
	for _, m := range miniRequests[1].Chat.Messages {
		if m.Role == "tool" {
			toolMsgs = append(toolMsgs, m.Content)
		}
	}
	require.Len(t, toolMsgs, 2)
	assert.Contains(t, toolMsgs[0], "<memories>\n- ["+want+", 2026-03-02, conversation]")
	assert.Contains(t, toolMsgs[0], "next Friday [2026-03-06]", "relative dates resolved against the document's date")
	assert.Contains(t, toolMsgs[1], "Prefers a Roth IRA rollover.")

	// The main agent received the cited answer, fenced as data.
	mainReqs := srv.ChatRequests()
	final := mainReqs[len(mainReqs)-1].Chat.Messages
	result := final[len(final)-1].Content
	assert.Contains(t, result, "<memories>\n- The user will roll the Acme 401k into a Roth IRA on 2026-03-06 ["+want+", 2026-03-02]")

	// Nothing of bob's reached any model request.
	for _, req := range srv.ChatRequests() {
		assert.NotContains(t, string(req.Body), "BOB-SECRET")
	}
}

func TestToolArgumentsCannotReachAnotherUser(t *testing.T) {
	ctx := context.Background()
	st, emb, _ := seededLexical(t)
	r, err := retrieval.New(st, retrieval.Config{Embedder: emb, MinSimilarity: -1})
	require.NoError(t, err)

	// A user_id argument is not part of any tool's schema: refused.
	for _, tool := range append(r.SearchTools("alice"), r.Tool("alice")) {
		_, err := tool.Call(ctx, json.RawMessage(`{"query":"secret rollover code","user_id":"bob"}`))
		assert.ErrorIs(t, err, agent.ErrBadArguments, tool.Name())
	}
	// Bob's own words, ids and secret in alice's query find only alice's documents.
	for _, q := range []string{"BOB-SECRET-42", "secret rollover code", store.InteractionID("s-bob", 1, 2), "bob"} {
		ms, err := r.Search(ctx, "alice", q, retrieval.SearchOptions{TopK: 10})
		require.NoError(t, err)
		for _, m := range ms {
			assert.NotContains(t, m.Text, "BOB-SECRET", q)
			assert.NotEqual(t, "s-bob", m.SessionID, q)
		}
		out, err := r.Tool("alice").Call(ctx, json.RawMessage(fmt.Sprintf(`{"query":%q}`, q)))
		require.NoError(t, err)
		assert.NotContains(t, out, "BOB-SECRET")
	}
}

func TestRetrieveTimesOutToNoMemory(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithEmbeddingDimensions(dims))
	slow := fakeopenai.Embeddings(make([]float32, dims)).WithDelay(2 * time.Second)
	srv.QueueEmbeddings(slow, slow)
	emb, err := openai.NewEmbedder(openai.Config{BaseURL: srv.URL(), EmbeddingModel: "emb", EmbeddingModelDimensions: dims, MaxRetries: -1})
	require.NoError(t, err)
	r, err := retrieval.New(openStore(t), retrieval.Config{Embedder: emb, Timeout: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	ans := r.Retrieve(context.Background(), "alice", "my 401k", true)
	assert.Equal(t, retrieval.NoMemoryAvailable, ans.Text)
	assert.ErrorIs(t, ans.Err, context.DeadlineExceeded)
	out, err := r.Tool("alice").Call(context.Background(), json.RawMessage(`{"query":"my 401k"}`))
	require.NoError(t, err, "the tool reports no memory to the model; it does not fail the run")
	assert.Contains(t, out, retrieval.NoMemoryAvailable)
}

func TestOfflineMiniAgentCitesTheDocument(t *testing.T) {
	ctx := context.Background()
	st, emb, want := seededLexical(t)
	mini, err := offline.New(offline.Config{})
	require.NoError(t, err)
	r, err := retrieval.New(st, retrieval.Config{Embedder: emb, Mini: mini})
	require.NoError(t, err)
	ans := r.Retrieve(ctx, "alice", "Acme 401k rollover", false)
	require.NoError(t, ans.Err)
	assert.True(t, ans.Agent)
	assert.Contains(t, ans.Text, "["+want+", 2026-03-02, conversation]")
	assert.NotContains(t, ans.Text, "BOB")

	direct := r.Retrieve(ctx, "alice", "Acme 401k rollover", true)
	var ids []string
	for _, m := range direct.Memories {
		ids = append(ids, m.ID)
	}
	assert.Contains(t, ids, want)
	assert.Contains(t, ids, "ins-1")
	assert.False(t, direct.Agent)
}

func TestAutoSkipsGreetingsAndRewritesFollowUps(t *testing.T) {
	ctx := context.Background()
	st, emb, _ := seededLexical(t)
	r, err := retrieval.New(st, retrieval.Config{Embedder: emb})
	require.NoError(t, err)

	q, ms := r.Auto(ctx, "alice", nil, "Thanks!")
	assert.Empty(t, q)
	assert.Empty(t, ms)

	q, ms = r.Auto(ctx, "alice", nil, "What is my Roth IRA plan?")
	assert.Equal(t, "What is my Roth IRA plan?", q)
	require.NotEmpty(t, ms)
	assert.Contains(t, retrieval.AutoBlock(ms), "<memories>\n- [")
}

func TestSearchLeavesTheProfileToTheInitBlock(t *testing.T) {
	ctx := context.Background()
	st, emb, _ := seededLexical(t)
	text := "Profile: the user prefers a Roth IRA rollover."
	v, err := embed.One(ctx, emb, text)
	require.NoError(t, err)
	require.NoError(t, st.PutInsight(ctx, "alice", &store.Insight{ID: store.LongTermID("alice"), InsightType: store.InsightLongTerm,
		InsightText: text, InsightVector: v, CreatedAt: docDate}))
	r, err := retrieval.New(st, retrieval.Config{Embedder: emb, MinSimilarity: -1})
	require.NoError(t, err)

	ids := func(ms []retrieval.Memory) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	all, err := r.Search(ctx, "alice", "Roth IRA rollover", retrieval.SearchOptions{TopK: 10})
	require.NoError(t, err)
	assert.Contains(t, ids(all), "ins-1")
	assert.NotContains(t, ids(all), store.LongTermID("alice"), "the profile is in every session's context already")

	insights, err := r.Search(ctx, "alice", "Roth IRA rollover", retrieval.SearchOptions{TopK: 10, Kinds: []store.Kind{store.KindInsight}})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"ins-1", store.LongTermID("alice")}, ids(insights), "search_insights may ask for it")
}

// A local model that refuses tools (Ollama answers "… does not support
// tools") cannot run the mini-agent: retrieve_user_facts still answers,
// with the direct search, and the mini model is asked once.
func TestMiniModelWithoutToolsFallsBackToTheDirectSearch(t *testing.T) {
	ctx := context.Background()
	srv := fakeopenai.New(t, fakeopenai.WithEmbeddingDimensions(dims), fakeopenai.WithoutToolCalling())
	chat, emb := openaiClients(t, srv, "llama3.2")
	st := openStore(t)
	want := seed(t, st, emb)
	var logs strings.Builder
	r, err := retrieval.New(st, retrieval.Config{Embedder: emb, Mini: chat, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)

	out, err := r.Tool("alice").Call(ctx, json.RawMessage(`{"query":"Acme 401k rollover"}`))
	require.NoError(t, err)
	assert.Contains(t, out, "- ["+want+", 2026-03-02, conversation]", "the direct search's memories")
	assert.NotContains(t, out, "BOB")
	reqs := srv.ChatRequests()
	require.Len(t, reqs, 1, "the mini-agent's first request, refused")
	assert.NotEmpty(t, reqs[0].Chat.Tools)

	ans := r.Retrieve(ctx, "alice", "Acme 401k rollover", false)
	require.NoError(t, ans.Err)
	assert.False(t, ans.Agent)
	assert.True(t, ans.Degraded)
	assert.ErrorIs(t, ans.AgentErr, agent.ErrToolsUnsupported)
	assert.Contains(t, ans.AgentErr.Error(), fakeopenai.NoToolsMessage, "the server's reason is kept")
	var ids []string
	for _, m := range ans.Memories {
		ids = append(ids, m.ID)
	}
	assert.Contains(t, ids, want)
	assert.Len(t, srv.ChatRequests(), 1, "the mini model is not asked again")

	assert.Equal(t, 1, strings.Count(logs.String(), "the mini model refuses tools"), logs.String())
	assert.NotContains(t, logs.String(), "mini-agent failed", "a refusal is no failure to warn about on every call")
}
