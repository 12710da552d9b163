package gateway_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/gateway"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestEachRequestIsLoggedWithoutItsUser(t *testing.T) {
	t.Parallel()
	var logs lockedBuffer
	r := newRig(t, func(c *gateway.Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	r.up.QueueChat(fakeopenai.Text("ok"))
	status, _, _ := r.do(http.MethodPost, "/v1/chat/completions", map[string]string{gateway.UserHeader: "zelda-the-user"},
		map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	require.Equal(t, http.StatusOK, status)
	status, _, _ = r.do(http.MethodGet, "/v1/memory?user_id=zelda-the-user", nil, nil)
	require.Equal(t, http.StatusOK, status)
	out := logs.String()
	assert.Contains(t, out, `route="POST /v1/chat/completions" status=200 memory="used; retrieval=skipped"`)
	assert.Contains(t, out, `route="GET /v1/memory" status=200`)
	assert.NotContains(t, out, "zelda")
}
