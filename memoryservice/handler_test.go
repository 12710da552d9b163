package memoryservice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// TestFailAnswersInTheAPIShape: the one error path answers an *apiError
// as it is, a store's ErrInvalid as a 400 naming the body, and anything
// else as a 500 that names no internals and is logged with what the
// request was doing.
func TestFailAnswersInTheAPIShape(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, dbPath(t), sqlite.Config{Logger: quiet()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	chat, err := offline.New(offline.Config{})
	require.NoError(t, err)
	emb, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	var logged bytes.Buffer
	svc, err := New(ctx, st, Config{Chat: chat, Embedder: emb, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { _ = svc.Close(ctx) })

	answer := func(err error) (int, map[string]any) {
		t.Helper()
		w := httptest.NewRecorder()
		svc.fail(w, httptest.NewRequest("GET", "/x", nil), "do the thing", err)
		assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
		var out map[string]any
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &out), "body %s", w.Body)
		e, ok := out["error"].(map[string]any)
		require.True(t, ok, "error shape: %s", w.Body)
		return w.Code, e
	}

	code, e := answer(fmt.Errorf("wrapped: %w", conflict("name", "taken")))
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, map[string]any{"code": "conflict", "message": "taken", "param": "name", "type": "invalid_request_error"}, e)

	code, e = answer(fmt.Errorf("session id: %w", store.ErrInvalid))
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, "body", e["param"])
	assert.Equal(t, "invalid_request", e["code"])
	assert.Contains(t, e["message"], "session id")

	assert.Empty(t, logged.String(), "errors the client is told are not logged")
	code, e = answer(errors.New("disk on fire at /var/secret"))
	assert.Equal(t, http.StatusInternalServerError, code)
	assert.Equal(t, map[string]any{"code": "server_error", "message": "internal error; see the server log", "type": "server_error"}, e)
	assert.Contains(t, logged.String(), "memoryservice: do the thing")
	assert.Contains(t, logged.String(), "disk on fire", "the log has what the answer does not")
}

// TestRouting: a memory store's name and its ":operation" share a path
// segment; an unknown operation, path or method is a 404 in the API's
// shape.
func TestRouting(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("support", nil)
	resp, err := http.Get(s.srv.URL + "/healthz")
	require.NoError(t, err)
	var health map[string]any
	require.NoError(t, jsonDecode(resp.Body, &health))
	resp.Body.Close()
	assert.Equal(t, map[string]any{"status": "ok"}, health)
	resp, err = http.Get(s.srv.URL + "/readyz")
	require.NoError(t, err)
	var ready map[string]any
	require.NoError(t, jsonDecode(resp.Body, &ready))
	resp.Body.Close()
	assert.Equal(t, map[string]any{"status": "ready"}, ready)

	code, out, _ := s.do("GET", "/memory_stores/support:", nil)
	assert.Equal(t, http.StatusOK, code, "an empty operation is the store: %v", out)
	assert.Equal(t, "support", out["name"])
	for _, c := range []struct{ method, path string }{
		{"GET", "/memory_stores/support:search_memories"},
		{"DELETE", "/memory_stores/support:delete_scope"},
		{"POST", "/memory_stores/support:explode"},
		{"GET", "/nowhere"},
		{"POST", "/memory_stores/support/items/a/b"},
		{"PUT", "/memory_stores/support"},
	} {
		code, out, _ := s.do(c.method, c.path, map[string]any{})
		assert.Equal(t, http.StatusNotFound, code, "%s %s: %v", c.method, c.path, out)
		e, _ := out["error"].(map[string]any)
		assert.Equal(t, "not_found", e["code"], "%s %s", c.method, c.path)
		assert.True(t, strings.HasPrefix(e["message"].(string), "no such operation"), "%s %s: %v", c.method, c.path, e)
	}
	// The delete answers name what was deleted.
	code, out, _ = s.do("POST", "/memory_stores/support/items", map[string]any{"scope": "alice", "kind": "user_profile", "content": "Likes tea."})
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out, _ = s.do("POST", "/memory_stores/support:delete_scope", map[string]any{"scope": "alice"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, map[string]any{"object": "memory_store.scope.deleted", "name": "support", "scope": "alice", "deleted": true}, out)
	code, out, _ = s.do("DELETE", "/memory_stores/support", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, map[string]any{"object": "memory_store.deleted", "name": "support", "deleted": true}, out)
}
