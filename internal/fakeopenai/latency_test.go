package fakeopenai_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

// Each reply waits at least what the profile gives it: time to first token
// plus time per token for chat, a time per request and per input for
// embeddings. (Lower bounds only: a loaded machine may add to them.)
func TestLatencyProfile(t *testing.T) {
	t.Parallel()
	srv := fakeopenai.New(t, fakeopenai.WithLatency(fakeopenai.Latency{
		FirstToken: 80 * time.Millisecond, PerToken: 4 * time.Millisecond,
		Embedding: 60 * time.Millisecond, PerInput: 20 * time.Millisecond,
	}))
	timed := func(path, body string) time.Duration {
		start := time.Now()
		resp := post(t, nil, srv.URL()+path, body)
		require.Equal(t, http.StatusOK, resp.status, resp.body)
		return time.Since(start)
	}
	srv.QueueChat(fakeopenai.Text(strings.Repeat("abcd", 30))) // 30 tokens
	assert.GreaterOrEqual(t, timed("/chat/completions", chatBody), 80*time.Millisecond+30*4*time.Millisecond)
	srv.QueueChat(fakeopenai.Text("short").WithUsage(10, 50)) // the usage's 50 tokens
	assert.GreaterOrEqual(t, timed("/chat/completions", chatBody), 80*time.Millisecond+50*4*time.Millisecond)
	srv.QueueChat(fakeopenai.ToolCalls(fakeopenai.Call("c1", "lookup", `{"query":"401k rollover"}`)).WithDelay(50 * time.Millisecond))
	assert.GreaterOrEqual(t, timed("/chat/completions", chatBody), 80*time.Millisecond+50*time.Millisecond, "WithDelay adds to the profile")
	assert.GreaterOrEqual(t, timed("/embeddings", `{"model":"e","input":["a","b","c"]}`), 60*time.Millisecond+3*20*time.Millisecond)
}

func TestLatencyHonoursClientCancellation(t *testing.T) {
	t.Parallel()
	srv := fakeopenai.New(t, fakeopenai.WithLatency(fakeopenai.Latency{FirstToken: time.Minute}))
	srv.QueueChat(fakeopenai.Text("late"))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/chat/completions", strings.NewReader(chatBody))
	require.NoError(t, err)
	_, err = http.DefaultClient.Do(req)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	// The server's cleanup waits for the handler: it would hang here if
	// the wait ignored the disconnect.
}
