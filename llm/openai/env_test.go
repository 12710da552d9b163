package openai_test

import (
	"context"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/openai"
)

// env returns a lookup function over a map, so tests never touch the
// process environment.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func TestFromEnvNotConfigured(t *testing.T) {
	for _, vars := range []map[string]string{
		nil,
		{"OPENAI_API_KEY": "", "AZURE_OPENAI_ENDPOINT": "  ", "UNRELATED": "x"},
	} {
		c, err := openai.FromEnv(env(vars), openai.Config{})
		assert.ErrorIs(t, err, openai.ErrNotConfigured)
		assert.Nil(t, c)
	}
}

func TestFromEnvOpenAIDefaults(t *testing.T) {
	c, err := openai.FromEnv(env(map[string]string{"OPENAI_API_KEY": "sk-secret"}), openai.Config{})
	require.NoError(t, err)
	assert.Equal(t, openai.ServiceOpenAI, c.Config.Service())
	assert.Equal(t, openai.DefaultChatModel, c.Chat.Model())
	assert.Equal(t, openai.DefaultMiniModel, c.Mini.Model())
	assert.Equal(t, openai.DefaultMiniModel, c.MiniModel)
	assert.Equal(t, openai.DefaultEmbeddingModel, c.Embedder.Model())
	assert.Equal(t, 1536, c.Embedder.Dimensions())
	assert.Equal(t, "openai https://api.openai.com/v1 chat=gpt-4.1 mini=gpt-4.1-mini embedding=text-embedding-3-small (1536 dimensions)", c.String())
	assert.NotContains(t, c.String(), "sk-secret")
}

func TestFromEnvCompatibleServer(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("main"), fakeopenai.Text("mini"))
	c, err := openai.FromEnv(env(map[string]string{
		"OPENAI_BASE_URL":             srv.URL(),
		"OPENAI_CHAT_MODEL":           "llama3.2",
		"OPENAI_EMBEDDING_MODEL":      "nomic-embed-text",
		"OPENAI_EMBEDDING_DIMENSIONS": "6",
	}), openai.Config{MaxRetryDelay: time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, openai.ServiceCompatible, c.Config.Service())
	assert.Equal(t, "llama3.2", c.Mini.Model(), "mini defaults to the chat model")

	ctx := context.Background()
	req := &agent.ChatRequest{Messages: []agent.Message{agent.UserText("q")}, MaxTokens: 9}
	_, err = c.Chat.Complete(ctx, req)
	require.NoError(t, err)
	_, err = c.Mini.Complete(ctx, req)
	require.NoError(t, err)
	vs, err := c.Embedder.Embed(ctx, []string{"x"})
	require.NoError(t, err)
	assert.Len(t, vs[0], 6)

	chats := srv.ChatRequests()
	require.Len(t, chats, 2)
	assert.JSONEq(t, `{"model":"llama3.2","messages":[{"role":"user","content":"q"}],"max_tokens":9}`, string(chats[0].Body))
	assert.Empty(t, chats[0].Header.Get("Authorization"), "no key configured")
	embs := srv.EmbeddingRequests()
	require.Len(t, embs, 1)
	assert.Equal(t, 6, embs[0].Embeddings.Dimensions)
	assert.Equal(t, "nomic-embed-text", embs[0].Embeddings.Model)
}

func TestFromEnvAzure(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithTLS())
	srv.QueueChat(fakeopenai.Text("main"), fakeopenai.Text("mini"))
	c, err := openai.FromEnv(env(map[string]string{
		"AZURE_OPENAI_ENDPOINT":             srv.AzureEndpoint(),
		"AZURE_OPENAI_API_KEY":              "az-key",
		"AZURE_OPENAI_API_VERSION":          "2024-06-01",
		"AZURE_OPENAI_CHAT_DEPLOYMENT":      "gpt4-prod",
		"AZURE_OPENAI_CHAT_MINI_DEPLOYMENT": "gpt4-mini-prod",
		"AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "text-embedding-3-large",
		"OPENAI_API_KEY":                    "ignored-when-azure-is-set",
		"OPENAI_CHAT_MODEL":                 "ignored",
	}), openai.Config{HTTPClient: srv.Client(), Azure: openai.AzureConfig{Credential: &fakeCredential{}}})
	require.NoError(t, err)
	assert.Equal(t, openai.ServiceAzure, c.Config.Service())
	assert.Equal(t, 3072, c.Embedder.Dimensions(), "known model name as deployment name")

	ctx := context.Background()
	req := &agent.ChatRequest{Messages: []agent.Message{agent.UserText("q")}}
	_, err = c.Chat.Complete(ctx, req)
	require.NoError(t, err)
	_, err = c.Mini.Complete(ctx, req)
	require.NoError(t, err)

	reqs := srv.ChatRequests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "/openai/deployments/gpt4-prod/chat/completions", reqs[0].Path)
	assert.Equal(t, "/openai/deployments/gpt4-mini-prod/chat/completions", reqs[1].Path)
	for _, r := range reqs {
		assert.Equal(t, "2024-06-01", r.Query.Get("api-version"))
		assert.Equal(t, "az-key", r.Header.Get("Api-Key"), "the env key wins over the base credential")
		assert.Empty(t, r.Header.Get("Authorization"))
	}
}

func TestFromEnvAzureEntraID(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithTLS())
	srv.QueueChat(fakeopenai.Text("ok"))
	c, err := openai.FromEnv(env(map[string]string{
		"AZURE_OPENAI_ENDPOINT":             srv.AzureEndpoint(),
		"AZURE_OPENAI_CHAT_DEPLOYMENT":      "chat",
		"AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "emb",
		"OPENAI_EMBEDDING_DIMENSIONS":       "256",
	}), openai.Config{HTTPClient: srv.Client(), Azure: openai.AzureConfig{Credential: &fakeCredential{}}})
	require.NoError(t, err)
	assert.Equal(t, "chat", c.Mini.Model(), "mini deployment defaults to the chat deployment")
	assert.Equal(t, 256, c.Embedder.Dimensions())

	_, err = c.Chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("q")}})
	require.NoError(t, err)
	r := srv.ChatRequests()[0]
	assert.Equal(t, "Bearer entra-token-123", r.Header.Get("Authorization"))
	assert.Equal(t, openai.DefaultAzureAPIVersion, r.Query.Get("api-version"))
}

func TestFromEnvErrorsNameTheVariable(t *testing.T) {
	cases := []struct {
		name string
		vars map[string]string
		want string
	}{
		{"azure without chat deployment", map[string]string{"AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com", "AZURE_OPENAI_API_KEY": "k"},
			"AZURE_OPENAI_CHAT_DEPLOYMENT is required with AZURE_OPENAI_ENDPOINT"},
		{"azure without embedding deployment", map[string]string{"AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com", "AZURE_OPENAI_API_KEY": "k", "AZURE_OPENAI_CHAT_DEPLOYMENT": "c"},
			"AZURE_OPENAI_EMBEDDING_DEPLOYMENT is required"},
		{"azure deployment of unknown size", map[string]string{"AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com", "AZURE_OPENAI_API_KEY": "k",
			"AZURE_OPENAI_CHAT_DEPLOYMENT": "c", "AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "emb"},
			`OPENAI_EMBEDDING_DIMENSIONS is required: the vector length of embedding model "emb" is not known`},
		{"azure key without endpoint", map[string]string{"AZURE_OPENAI_API_KEY": "k"}, "AZURE_OPENAI_API_KEY set without AZURE_OPENAI_ENDPOINT"},
		{"model without key", map[string]string{"OPENAI_CHAT_MODEL": "m"}, "OPENAI_CHAT_MODEL set without OPENAI_API_KEY or OPENAI_BASE_URL"},
		{"base url without chat model", map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1"}, "OPENAI_CHAT_MODEL is required with OPENAI_BASE_URL"},
		{"base url without embedding model", map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1", "OPENAI_CHAT_MODEL": "m"}, "OPENAI_EMBEDDING_MODEL is required"},
		{"bad dimensions", map[string]string{"OPENAI_API_KEY": "k", "OPENAI_EMBEDDING_DIMENSIONS": "many"}, `OPENAI_EMBEDDING_DIMENSIONS="many": want a positive integer`},
		{"zero dimensions", map[string]string{"OPENAI_API_KEY": "k", "OPENAI_EMBEDDING_DIMENSIONS": "0"}, "OPENAI_EMBEDDING_DIMENSIONS"},
		{"bad base url", map[string]string{"OPENAI_BASE_URL": "localhost:8080", "OPENAI_CHAT_MODEL": "m", "OPENAI_EMBEDDING_MODEL": "e"},
			`OPENAI_BASE_URL "localhost:8080": want an absolute http or https URL; OPENAI_EMBEDDING_DIMENSIONS is required`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := openai.FromEnv(env(tc.vars), openai.Config{})
			require.Error(t, err)
			assert.Nil(t, c)
			assert.ErrorIs(t, err, openai.ErrConfig)
			assert.NotErrorIs(t, err, openai.ErrNotConfigured)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// Every missing variable is named in one message, not one per run.
func TestFromEnvNamesEveryMissingVariableAtOnce(t *testing.T) {
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com", "AZURE_OPENAI_API_KEY": "k"},
			"AZURE_OPENAI_CHAT_DEPLOYMENT is required with AZURE_OPENAI_ENDPOINT; " +
				"AZURE_OPENAI_EMBEDDING_DEPLOYMENT is required with AZURE_OPENAI_ENDPOINT; " +
				"OPENAI_EMBEDDING_DIMENSIONS is required: the vector length of the embedding model is not known"},
		{map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1"},
			"OPENAI_CHAT_MODEL is required with OPENAI_BASE_URL; " +
				"OPENAI_EMBEDDING_MODEL is required with OPENAI_BASE_URL; " +
				"OPENAI_EMBEDDING_DIMENSIONS is required: the vector length of the embedding model is not known"},
	} {
		_, err := openai.FromEnv(env(tc.vars), openai.Config{})
		require.ErrorIs(t, err, openai.ErrConfig)
		assert.EqualError(t, err, "llm/openai: invalid config: "+tc.want)
	}
}

func TestFromEnvAzureWithoutKeyUsesDefaultAzureCredential(t *testing.T) {
	c, err := openai.FromEnv(env(map[string]string{
		"AZURE_OPENAI_ENDPOINT":             "https://my-resource.openai.azure.com",
		"AZURE_OPENAI_CHAT_DEPLOYMENT":      "chat",
		"AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "text-embedding-3-small",
	}), openai.Config{})
	require.NoError(t, err)
	assert.IsType(t, &azidentity.DefaultAzureCredential{}, c.Config.Azure.Credential)
	assert.Empty(t, c.Config.Azure.APIKey)
	assert.Equal(t, "azure https://my-resource.openai.azure.com chat=chat mini=chat embedding=text-embedding-3-small (1536 dimensions)", c.String())
}
