package cosmos

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/store/storetest"
)

// offlineModels returns the models of the end-to-end tests: the offline
// chat client and a lexical embedder of storetest.Dimensions.
func offlineModels(t *testing.T) (*offline.Client, *lexical.Embedder) {
	t.Helper()
	model, err := offline.New(offline.Config{})
	require.NoError(t, err)
	emb, err := lexical.New(lexical.Config{Dimensions: storetest.Dimensions})
	require.NoError(t, err)
	return model, emb
}
