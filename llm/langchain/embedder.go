package langchain

import (
	"context"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/embeddings"

	"github.com/agentmemory/agentmemory/embed"
)

// EmbedderConfig configures an Embedder. Both fields are required: an
// embeddings.Embedder reports neither its model nor its vector length.
type EmbedderConfig struct {
	// Model identifies the embedding model, as embed.Embedder.Model: vectors
	// of different models must never be compared, so name it exactly (say
	// "text-embedding-3-small@512"). It is not sent anywhere; configure the
	// model on the langchaingo client.
	Model string
	// Dimensions is the length of every vector; an answer of another length
	// is an error wrapping embed.ErrDimension. It is not sent anywhere
	// either (with langchaingo's openai client, use
	// openai.WithEmbeddingDimensions to ask for a length).
	Dimensions int
}

// Embedder is an embed.Embedder on a github.com/tmc/langchaingo
// embeddings.Embedder. It is safe for concurrent use when the
// embeddings.Embedder is (embeddings.EmbedderImpl over langchaingo's
// clients is).
type Embedder struct {
	e     embeddings.Embedder
	model string
	dims  int
}

var _ embed.Embedder = (*Embedder)(nil)

// NewEmbedder returns an embedder on e. It fails with an error wrapping
// ErrConfig when e is nil, Model is empty or Dimensions is not positive.
func NewEmbedder(e embeddings.Embedder, cfg EmbedderConfig) (*Embedder, error) {
	switch {
	case isNil(e):
		return nil, configErr("nil embeddings.Embedder")
	case strings.TrimSpace(cfg.Model) == "":
		return nil, configErr("Model is empty; name the embedding model")
	case cfg.Dimensions <= 0:
		return nil, configErr("Dimensions %d: want the model's positive vector length", cfg.Dimensions)
	}
	return &Embedder{e: e, model: cfg.Model, dims: cfg.Dimensions}, nil
}

// Model implements embed.Embedder: the configured model name.
func (e *Embedder) Model() string { return e.model }

// Dimensions implements embed.Embedder: the configured length.
func (e *Embedder) Dimensions() int { return e.dims }

// Embed implements embed.Embedder with one EmbedDocuments call (the
// embeddings.Embedder does its own batching). Empty texts are refused up
// front, naming their index, as remote APIs reject them. The answer must
// hold one vector per text, each of Dimensions floats, or Embed fails: a
// wrong count names both counts, a wrong length wraps embed.ErrDimension
// and names the text. Vectors are taken in the order returned: langchaingo
// keeps no index, so it cannot be checked here.
//
// texts is never modified: EmbedDocuments of embeddings.EmbedderImpl
// rewrites its argument in place when StripNewLines is on (the default, which
// replaces every "\n" by a space), so a copy is passed. A panic in the
// embeddings.Embedder becomes an error.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for i, t := range texts {
		if t == "" {
			return nil, fmt.Errorf("llm/langchain: embed (model %s): text %d is empty", e.model, i)
		}
	}
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	in := append([]string(nil), texts...)
	vs, err := guard(func() ([][]float32, error) { return e.e.EmbedDocuments(ctx, in) })
	if err != nil {
		return nil, wrapCallError(ctx, fmt.Sprintf("embed (model %s)", e.model), err)
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("llm/langchain: embed (model %s): embedder returned %d vectors for %d texts", e.model, len(vs), len(texts))
	}
	for i, v := range vs {
		if len(v) != e.dims {
			return nil, fmt.Errorf("%w: model %s returned %d dimensions for text %d, want %d",
				embed.ErrDimension, e.model, len(v), i, e.dims)
		}
	}
	return vs, nil
}
