package memoryservice

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScopesAndStoresAreIsolated: one scope's memories are never in
// another scope's search, list or get, nor reachable through another
// memory store, even under the same scope name.
func TestScopesAndStoresAreIsolated(t *testing.T) {
	isolation(t, start(t, dbPath(t), Config{}))
}

func isolation(t *testing.T, s *server) {
	s.createStore("alpha", nil)
	s.createStore("beta", nil)
	operations(t, s.wait("alpha", s.update("alpha", "alice", 0, "I prefer dark roast coffee.")))
	operations(t, s.wait("alpha", s.update("alpha", "bob", 0, "I prefer green tea with jasmine.")))
	operations(t, s.wait("beta", s.update("beta", "alice", 0, "I prefer sparkling water.")))

	assert.Contains(t, contents(s.search("alpha", "alice", "coffee")), "coffee")
	for _, c := range []struct{ store, scope string }{{"alpha", "bob"}, {"beta", "alice"}, {"beta", "bob"}} {
		got := contents(s.search(c.store, c.scope, "dark roast coffee")) + contents(s.list(c.store, c.scope, ""))
		assert.NotContains(t, got, "coffee", "%s/%s sees alpha/alice", c.store, c.scope)
	}
	assert.NotContains(t, contents(s.list("alpha", "alice", "")), "tea")
	assert.NotContains(t, contents(s.list("alpha", "alice", "")), "sparkling")
	assert.Contains(t, contents(s.list("beta", "alice", "")), "sparkling")

	// alpha/alice's item ids: found through alpha, not through beta
	for _, it := range s.list("alpha", "alice", "") {
		id := it["memory_id"].(string)
		code, _, _ := s.do("GET", "/memory_stores/alpha/items/"+id, nil)
		assert.Equal(t, http.StatusOK, code)
		code, out, _ := s.do("GET", "/memory_stores/beta/items/"+id, nil)
		assert.Equal(t, http.StatusNotFound, code)
		assert.Equal(t, "memory_id", errorParam(t, out))
		code, _, _ = s.do("DELETE", "/memory_stores/beta/items/"+id, nil)
		assert.Equal(t, http.StatusNotFound, code)
	}
	// an update id is not found through another store
	id := s.update("alpha", "alice", 3600, "x")
	code, _, _ := s.do("GET", "/memory_stores/beta/updates/"+id, nil)
	assert.Equal(t, http.StatusNotFound, code)
	code, out, _ := s.do("POST", "/memory_stores/beta:update_memories", map[string]any{"scope": "alice", "items": []any{user("y")}, "previous_update_id": id})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, "previous_update_id", errorParam(t, out))

	// delete_scope of beta/alice leaves alpha/alice
	code, _, _ = s.do("POST", "/memory_stores/beta:delete_scope", map[string]any{"scope": "alice"})
	require.Equal(t, http.StatusOK, code)
	assert.Empty(t, s.list("beta", "alice", ""))
	assert.Contains(t, contents(s.list("alpha", "alice", "")), "coffee")

	// deleting a store forgets its scopes, not another store's
	code, _, _ = s.do("DELETE", "/memory_stores/alpha", nil)
	require.Equal(t, http.StatusOK, code)
	s.createStore("alpha", nil)
	assert.Empty(t, s.list("alpha", "alice", ""), "a store made anew under the name starts empty")
	assert.Empty(t, s.list("alpha", "bob", ""))
}

// TestScopeNamesCannotReachTheRegistryOrAnotherStore: the scope is joined
// to the store's name, so no scope string names the registry's user or a
// scope of another store.
func TestScopeNamesCannotReachTheRegistryOrAnotherStore(t *testing.T) {
	for _, sc := range []string{"alice", "beta:alice", RegistryUserID, ""} {
		u, err := scopeUser("alpha", sc)
		if sc == "" {
			assert.Error(t, err)
			continue
		}
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(u, ScopePrefix+"alpha:"), u)
		assert.NotEqual(t, UserID("beta", "alice"), u)
		assert.NotEqual(t, RegistryUserID, u)
	}
	_, err := scopeUser("alpha", "a/b")
	assert.Error(t, err, "ids with / are refused")
	assert.Error(t, checkName("name", "a:b"), "a store name cannot hold the separator")
}
