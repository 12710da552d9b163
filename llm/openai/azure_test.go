package openai_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/openai"
)

// fakeCredential is an azcore.TokenCredential handing out a fixed token.
type fakeCredential struct {
	mu     sync.Mutex
	scopes [][]string
}

func (f *fakeCredential) GetToken(_ context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scopes = append(f.scopes, opts.Scopes)
	return azcore.AccessToken{Token: "entra-token-123", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

func (f *fakeCredential) calls() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.scopes...)
}

// azureConfig returns a Config for the fake server (which must use TLS:
// Azure credentials are never sent over plain HTTP) as an Azure endpoint.
func azureConfig(srv *fakeopenai.Server) openai.Config {
	return openai.Config{
		Azure:               openai.AzureConfig{Endpoint: srv.AzureEndpoint()},
		ChatModel:           "my-gpt",
		EmbeddingModel:      "my-embedding",
		EmbeddingDimensions: 4,
		MaxRetryDelay:       time.Millisecond,
		HTTPClient:          srv.Client(),
	}
}

func TestAzureAPIKey(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithTLS())
	srv.QueueChat(fakeopenai.Text("hello from azure"))
	cfg := azureConfig(srv)
	cfg.Azure.APIKey = "azure-key-1"
	chat := newChat(t, cfg)

	resp, err := chat.Complete(context.Background(), &agent.ChatRequest{
		Messages:  []agent.Message{agent.UserText("hi")},
		MaxTokens: 50,
	})
	require.NoError(t, err)
	assert.Equal(t, "hello from azure", resp.Message.Text)

	reqs := srv.ChatRequests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, "/openai/deployments/my-gpt/chat/completions", r.Path)
	assert.Equal(t, "my-gpt", r.Deployment)
	assert.Equal(t, openai.DefaultAzureAPIVersion, r.Query.Get("api-version"))
	assert.Equal(t, "azure-key-1", r.Header.Get("Api-Key"))
	assert.Empty(t, r.Header.Get("Authorization"))
	// Azure gets max_completion_tokens.
	assert.JSONEq(t, `{"model":"my-gpt","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":50}`, string(r.Body))
}

func TestAzureEntraIDToken(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithTLS())
	srv.QueueChat(fakeopenai.Text("ok"))
	cred := &fakeCredential{}
	cfg := azureConfig(srv)
	cfg.Azure.Credential = cred
	cfg.Azure.APIVersion = "2025-04-01-preview"
	chat := newChat(t, cfg)

	_, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("hi")}})
	require.NoError(t, err)

	reqs := srv.ChatRequests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/openai/deployments/my-gpt/chat/completions", reqs[0].Path)
	assert.Equal(t, "2025-04-01-preview", reqs[0].Query.Get("api-version"))
	assert.Equal(t, "Bearer entra-token-123", reqs[0].Header.Get("Authorization"))
	assert.Empty(t, reqs[0].Header.Get("Api-Key"))
	require.NotEmpty(t, cred.calls())
	assert.Equal(t, []string{openai.DefaultAzureScope}, cred.calls()[0])
}

func TestAzureCustomScopesAndRetry(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithTLS())
	srv.QueueError(http.StatusServiceUnavailable, "busy")
	srv.QueueChat(fakeopenai.Text("ok"))
	cred := &fakeCredential{}
	cfg := azureConfig(srv)
	cfg.Azure.Credential = cred
	cfg.Azure.Scopes = []string{"api://custom/.default"}
	chat := newChat(t, cfg)

	_, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("hi")}})
	require.NoError(t, err)
	reqs := srv.ChatRequests()
	require.Len(t, reqs, 2)
	for _, r := range reqs {
		assert.Equal(t, "Bearer entra-token-123", r.Header.Get("Authorization"))
	}
	assert.Equal(t, []string{"api://custom/.default"}, cred.calls()[0])
}

func TestAzureRefusesPlainHTTPCredentials(t *testing.T) {
	srv := fakeopenai.New(t) // plain HTTP
	cfg := azureConfig(srv)
	cfg.HTTPClient = nil
	cfg.Azure.APIKey = "azure-key-1"
	chat := newChat(t, cfg)
	_, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("hi")}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "HTTPS")
	assert.Empty(t, srv.Requests(), "the key never left the process")
}

func TestAzureEmbeddings(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithTLS())
	cfg := azureConfig(srv)
	cfg.Azure.APIKey = "azure-key-1"
	emb, err := openai.NewEmbedder(cfg)
	require.NoError(t, err)

	vs, err := emb.Embed(context.Background(), []string{"a", "b"})
	require.NoError(t, err)
	assert.Equal(t, [][]float32{fakeopenai.Vector("a", 4), fakeopenai.Vector("b", 4)}, vs)

	reqs := srv.EmbeddingRequests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/openai/deployments/my-embedding/embeddings", reqs[0].Path)
	assert.Equal(t, openai.DefaultAzureAPIVersion, reqs[0].Query.Get("api-version"))
	assert.Equal(t, "azure-key-1", reqs[0].Header.Get("Api-Key"))
	assert.JSONEq(t, `{"model":"my-embedding","input":["a","b"],"dimensions":4,"encoding_format":"float"}`, string(reqs[0].Body))
}
