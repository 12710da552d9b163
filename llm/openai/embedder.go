package openai

import (
	"context"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/agentmemory/agentmemory/embed"
)

// Embedder is an embed.Embedder on the Embeddings API of OpenAI, Azure
// OpenAI or an OpenAI-compatible server. It is safe for concurrent use.
type Embedder struct {
	svc       openai.EmbeddingService
	model     string
	dims      int
	sendDims  bool
	batchSize int
	endpoint  string
}

var _ embed.Embedder = (*Embedder)(nil)

// NewEmbedder returns an embedder for cfg.EmbeddingModel. It fails with an
// error wrapping ErrConfig that names the missing or inconsistent field.
func NewEmbedder(cfg Config) (*Embedder, error) {
	if strings.TrimSpace(cfg.EmbeddingModel) == "" {
		what := "model"
		if cfg.Service() == ServiceAzure {
			what = "deployment name"
		}
		return nil, configErr("EmbeddingModel is empty; set the embedding %s", what)
	}
	dims, send, err := cfg.embeddingDimensions()
	if err != nil {
		return nil, err
	}
	batch := cfg.EmbeddingBatchSize
	switch {
	case batch < 0:
		return nil, configErr("EmbeddingBatchSize %d is negative", batch)
	case batch == 0 && cfg.Service() == ServiceCompatible:
		batch = DefaultCompatibleBatchSize
	case batch == 0:
		batch = DefaultOpenAIBatchSize
	}
	opts, err := cfg.options()
	if err != nil {
		return nil, err
	}
	return &Embedder{
		svc:       openai.NewEmbeddingService(opts...),
		model:     cfg.EmbeddingModel,
		dims:      dims,
		sendDims:  send,
		batchSize: batch,
		endpoint:  cfg.Endpoint(),
	}, nil
}

// Model implements embed.Embedder: the configured model (Azure: deployment)
// name.
func (e *Embedder) Model() string { return e.model }

// Dimensions implements embed.Embedder.
func (e *Embedder) Dimensions() int { return e.dims }

// Embed implements embed.Embedder. It sends the texts in batches of at most
// the configured batch size, puts every vector back at its input's
// position using the server's index field, and fails if a vector is
// missing, duplicated, or (wrapping embed.ErrDimension) of the wrong length.
// Empty texts are refused up front: the OpenAI API rejects them. An
// unreachable server fails at once, as for Chat.Complete (ErrUnreachable).
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, _, err := e.EmbedCounted(ctx, texts)
	return out, err
}

// EmbedCounted is Embed that also returns the input tokens the server
// reported (usage.prompt_tokens, summed over the batches), for package
// usage. When a later batch fails, the tokens of the batches sent before
// it are returned with the error.
func (e *Embedder) EmbedCounted(ctx context.Context, texts []string) ([][]float32, int, error) {
	for i, t := range texts {
		if t == "" {
			return nil, 0, fmt.Errorf("llm/openai: embed (model %s): text %d is empty", e.model, i)
		}
	}
	out := make([][]float32, len(texts))
	tokens := 0
	for start := 0; start < len(texts); start += e.batchSize {
		end := min(start+e.batchSize, len(texts))
		n, err := e.embedBatch(ctx, texts[start:end], out[start:end])
		tokens += n
		if err != nil {
			return nil, tokens, err
		}
	}
	return out, tokens, nil
}

// embedBatch embeds one batch into out and returns the input tokens the
// server reported for it.
func (e *Embedder) embedBatch(ctx context.Context, texts []string, out [][]float32) (int, error) {
	p := openai.EmbeddingNewParams{
		Model:          e.model,
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}
	if e.sendDims {
		p.Dimensions = param.NewOpt(int64(e.dims))
	}
	var resp *openai.CreateEmbeddingResponse
	err := guarded(ctx, e.endpoint, func(ctx context.Context, report option.RequestOption) (err error) {
		resp, err = e.svc.New(ctx, p, report)
		return err
	})
	if err != nil {
		return 0, wrapAPIError(fmt.Sprintf("embed (model %s)", e.model), err)
	}
	tokens := int(max(0, resp.Usage.PromptTokens))
	if len(resp.Data) != len(texts) {
		return tokens, fmt.Errorf("llm/openai: embed (model %s): server returned %d vectors for %d texts", e.model, len(resp.Data), len(texts))
	}
	for _, d := range resp.Data {
		i := d.Index
		if i < 0 || int(i) >= len(texts) {
			return tokens, fmt.Errorf("llm/openai: embed (model %s): vector index %d out of range [0,%d)", e.model, i, len(texts))
		}
		if out[i] != nil {
			return tokens, fmt.Errorf("llm/openai: embed (model %s): duplicate vector index %d", e.model, i)
		}
		if len(d.Embedding) != e.dims {
			return tokens, fmt.Errorf("%w: model %s returned %d dimensions for text %d, want %d",
				embed.ErrDimension, e.model, len(d.Embedding), i, e.dims)
		}
		v := make([]float32, len(d.Embedding))
		for j, x := range d.Embedding {
			v[j] = float32(x)
		}
		out[i] = v
	}
	return tokens, nil
}

// MeasureDimensions asks the server for the embedding of one short text
// with cfg.EmbeddingModel and returns the vector's length: the model's
// native length, for a model whose length is not known in advance (cfg's
// dimension fields are not sent). An unknown model fails with an error
// wrapping ErrNotFound.
func MeasureDimensions(ctx context.Context, cfg Config) (int, error) {
	if strings.TrimSpace(cfg.EmbeddingModel) == "" {
		return 0, configErr("EmbeddingModel is empty")
	}
	opts, err := cfg.options()
	if err != nil {
		return 0, err
	}
	svc := openai.NewEmbeddingService(opts...)
	p := openai.EmbeddingNewParams{
		Model:          cfg.EmbeddingModel,
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"dimension probe"}},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}
	var resp *openai.CreateEmbeddingResponse
	err = guarded(ctx, cfg.Endpoint(), func(ctx context.Context, report option.RequestOption) (err error) {
		resp, err = svc.New(ctx, p, report)
		return err
	})
	if err != nil {
		return 0, wrapAPIError(fmt.Sprintf("measure dimensions (model %s)", cfg.EmbeddingModel), err)
	}
	if len(resp.Data) != 1 || len(resp.Data[0].Embedding) == 0 {
		return 0, fmt.Errorf("llm/openai: measure dimensions (model %s): server returned %d vectors, want one non-empty vector", cfg.EmbeddingModel, len(resp.Data))
	}
	return len(resp.Data[0].Embedding), nil
}
