package memoryservice

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/openai"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// endpointModels are llm/openai clients on one endpoint, by model name:
// embedding models "emb-N" make N-dimensional vectors; "nope" is unknown.
type endpointModels struct{ srv *fakeopenai.Server }

func (m endpointModels) config(name string) openai.Config {
	return openai.Config{BaseURL: m.srv.URL(), ChatModel: name, EmbeddingModel: name, MaxRetries: -1}
}

func (m endpointModels) Chat(_ context.Context, name string) (agent.ChatClient, error) {
	if name == "nope" {
		return nil, fmt.Errorf("%w: the endpoint has no model %q", ErrUnknownModel, name)
	}
	return openai.NewChat(m.config(name))
}

func (m endpointModels) Embedder(_ context.Context, name string) (embed.Embedder, error) {
	var n int
	if _, err := fmt.Sscanf(name, "emb-%d", &n); err != nil {
		return nil, fmt.Errorf("%w: the endpoint has no model %q", ErrUnknownModel, name)
	}
	cfg := m.config(name)
	cfg.EmbeddingDimensions = n // sent: the fake server answers vectors of this length
	return openai.NewEmbedder(cfg)
}

// startModels serves a SQLite file opened for vectors of dims (0: any)
// with the models of srv chosen by each store's definition.
func startModels(t *testing.T, srv *fakeopenai.Server, dims int) *server {
	t.Helper()
	return startModelsAt(t, dbPath(t), srv, Config{Dimensions: dims})
}

// startModelsAt serves the SQLite file at path, opened for vectors of
// cfg.Dimensions, with the models of srv.
func startModelsAt(t *testing.T, path string, srv *fakeopenai.Server, cfg Config) *server {
	t.Helper()
	cfg.Models = endpointModels{srv}
	return startOn(t, func(t testing.TB, _ int) store.Store {
		st, err := sqlite.Open(context.Background(), path, sqlite.Config{Dimensions: cfg.Dimensions, Logger: quiet()})
		require.NoError(t, err)
		return st
	}, cfg)
}

func (s *server) createWith(name, chat, emb string) (int, map[string]any) {
	s.t.Helper()
	code, out, _ := s.do("POST", "/memory_stores", map[string]any{"name": name,
		"definition": map[string]any{"kind": "default", "chat_model": chat, "embedding_model": emb}})
	return code, out
}

// Two memory stores in one SQLite file, each on its own chat model and on
// embedding models of different lengths: every request names the store's
// model, each store's vectors have its model's length, and each finds its
// own memories.
func TestEachStoreRunsOnTheModelsItNames(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(memoryModel)
	srv.HandleEmbeddings(func(r fakeopenai.Request) fakeopenai.Reply {
		vs := make([][]float32, len(r.Embeddings.Input))
		for i, in := range r.Embeddings.Input {
			vs[i] = fakeopenai.Vector(in, r.Embeddings.Dimensions)
		}
		return fakeopenai.Embeddings(vs...)
	})
	s := startModels(t, srv, 0)
	code, out := s.createWith("cafe", "chat-cafe", "emb-8")
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out = s.createWith("teahouse", "chat-tea", "emb-16")
	require.Equal(t, http.StatusOK, code, "%v", out)

	s.wait("cafe", s.update("cafe", "alice", 0, "I drink espresso every morning."))
	s.wait("teahouse", s.update("teahouse", "alice", 0, "I drink matcha every afternoon."))
	assert.Contains(t, contents(s.search("cafe", "alice", "What espresso do I drink?")), "espresso")
	assert.Contains(t, contents(s.search("teahouse", "alice", "What matcha do I drink?")), "matcha")
	assert.NotContains(t, contents(s.search("cafe", "alice", "What do I drink in the afternoon?")), "matcha")

	want := map[string][2]string{"espresso": {"chat-cafe", "emb-8"}, "matcha": {"chat-tea", "emb-16"}}
	chats, embeds := srv.ChatRequests(), srv.EmbeddingRequests()
	require.NotEmpty(t, chats)
	require.NotEmpty(t, embeds)
	for _, r := range chats {
		require.NotEmpty(t, topicOf(r.Text()), "every chat call is an update's")
		assert.Equal(t, want[topicOf(r.Text())][0], r.Chat.Model, "chat request %q", r.LastUserText())
	}
	for _, r := range embeds {
		if topicOf(r.Text()) == "" {
			assert.Equal(t, "emb-8", r.Embeddings.Model, "the cafe search's query")
			continue
		}
		assert.Equal(t, want[topicOf(r.Text())][1], r.Embeddings.Model, "embedding request %v", r.Embeddings.Input)
	}
	dims, err := s.st.(*sqlite.Store).VectorDimensions(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{8, 16}, dims, "each store's vectors of its model's length")
}

// A store whose models cannot serve is refused at create with a 400 naming
// the field: a model the endpoint does not know, an embedding model whose
// vectors have another length than the store holds.
func TestStoreModelsCheckedAtCreate(t *testing.T) {
	srv := fakeopenai.New(t)
	s := startModels(t, srv, 8)
	code, out := s.createWith("wide", "chat", "emb-16")
	require.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Equal(t, "definition.embedding_model", errorParam(t, out))
	msg := out["error"].(map[string]any)["message"].(string)
	assert.True(t, strings.Contains(msg, "16") && strings.Contains(msg, "8"), "names both lengths: %s", msg)

	code, out = s.createWith("unknown", "nope", "emb-8")
	require.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Equal(t, "definition.chat_model", errorParam(t, out))
	code, out = s.createWith("unknown", "chat", "nope")
	require.Equal(t, http.StatusBadRequest, code, "%v", out)
	assert.Equal(t, "definition.embedding_model", errorParam(t, out))

	code, _, _ = s.do("GET", "/memory_stores/wide", nil)
	assert.Equal(t, http.StatusNotFound, code, "nothing stored")
	code, out = s.createWith("fits", "chat", "emb-8")
	require.Equal(t, http.StatusOK, code, "%v", out)
}

// An update whose store's models cannot serve any more (here: a restart on
// a store of another vector length) fails with an error that says why,
// rather than staying queued.
func TestUpdateFailsWhenTheStoreModelsCannotServe(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(memoryModel)
	path := dbPath(t)
	s := startModelsAt(t, path, srv, Config{})
	code, out := s.createWith("cafe", "chat", "emb-8")
	require.Equal(t, http.StatusOK, code, "%v", out)
	id := s.update("cafe", "alice", 300, "I drink espresso every morning.")
	s.stop() // the update stays queued in the file

	later := time.Now().Add(time.Hour) // past the update's due time
	s = startModelsAt(t, path, srv, Config{Dimensions: 16, Now: func() time.Time { return later }})
	done := s.wait("cafe", id)
	require.Equal(t, "failed", done["status"], "%v", done)
	msg := done["error"].(map[string]any)["message"].(string)
	for _, want := range []string{"emb-8", "8-dimensional", "16-dimensional"} {
		assert.Contains(t, msg, want)
	}
}

// A memory item written directly is embedded by its store's embedding
// model, as the store's own work is.
func TestItemsWrittenDirectlyUseTheStoresEmbedder(t *testing.T) {
	srv := fakeopenai.New(t)
	s := startModels(t, srv, 0)
	code, out := s.createWith("wide", "chat", "emb-16")
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out, _ = s.do("POST", "/memory_stores/wide/items", map[string]any{"scope": "alice", "content": "Works nights.", "kind": "user_profile"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out, _ = s.do("POST", "/memory_stores/wide/items/"+out["memory_id"].(string), map[string]any{"content": "Works days."})
	require.Equal(t, http.StatusOK, code, "%v", out)
	reqs := srv.EmbeddingRequests()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		assert.Equal(t, "emb-16", r.Embeddings.Model)
	}
	dims, err := s.st.(*sqlite.Store).VectorDimensions(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{16}, dims)
}
