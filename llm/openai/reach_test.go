package openai_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/llm/openai"
)

// closedPort returns the address of a local port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// A refused connection or an unknown host fails the call at its first
// attempt (the default retries would take seconds more each), naming the
// endpoint and the cause. The calls run under a 5 s deadline: an error
// other than ErrUnreachable (such as the deadline) fails the test.
func TestUnreachableServerFailsFastNamingEndpointAndCause(t *testing.T) {
	t.Parallel()
	const unknown = "models.agentmemory.invalid"
	var dnsErr *net.DNSError
	if _, err := net.DefaultResolver.LookupHost(context.Background(), unknown); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Skipf("this machine's resolver does not answer %s with \"no such host\": %v", unknown, err)
	}
	for _, c := range []struct {
		name, baseURL, cause string
	}{
		{"refused", "http://" + closedPort(t) + "/v1", "connection refused"},
		{"unknown host", "http://" + unknown + "/v1", "no such host"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := openai.Config{BaseURL: c.baseURL, ChatModel: "gpt", EmbeddingModel: "emb", EmbeddingModelDimensions: 8}
			chat, err := openai.NewChat(cfg)
			require.NoError(t, err)
			emb, err := openai.NewEmbedder(cfg)
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err = chat.Complete(ctx, &agent.ChatRequest{Messages: []agent.Message{agent.UserText("hello")}})
			require.ErrorIs(t, err, openai.ErrUnreachable)
			assert.ErrorContains(t, err, "chat completion (model gpt): server unreachable at "+c.baseURL)
			assert.ErrorContains(t, err, c.cause)
			_, err = emb.Embed(ctx, []string{"hello"})
			require.ErrorIs(t, err, openai.ErrUnreachable)
			assert.ErrorContains(t, err, "embed (model emb): server unreachable at "+c.baseURL)
			assert.ErrorContains(t, err, c.cause)
		})
	}
}
