package memoryservice

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemoryStoreLifecycle(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	created := s.createStore("support", map[string]any{"user_profile_enabled": true, "chat_summary_enabled": true, "user_profile_details": "food preferences"})
	assert.Equal(t, "memory_store", created["object"])
	assert.Equal(t, "support", created["name"])
	assert.NotEmpty(t, created["id"])
	assert.Greater(t, created["created_at"].(float64), float64(1e9), "unix seconds")
	def := created["definition"].(map[string]any)
	assert.Equal(t, "gpt-4.1", def["chat_model"])
	assert.Equal(t, "food preferences", def["options"].(map[string]any)["user_profile_details"])

	code, out, _ := s.do("POST", "/memory_stores", map[string]any{"name": "support",
		"definition": map[string]any{"kind": "default", "chat_model": "m", "embedding_model": "e"}})
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, "name", errorParam(t, out))

	code, got, _ := s.do("GET", "/memory_stores/support", nil)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, created["id"], got["id"])

	code, upd, _ := s.do("POST", "/memory_stores/support", map[string]any{"description": "new", "metadata": map[string]string{"team": "a"}})
	require.Equal(t, http.StatusOK, code, "%v", upd)
	assert.Equal(t, "new", upd["description"])
	_, got, _ = s.do("GET", "/memory_stores/support", nil)
	assert.Equal(t, "new", got["description"], "the update is stored")
	assert.Equal(t, map[string]any{"team": "a"}, got["metadata"])

	s.createStore("second", nil)
	s.createStore("third", nil)
	code, page, _ := s.do("GET", "/memory_stores?limit=2&order=asc", nil)
	require.Equal(t, http.StatusOK, code, "%v", page)
	first := items(page["data"], "")
	require.Len(t, first, 2)
	assert.Equal(t, true, page["has_more"])
	code, page2, _ := s.do("GET", "/memory_stores?limit=2&order=asc&after="+page["last_id"].(string), nil)
	require.Equal(t, http.StatusOK, code, "%v", page2)
	rest := items(page2["data"], "")
	require.Len(t, rest, 1)
	assert.Equal(t, false, page2["has_more"])
	names := map[string]bool{}
	for _, m := range append(first, rest...) {
		names[m["name"].(string)] = true
	}
	assert.Equal(t, map[string]bool{"support": true, "second": true, "third": true}, names)

	code, del, _ := s.do("DELETE", "/memory_stores/second", nil)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, map[string]any{"object": "memory_store.deleted", "name": "second", "deleted": true}, del)
	code, out, _ = s.do("GET", "/memory_stores/second", nil)
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "name", errorParam(t, out))
	code, _, _ = s.do("DELETE", "/memory_stores/second", nil)
	assert.Equal(t, http.StatusNotFound, code)
}

func TestMemoryStoreDefinitionsSurviveARestart(t *testing.T) {
	path := dbPath(t)
	s := start(t, path, Config{})
	s.createStore("kept", nil)
	s.stop()
	s2 := start(t, path, Config{})
	code, got, _ := s2.do("GET", "/memory_stores/kept", nil)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "kept", got["name"])
}
