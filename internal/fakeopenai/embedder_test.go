package fakeopenai_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/openai"
)

func TestEmbedWith(t *testing.T) {
	e, err := lexical.New(lexical.Config{Dimensions: 16})
	require.NoError(t, err)
	srv := fakeopenai.New(t)
	srv.HandleEmbeddings(fakeopenai.EmbedWith(e))
	client, err := openai.NewEmbedder(openai.Config{BaseURL: srv.URL(), EmbeddingModel: "lexical-served", EmbeddingDimensions: 16, MaxRetryDelay: time.Millisecond})
	require.NoError(t, err)

	texts := []string{"a Roth IRA rollover", "the dog Rex"}
	want, err := e.Embed(context.Background(), texts)
	require.NoError(t, err)
	got, err := client.Embed(context.Background(), texts)
	require.NoError(t, err)
	assert.InDeltaSlice(t, want[0], got[0], 1e-6)
	assert.InDeltaSlice(t, want[1], got[1], 1e-6)
}
