package stack

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
	"github.com/agentmemory/agentmemory/store/cosmos"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestModelsFromEnv(t *testing.T) {
	m, err := ModelsFromEnv(env(nil), false)
	require.NoError(t, err)
	assert.True(t, m.Offline)
	assert.Contains(t, m.Description, "no LLM")

	assert.Nil(t, m.OpenAI)

	m, err = ModelsFromEnv(env(map[string]string{"OPENAI_API_KEY": "sk-test"}), false)
	require.NoError(t, err)
	assert.False(t, m.Offline)
	require.NotNil(t, m.OpenAI)
	assert.Equal(t, "text-embedding-3-small", m.OpenAI.Config.EmbeddingModel)
	assert.NotContains(t, m.Description, "sk-test", "no secret in the description")

	m, err = ModelsFromEnv(env(map[string]string{"OPENAI_API_KEY": "sk-test"}), true)
	require.NoError(t, err)
	assert.True(t, m.Offline, "forced offline")

	_, err = ModelsFromEnv(env(map[string]string{"AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com"}), false)
	assert.ErrorContains(t, err, "AZURE_OPENAI", "half-configured is an error, never the offline client")

	// The model's and the store's problems in one message.
	_, err = ModelsFromEnv(env(map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1",
		"AZURE_COSMOS_ENDPOINT": "https://x.documents.azure.com", "AZURE_COSMOS_VECTOR_INDEX": "hnsw"}), false)
	require.Error(t, err)
	for _, want := range []string{"model configuration", "OPENAI_CHAT_MODEL", "OPENAI_EMBEDDING_MODEL", "OPENAI_EMBEDDING_DIMENSIONS",
		"store configuration", "AZURE_COSMOS_VECTOR_INDEX"} {
		assert.ErrorContains(t, err, want)
	}
	_, err = ModelsFromEnv(env(map[string]string{"AZURE_COSMOS_ENDPOINT": "https://x.documents.azure.com", "AZURE_COSMOS_AUTOSCALE_MAX_RU": "10"}), true)
	assert.ErrorContains(t, err, "AZURE_COSMOS_AUTOSCALE_MAX_RU", "offline models, the store still checked")
}

func TestCosmosConfigured(t *testing.T) {
	assert.False(t, CosmosConfigured(env(nil)))
	assert.True(t, CosmosConfigured(env(map[string]string{"AZURE_COSMOS_ENDPOINT": "https://x.documents.azure.com"})))
}

func TestOpenStore(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	path := filepath.Join(t.TempDir(), "m.db")
	st, desc, err := OpenStore(context.Background(), env(nil), path, 8, quiet)
	require.NoError(t, err)
	defer st.Close()
	assert.Equal(t, "SQLite file "+path, desc)
	_, ok := st.(*sqlite.Store)
	assert.True(t, ok)

	_, _, err = OpenStore(context.Background(), env(map[string]string{"AZURE_COSMOS_ENDPOINT": "https://x", "AZURE_COSMOS_VECTOR_INDEX": "hnsw"}), path, 8, quiet)
	assert.ErrorContains(t, err, "AZURE_COSMOS_VECTOR_INDEX")

	endpoint := cosmostest.Endpoint(t) // skips without Node.js or the npm packages (fails in CI)
	db := cosmostest.DatabaseName(t)
	cs, desc, err := OpenStore(context.Background(), env(map[string]string{
		"AZURE_COSMOS_ENDPOINT": endpoint, "AZURE_COSMOS_KEY": cosmostest.Key, "AZURE_COSMOS_DATABASE": db,
	}), path, 8, quiet)
	require.NoError(t, err)
	defer cs.Close()
	assert.Equal(t, "Azure Cosmos DB "+endpoint+", database "+db, desc)
	_, ok = cs.(*cosmos.Store)
	assert.True(t, ok)
}

// TestWithoutServer: without the Cosmos test server's npm packages,
// TestOpenStore checks the SQLite half and skips the Cosmos half, saying
// why once; in CI it fails.
func TestWithoutServer(t *testing.T) {
	cosmostest.CheckWithoutServer(t, "^TestOpenStore$")
}

func TestDeletionLogKey(t *testing.T) {
	key, err := DeletionLogKey(env(nil))
	require.NoError(t, err)
	assert.Nil(t, key, "unset: the log's own key")
	_, err = DeletionLogKey(env(map[string]string{"AGENTMEMORY_DELETION_LOG_KEY": "short"}))
	assert.ErrorContains(t, err, "AGENTMEMORY_DELETION_LOG_KEY is 5 bytes; at least 32")
	secret := "0123456789abcdef0123456789abcdef"
	key, err = DeletionLogKey(env(map[string]string{"AGENTMEMORY_DELETION_LOG_KEY": secret}))
	require.NoError(t, err)
	assert.Equal(t, []byte(secret), key)
}

func TestLogger(t *testing.T) {
	for _, debug := range []bool{false, true} {
		var b strings.Builder
		log := Logger(&b, debug)
		log.Debug("detail")
		log.Info("event", "k", "v")
		assert.Equal(t, debug, strings.Contains(b.String(), "msg=detail"), "debug lines only at debug level: %q", b.String())
		assert.Contains(t, b.String(), "level=INFO msg=event k=v")
	}
}
