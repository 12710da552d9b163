package main

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

// A chat model whose check fails for another reason than being unknown
// refuses the store with 503 (try again), and the failed check is not
// kept: the next create checks again, and succeeds.
func TestFailedChatModelCheckIsA503AndNotKept(t *testing.T) {
	srv := fakeopenai.New(t)
	var flaky atomic.Int32
	srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		if r.Chat.Model == "flaky-chat" && flaky.Add(1) == 1 {
			return fakeopenai.Error(http.StatusUnauthorized, "credentials refused, for now")
		}
		return fakeopenai.Text("OK")
	})
	base, _ := serve(t, map[string]string{"OPENAI_BASE_URL": srv.URL(), "OPENAI_CHAT_MODEL": "env-chat",
		"OPENAI_EMBEDDING_MODEL": "env-emb", "OPENAI_EMBEDDING_DIMENSIONS": "8"})
	body := map[string]any{"name": "flaky", "definition": map[string]any{"kind": "default", "chat_model": "flaky-chat", "embedding_model": "env-emb"}}
	code, out := call(t, "POST", base+"/memory_stores", "", body)
	require.Equal(t, http.StatusServiceUnavailable, code, "%v", out)
	assert.Equal(t, "unavailable", out["error"].(map[string]any)["code"])
	code, out = call(t, "POST", base+"/memory_stores", "", body)
	require.Equal(t, http.StatusOK, code, "checked again: %v", out)
	assert.EqualValues(t, 2, flaky.Load())
}
