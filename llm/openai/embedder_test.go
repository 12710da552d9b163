package openai_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/openai"
)

func newEmbedder(t *testing.T, cfg openai.Config) *openai.Embedder {
	t.Helper()
	e, err := openai.NewEmbedder(cfg)
	require.NoError(t, err)
	return e
}

func TestEmbedSendsRequestAndKeepsOrderByIndex(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueEmbeddings(fakeopenai.EmbeddingItems(
		fakeopenai.EmbeddingItem{Index: 2, Vector: []float32{3, 3, 3}},
		fakeopenai.EmbeddingItem{Index: 0, Vector: []float32{1, 1, 1}},
		fakeopenai.EmbeddingItem{Index: 1, Vector: []float32{2, 2, 2}},
	))
	cfg := compatible(srv)
	cfg.EmbeddingDimensions = 3
	emb := newEmbedder(t, cfg)
	assert.Equal(t, "emb-test", emb.Model())
	assert.Equal(t, 3, emb.Dimensions())

	vs, err := emb.Embed(context.Background(), []string{"first", "second", "third"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1, 1, 1}, {2, 2, 2}, {3, 3, 3}}, vs)

	reqs := srv.EmbeddingRequests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/v1/embeddings", reqs[0].Path)
	assert.Equal(t, "Bearer sk-test", reqs[0].Header.Get("Authorization"))
	assert.JSONEq(t, `{"model":"emb-test","input":["first","second","third"],"dimensions":3,"encoding_format":"float"}`, string(reqs[0].Body))
}

func TestEmbedKnownModelOmitsDimensions(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithEmbeddingDimensions(1536))
	cfg := compatible(srv)
	cfg.EmbeddingModel = "text-embedding-3-small"
	emb := newEmbedder(t, cfg)
	assert.Equal(t, 1536, emb.Dimensions())

	v, err := embed.One(context.Background(), emb, "hello")
	require.NoError(t, err)
	assert.Equal(t, fakeopenai.Vector("hello", 1536), v)
	reqs := srv.EmbeddingRequests()
	require.Len(t, reqs, 1)
	assert.NotContains(t, reqs[0].JSON, "dimensions")
}

func TestEmbedModelDimensionsAreNotSent(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithEmbeddingDimensions(5))
	cfg := compatible(srv)
	cfg.EmbeddingModel = "nomic-embed-text"
	cfg.EmbeddingModelDimensions = 5
	emb := newEmbedder(t, cfg)
	_, err := emb.Embed(context.Background(), []string{"x"})
	require.NoError(t, err)
	assert.NotContains(t, srv.EmbeddingRequests()[0].JSON, "dimensions")
}

func TestEmbedDimensionMismatch(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueEmbeddings(fakeopenai.Embeddings([]float32{1, 2, 3, 4}, []float32{1, 2, 3}))
	cfg := compatible(srv)
	cfg.EmbeddingDimensions = 4
	emb := newEmbedder(t, cfg)

	_, err := emb.Embed(context.Background(), []string{"a", "b"})
	require.Error(t, err)
	assert.ErrorIs(t, err, embed.ErrDimension)
	assert.Contains(t, err.Error(), "returned 3 dimensions for text 1, want 4")
}

func TestEmbedBadResponses(t *testing.T) {
	cases := []struct {
		name  string
		reply fakeopenai.Reply
		want  string
	}{
		{"too few", fakeopenai.Embeddings([]float32{1, 2}), "server returned 1 vectors for 2 texts"},
		{"too many", fakeopenai.Embeddings([]float32{1, 2}, []float32{1, 2}, []float32{1, 2}), "server returned 3 vectors for 2 texts"},
		{"duplicate index", fakeopenai.EmbeddingItems(
			fakeopenai.EmbeddingItem{Index: 0, Vector: []float32{1, 2}},
			fakeopenai.EmbeddingItem{Index: 0, Vector: []float32{1, 2}}), "duplicate vector index 0"},
		{"index out of range", fakeopenai.EmbeddingItems(
			fakeopenai.EmbeddingItem{Index: 0, Vector: []float32{1, 2}},
			fakeopenai.EmbeddingItem{Index: 2, Vector: []float32{1, 2}}), "vector index 2 out of range [0,2)"},
		{"server error", fakeopenai.Error(http.StatusBadRequest, "input too long"), "input too long"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeopenai.New(t)
			srv.QueueEmbeddings(tc.reply)
			cfg := compatible(srv)
			cfg.EmbeddingDimensions = 2
			_, err := newEmbedder(t, cfg).Embed(context.Background(), []string{"a", "b"})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotErrorIs(t, err, embed.ErrDimension)
		})
	}
}

func TestEmbedBatches(t *testing.T) {
	srv := fakeopenai.New(t)
	cfg := compatible(srv)
	cfg.EmbeddingDimensions = 3
	cfg.EmbeddingBatchSize = 2
	emb := newEmbedder(t, cfg)

	texts := []string{"a", "b", "c", "d", "e"}
	vs, err := emb.Embed(context.Background(), texts)
	require.NoError(t, err)
	require.Len(t, vs, 5)
	for i, text := range texts {
		assert.Equal(t, fakeopenai.Vector(text, 3), vs[i], "text %d", i)
	}
	reqs := srv.EmbeddingRequests()
	require.Len(t, reqs, 3)
	assert.Equal(t, []string{"a", "b"}, reqs[0].Embeddings.Input)
	assert.Equal(t, []string{"c", "d"}, reqs[1].Embeddings.Input)
	assert.Equal(t, []string{"e"}, reqs[2].Embeddings.Input)
}

func TestEmbedDefaultBatchSizeForCompatibleServers(t *testing.T) {
	srv := fakeopenai.New(t)
	cfg := compatible(srv)
	cfg.EmbeddingDimensions = 2
	texts := make([]string, openai.DefaultCompatibleBatchSize+1)
	for i := range texts {
		texts[i] = string(rune('A' + i))
	}
	_, err := newEmbedder(t, cfg).Embed(context.Background(), texts)
	require.NoError(t, err)
	reqs := srv.EmbeddingRequests()
	require.Len(t, reqs, 2)
	assert.Len(t, reqs[0].Embeddings.Input, openai.DefaultCompatibleBatchSize)
}

func TestEmbedRetriesAndEmptyInput(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueError(http.StatusInternalServerError, "boom")
	cfg := compatible(srv)
	cfg.EmbeddingDimensions = 2
	emb := newEmbedder(t, cfg)

	vs, err := emb.Embed(context.Background(), []string{"a"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{fakeopenai.Vector("a", 2)}, vs)
	assert.Len(t, srv.EmbeddingRequests(), 2)

	vs, err = emb.Embed(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, vs)

	_, err = emb.Embed(context.Background(), []string{"a", ""})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "text 1 is empty")
	assert.Len(t, srv.EmbeddingRequests(), 2, "no request for empty input or an empty text")
}

func TestEmbedCancelled(t *testing.T) {
	srv := fakeopenai.New(t)
	cfg := compatible(srv)
	cfg.EmbeddingDimensions = 2
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newEmbedder(t, cfg).Embed(ctx, []string{"a"})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestNewEmbedderBadConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  openai.Config
		want string
	}{
		{"no model", openai.Config{APIKey: "k"}, "EmbeddingModel is empty; set the embedding model"},
		{"azure no deployment", openai.Config{Azure: openai.AzureConfig{Endpoint: "https://x", APIKey: "k"}}, "set the embedding deployment name"},
		{"unknown dimensions", openai.Config{BaseURL: "http://localhost:11434/v1", EmbeddingModel: "nomic-embed-text"},
			`EmbeddingDimensions or EmbeddingModelDimensions is required for embedding model "nomic-embed-text"`},
		{"negative dimensions", openai.Config{APIKey: "k", EmbeddingModel: "text-embedding-3-small", EmbeddingDimensions: -1}, "EmbeddingDimensions -1 is negative"},
		{"negative model dimensions", openai.Config{APIKey: "k", EmbeddingModel: "x", EmbeddingModelDimensions: -1}, "EmbeddingModelDimensions -1 is negative"},
		{"negative batch", openai.Config{APIKey: "k", EmbeddingModel: "text-embedding-3-small", EmbeddingBatchSize: -1}, "EmbeddingBatchSize -1"},
		{"openai without key", openai.Config{EmbeddingModel: "text-embedding-3-small"}, "APIKey is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := openai.NewEmbedder(tc.cfg)
			require.Error(t, err)
			assert.Nil(t, e)
			assert.ErrorIs(t, err, openai.ErrConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestEmbedCountedSumsTheBatchesUsage(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueEmbeddings(
		fakeopenai.Embeddings([]float32{1, 0}, []float32{0, 1}).WithUsage(7, 0),
		fakeopenai.Embeddings([]float32{1, 1}).WithUsage(4, 0),
	)
	cfg := compatible(srv)
	cfg.EmbeddingDimensions = 2
	cfg.EmbeddingBatchSize = 2
	emb := newEmbedder(t, cfg)

	vs, tokens, err := emb.EmbedCounted(context.Background(), []string{"a", "b", "c"})
	require.NoError(t, err)
	assert.Len(t, vs, 3)
	assert.Equal(t, 11, tokens, "both batches' prompt_tokens")
	assert.Len(t, srv.EmbeddingRequests(), 2)

	// A failing second batch still reports what the first one spent.
	srv.QueueEmbeddings(fakeopenai.Embeddings([]float32{1, 0}, []float32{0, 1}).WithUsage(5, 0),
		fakeopenai.Error(http.StatusBadRequest, "no"))
	_, tokens, err = emb.EmbedCounted(context.Background(), []string{"a", "b", "c"})
	require.Error(t, err)
	assert.Equal(t, 5, tokens)
}

// A 404 — the model (Azure: deployment) is unknown — is told apart with
// ErrNotFound, for chat and embeddings; other failures are not.
func TestNotFoundIsToldApart(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Error(http.StatusNotFound, "The model `nope` does not exist"))
	srv.QueueEmbeddings(fakeopenai.Error(http.StatusNotFound, "The model `nope` does not exist"), fakeopenai.Error(http.StatusBadRequest, "bad"))
	cfg := compatible(srv)
	cfg.MaxRetries = -1
	cfg.EmbeddingDimensions = 2
	chat, err := openai.NewChat(cfg)
	require.NoError(t, err)
	_, err = chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("hi")}})
	assert.ErrorIs(t, err, openai.ErrNotFound)
	assert.ErrorContains(t, err, "does not exist")
	emb := newEmbedder(t, cfg)
	_, err = emb.Embed(context.Background(), []string{"x"})
	assert.ErrorIs(t, err, openai.ErrNotFound)
	_, err = emb.Embed(context.Background(), []string{"x"})
	require.Error(t, err)
	assert.NotErrorIs(t, err, openai.ErrNotFound)
}

func TestMeasureDimensions(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithEmbeddingDimensions(24))
	cfg := compatible(srv)
	cfg.EmbeddingModel = "some-local-model"
	cfg.EmbeddingDimensions = 5 // not sent: the native length is asked
	n, err := openai.MeasureDimensions(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, 24, n)
	reqs := srv.EmbeddingRequests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "some-local-model", reqs[0].Embeddings.Model)
	assert.NotContains(t, reqs[0].JSON, "dimensions")

	srv.QueueEmbeddings(fakeopenai.Error(http.StatusNotFound, "no such model"))
	cfg.MaxRetries = -1
	_, err = openai.MeasureDimensions(context.Background(), cfg)
	assert.ErrorIs(t, err, openai.ErrNotFound)
	srv.QueueEmbeddings(fakeopenai.Embeddings())
	_, err = openai.MeasureDimensions(context.Background(), cfg)
	assert.ErrorContains(t, err, "0 vectors")
}
