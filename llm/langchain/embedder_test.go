package langchain_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/embeddings"
	lcopenai "github.com/tmc/langchaingo/llms/openai"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/langchain"
)

// newEmbedder returns the adapter over langchaingo's embeddings.EmbedderImpl
// over its OpenAI client, talking to the fake server.
func newEmbedder(t *testing.T, srv *fakeopenai.Server, dims int, opts ...embeddings.Option) *langchain.Embedder {
	t.Helper()
	lce, err := embeddings.NewEmbedder(newLLM(t, srv, lcopenai.WithEmbeddingDimensions(dims)), opts...)
	require.NoError(t, err)
	e, err := langchain.NewEmbedder(lce, langchain.EmbedderConfig{Model: "emb-test@8", Dimensions: 8})
	require.NoError(t, err)
	return e
}

func TestEmbedOverTheWire(t *testing.T) {
	srv := fakeopenai.New(t)
	emb := newEmbedder(t, srv, 8)
	assert.Equal(t, "emb-test@8", emb.Model())
	assert.Equal(t, 8, emb.Dimensions())

	texts := []string{"first", "second\nline", "third"}
	vs, err := emb.Embed(context.Background(), texts)
	require.NoError(t, err)
	assert.Equal(t, [][]float32{
		fakeopenai.Vector("first", 8), fakeopenai.Vector("second line", 8), fakeopenai.Vector("third", 8),
	}, vs)
	assert.Equal(t, []string{"first", "second\nline", "third"}, texts, "the caller's slice is not rewritten")

	v, err := embed.One(context.Background(), emb, "first")
	require.NoError(t, err)
	assert.Equal(t, vs[0], v)

	reqs := srv.EmbeddingRequests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "/v1/embeddings", reqs[0].Path)
	// embeddings.NewEmbedder strips newlines by default.
	assert.JSONEq(t, `{"model":"emb-test","input":["first","second line","third"],"dimensions":8}`, string(reqs[0].Body))
}

func TestEmbedKeepsNewlinesWhenAsked(t *testing.T) {
	srv := fakeopenai.New(t)
	emb := newEmbedder(t, srv, 8, embeddings.WithStripNewLines(false))
	_, err := emb.Embed(context.Background(), []string{"a\nb"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a\nb"}, srv.EmbeddingRequests()[0].Embeddings.Input)
}

func TestEmbedBatches(t *testing.T) {
	srv := fakeopenai.New(t)
	emb := newEmbedder(t, srv, 8, embeddings.WithBatchSize(2))
	vs, err := emb.Embed(context.Background(), []string{"a", "b", "c"})
	require.NoError(t, err)
	assert.Equal(t, fakeopenai.Vector("c", 8), vs[2])
	assert.Len(t, srv.EmbeddingRequests(), 2)
}

func TestEmbedDimensionMismatch(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueEmbeddings(fakeopenai.Embeddings(fakeopenai.Vector("a", 8), []float32{1, 2, 3}))
	emb := newEmbedder(t, srv, 8)
	_, err := emb.Embed(context.Background(), []string{"a", "b"})
	require.ErrorIs(t, err, embed.ErrDimension)
	assert.Contains(t, err.Error(), "model emb-test@8 returned 3 dimensions for text 1, want 8")
}

func TestEmbedCountMismatch(t *testing.T) {
	// Over the OpenAI client, langchaingo itself rejects a wrong count.
	srv := fakeopenai.New(t)
	srv.QueueEmbeddings(fakeopenai.Embeddings(fakeopenai.Vector("a", 8)))
	_, err := newEmbedder(t, srv, 8).Embed(context.Background(), []string{"a", "b"})
	require.Error(t, err)
	assert.Equal(t, "llm/langchain: embed (model emb-test@8): error embedding batch: unexpected length of response", err.Error())

	// A client that does not check is caught here.
	short := embeddings.EmbedderClientFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		return [][]float32{make([]float32, 8)}, nil
	})
	lce, err := embeddings.NewEmbedder(short)
	require.NoError(t, err)
	emb, err := langchain.NewEmbedder(lce, langchain.EmbedderConfig{Model: "m", Dimensions: 8})
	require.NoError(t, err)
	_, err = emb.Embed(context.Background(), []string{"a", "b"})
	require.Error(t, err)
	assert.Equal(t, "llm/langchain: embed (model m): embedder returned 1 vectors for 2 texts", err.Error())
}

// TestEmbedOrderIsTheServers pins a langchaingo behaviour the adapter cannot
// correct: the OpenAI client ignores the index field and keeps the order of
// the server's list.
func TestEmbedOrderIsTheServers(t *testing.T) {
	srv := fakeopenai.New(t)
	a, b := fakeopenai.Vector("a", 8), fakeopenai.Vector("b", 8)
	srv.QueueEmbeddings(fakeopenai.EmbeddingItems(
		fakeopenai.EmbeddingItem{Index: 1, Vector: b},
		fakeopenai.EmbeddingItem{Index: 0, Vector: a},
	))
	vs, err := newEmbedder(t, srv, 8).Embed(context.Background(), []string{"a", "b"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{b, a}, vs)
}

func TestEmbedServerErrorAndCancellation(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueError(503, "busy")
	emb := newEmbedder(t, srv, 8)
	_, err := emb.Embed(context.Background(), []string{"a"})
	require.Error(t, err)
	assert.Equal(t, "llm/langchain: embed (model emb-test@8): error embedding batch: failed to create openai embeddings: API returned unexpected status code: 503: busy", err.Error())

	srv.QueueEmbeddings(fakeopenai.Embeddings(fakeopenai.Vector("a", 8)).WithDelay(time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = emb.Embed(ctx, []string{"a"})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestEmbedRefusesEmptyTextsWithoutCalling(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithoutDefaultEmbeddings())
	emb := newEmbedder(t, srv, 8)
	_, err := emb.Embed(context.Background(), []string{"a", ""})
	require.Error(t, err)
	assert.Equal(t, "llm/langchain: embed (model emb-test@8): text 1 is empty", err.Error())

	vs, err := emb.Embed(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, vs)
	assert.Empty(t, srv.Requests())
}

func TestEmbedPanicBecomesError(t *testing.T) {
	boom := embeddings.EmbedderClientFunc(func(context.Context, []string) ([][]float32, error) { panic("boom") })
	lce, err := embeddings.NewEmbedder(boom)
	require.NoError(t, err)
	emb, err := langchain.NewEmbedder(lce, langchain.EmbedderConfig{Model: "m", Dimensions: 8})
	require.NoError(t, err)
	_, err = emb.Embed(context.Background(), []string{"a"})
	require.Error(t, err)
	assert.Equal(t, "llm/langchain: embed (model m): langchaingo panicked: boom", err.Error())
}

func TestNewEmbedderBadConfig(t *testing.T) {
	lce, err := embeddings.NewEmbedder(embeddings.EmbedderClientFunc(func(context.Context, []string) ([][]float32, error) {
		return nil, errors.New("unused")
	}))
	require.NoError(t, err)
	cases := []struct {
		name string
		e    embeddings.Embedder
		cfg  langchain.EmbedderConfig
		want string
	}{
		{"nil embedder", nil, langchain.EmbedderConfig{Model: "m", Dimensions: 8}, "nil embeddings.Embedder"},
		{"nil typed embedder", (*embeddings.EmbedderImpl)(nil), langchain.EmbedderConfig{Model: "m", Dimensions: 8}, "nil embeddings.Embedder"},
		{"no model", lce, langchain.EmbedderConfig{Dimensions: 8}, "Model is empty"},
		{"no dimensions", lce, langchain.EmbedderConfig{Model: "m"}, "Dimensions 0"},
		{"negative dimensions", lce, langchain.EmbedderConfig{Model: "m", Dimensions: -3}, "Dimensions -3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := langchain.NewEmbedder(tc.e, tc.cfg)
			require.ErrorIs(t, err, langchain.ErrConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
