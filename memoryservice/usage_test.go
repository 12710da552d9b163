package memoryservice

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/openai"
	"github.com/agentmemory/agentmemory/prompts"
)

// fakeDims is the vector length of the fake server's embeddings.
const fakeDims = 8

// topics are the words the fake model's conversations are about; every
// request made for a conversation names its word (the model echoes it in
// what it writes), and reports the usage the word maps to.
var topics = map[string]struct{ prompt, completion, embedding int }{
	"espresso": {prompt: 100, completion: 10, embedding: 7},
	"matcha":   {prompt: 1000, completion: 1, embedding: 70},
}

func topicOf(text string) string {
	for w := range topics {
		if strings.Contains(text, w) {
			return w
		}
	}
	return ""
}

// memoryModel answers agentmemory's memory prompts well enough for an
// update to store a summary, insights and a profile, each naming the
// conversation's topic.
func memoryModel(r fakeopenai.Request) fakeopenai.Reply {
	w := topicOf(r.Text())
	var reply fakeopenai.Reply
	sys := r.SystemText()
	switch {
	case strings.HasPrefix(sys, prompts.MarkerPrefix+"interaction_metadata"):
		reply = fakeopenai.JSON(map[string]any{"summary": "The user talked about " + w + ".", "mentioned_topics": []string{w}, "entities": []string{w}})
	case strings.HasPrefix(sys, prompts.MarkerPrefix+"session_summary"):
		reply = fakeopenai.JSON(map[string]any{"summary": "The user likes " + w + ".", "key_topics": []string{w}})
	case strings.HasPrefix(sys, prompts.MarkerPrefix+"session_reflection"):
		reply = fakeopenai.JSON(map[string]any{"reflection_flag": "insight", "insights": []map[string]any{
			{"category": "preferences", "insight_text": "The user drinks " + w + ".", "confidence": 0.9, "importance": "high"}}})
	case strings.HasPrefix(sys, prompts.MarkerPrefix+"reconcile"):
		reply = fakeopenai.JSON(map[string]any{"duplicates": []any{}, "contradictions": []any{}})
	default: // the profile, cumulative summaries, query rewrites
		reply = fakeopenai.Text("The user drinks " + w + ".")
	}
	u := topics[w]
	return reply.WithUsage(u.prompt, u.completion)
}

// fakeEmbeddings answers with the server's default vectors and the usage
// of the texts' topic.
func fakeEmbeddings(r fakeopenai.Request) fakeopenai.Reply {
	vs := make([][]float32, len(r.Embeddings.Input))
	for i, in := range r.Embeddings.Input {
		vs[i] = fakeopenai.Vector(in, fakeDims)
	}
	return fakeopenai.Embeddings(vs...).WithUsage(topics[topicOf(r.Text())].embedding, 0)
}

// startFake serves a SQLite file with models on srv (chat model "chat",
// embedding model "emb").
func startFake(t *testing.T, srv *fakeopenai.Server, cfg Config) *server {
	t.Helper()
	oc := openai.Config{BaseURL: srv.URL(), ChatModel: "chat", EmbeddingModel: "emb", EmbeddingModelDimensions: fakeDims, MaxRetries: -1}
	chat, err := openai.NewChat(oc)
	require.NoError(t, err)
	emb, err := openai.NewEmbedder(oc)
	require.NoError(t, err)
	cfg.Chat, cfg.Mini, cfg.Embedder = chat, chat, emb
	return start(t, dbPath(t), cfg)
}

// expected sums what the fake server reported for the requests naming
// topic w.
func expected(srv *fakeopenai.Server, w string) map[string]float64 {
	u := topics[w]
	var in, out, emb int
	for _, r := range srv.ChatRequests() {
		if topicOf(r.Text()) == w {
			in += u.prompt
			out += u.completion
		}
	}
	for _, r := range srv.EmbeddingRequests() {
		if topicOf(r.Text()) == w {
			emb += u.embedding
		}
	}
	return map[string]float64{"input_tokens": float64(in), "output_tokens": float64(out),
		"embedding_tokens": float64(emb), "total_tokens": float64(in + out + emb)}
}

// startSupport serves a SQLite file with the scripted memory model and
// embeddings on a fake server, and creates the memory store "support".
func startSupport(t *testing.T) (*fakeopenai.Server, *server) {
	t.Helper()
	srv := fakeopenai.New(t)
	srv.HandleChat(memoryModel)
	srv.HandleEmbeddings(fakeEmbeddings)
	s := startFake(t, srv, Config{})
	s.createStore("support", nil)
	return srv, s
}

func usageOfResult(t *testing.T, out map[string]any) map[string]any {
	t.Helper()
	require.Equal(t, "completed", out["status"], "%v", out)
	u, ok := out["result"].(map[string]any)["usage"].(map[string]any)
	require.True(t, ok, "usage: %v", out)
	return u
}

// Two updates of two scopes run at once on shared clients: each reports
// the tokens of its own calls — the turns' pruning, the summary,
// reflection and the profile, chat and embeddings.
func TestUpdateUsageCountsItsOwnModelCalls(t *testing.T) {
	srv, s := startSupport(t)

	var turns []string
	for i := range 12 { // enough turns to prune while the update waits
		turns = append(turns, "Today I had my usual cup number "+string(rune('a'+i))+" of WORD.")
	}
	ids := map[string]string{}
	for scope, w := range map[string]string{"alice": "espresso", "bob": "matcha"} {
		texts := make([]string, len(turns))
		for i, tx := range turns {
			texts[i] = strings.ReplaceAll(tx, "WORD", w)
		}
		ids[w] = s.update("support", scope, 0, texts...)
	}
	results := map[string]map[string]any{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w, id := range ids {
		wg.Go(func() {
			out := s.wait("support", id)
			mu.Lock()
			results[w] = out
			mu.Unlock()
		})
	}
	wg.Wait()
	for w := range ids {
		u := usageOfResult(t, results[w])
		want := expected(srv, w)
		require.Positive(t, want["input_tokens"], "the update called the chat model")
		require.Positive(t, want["embedding_tokens"], "the update embedded its memories")
		for k, v := range want {
			assert.Equal(t, v, u[k], "%s of the %s update", k, w)
		}
		assert.Equal(t, map[string]any{"cached_tokens": 0.0}, u["input_tokens_details"])
		assert.Equal(t, map[string]any{"reasoning_tokens": 0.0}, u["output_tokens_details"])
	}
	for _, r := range srv.Requests() {
		assert.NotEmpty(t, topicOf(r.Text()), "every call was made for one of the two updates")
	}
}

// A search reports the tokens of its query embedding.
func TestSearchUsageCountsItsQueryEmbedding(t *testing.T) {
	srv, s := startSupport(t)
	s.wait("support", s.update("support", "alice", 0, "I drink espresso every morning."))

	before := len(srv.EmbeddingRequests())
	code, out, _ := s.do("POST", "/memory_stores/support:search_memories",
		map[string]any{"scope": "alice", "items": []any{user("Which espresso do I drink?")}})
	require.Equal(t, 200, code, "%v", out)
	require.Len(t, srv.EmbeddingRequests(), before+1, "one query embedding")
	u := out["usage"].(map[string]any)
	assert.Equal(t, float64(topics["espresso"].embedding), u["embedding_tokens"])
	assert.Equal(t, float64(topics["espresso"].embedding), u["total_tokens"])
	assert.Equal(t, 0.0, u["input_tokens"], "a direct search calls no chat model")
}
