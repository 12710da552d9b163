package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/gateway"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

// chatCall sends a chat completions request with key and user.
func chatCall(t *testing.T, base, key, user string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"I like green tea."}]}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set(gateway.UserHeader, user)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestTheGatewayIsServedBehindTheKeys(t *testing.T) {
	up := fakeopenai.New(t)
	up.QueueChat(fakeopenai.Text("Green tea it is."))
	keys := "gateway-key-0123456789, other-store-key-0123 support"
	base, logs, stop := serveOn(t, env(map[string]string{"AGENTMEMORY_SERVER_KEYS": keys, "OPENAI_API_KEY": "upstream-secret"}),
		"-offline", "-gateway-upstream", up.URL(), "-gateway-store", "chat")

	code, _, _ := chatCall(t, base, "", "alice")
	assert.Equal(t, http.StatusUnauthorized, code, "the same keys as the API")
	code, _, body := chatCall(t, base, "other-store-key-0123", "alice")
	assert.Equal(t, http.StatusForbidden, code, "a key limited to other memory stores: %s", body)
	code, h, body := chatCall(t, base, "gateway-key-0123456789", "alice")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "Green tea it is.")
	assert.True(t, strings.HasPrefix(h.Get(gateway.Header), "used"), h.Get(gateway.Header))
	reqs := up.ChatRequests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "Bearer upstream-secret", reqs[0].Header.Get("Authorization"))

	code, out := call(t, "GET", base+"/memory_stores/chat", "gateway-key-0123456789", nil)
	require.Equal(t, http.StatusOK, code, "the gateway's memory store is created: %v", out)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), "serving the OpenAI-compatible gateway")
}

func TestTheGatewayIsOffWithoutAnUpstream(t *testing.T) {
	base, logs, stop := serveOn(t, env(nil))
	code, _, _ := chatCall(t, base, "", "alice")
	assert.Equal(t, http.StatusNotFound, code)
	require.NoError(t, stop())
	assert.Contains(t, logs.String(), "gateway is off")

	err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "m.db"), "-gateway"}, env(nil), io.Discard, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-gateway-upstream")
}
