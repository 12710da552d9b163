package memoryservice

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Procedural memory: in a store with procedural_memory_enabled, reflection
// draws how the user wants things done into insights of its own category,
// served as memory items of kind procedural — created by update_memories,
// listed by kind, found by search, got, written and deleted like the
// others. A store without it keeps none and refuses the kind.
func TestProceduralMemory(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("howto", map[string]any{"procedural_memory_enabled": true})
	s.createStore("plain", nil)
	talk := []string{"I always want you to run the tests before you deploy.", "I prefer dark roast coffee in the morning."}

	ops := operations(t, s.wait("howto", s.update("howto", "ann", 0, talk...)))
	var created []map[string]any
	for _, op := range ops {
		it := op["memory_item"].(map[string]any)
		if op["kind"] == "create" && it["kind"] == "procedural" {
			created = append(created, it)
		}
	}
	require.Len(t, created, 1, "%v", ops)
	assert.Contains(t, created[0]["content"], "run the tests before you deploy")

	proc := s.list("howto", "ann", "?kind=procedural")
	require.Len(t, proc, 1)
	assert.Equal(t, created[0]["memory_id"], proc[0]["memory_id"])
	for _, it := range s.list("howto", "ann", "?kind=user_profile") {
		// (the long-term profile, a user_profile item, may mention it)
		assert.NotEqual(t, proc[0]["content"], it["content"], "the procedure is not a user_profile item of its own")
	}
	assert.Contains(t, contents(s.list("howto", "ann", "?kind=user_profile")), "coffee")

	found := s.search("howto", "ann", "How should you deploy? Run the tests?")
	var kinds []string
	for _, it := range found {
		if it["memory_id"] == proc[0]["memory_id"] {
			kinds = append(kinds, it["kind"].(string))
		}
	}
	assert.Equal(t, []string{"procedural"}, kinds, "found, as procedural: %v", found)

	id := proc[0]["memory_id"].(string)
	code, out, _ := s.do("GET", "/memory_stores/howto/items/"+id, nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "procedural", out["kind"])

	code, out, _ = s.do("POST", "/memory_stores/howto/items", map[string]any{"scope": "ann", "kind": "procedural", "content": "Answer in numbered steps."})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "procedural", out["kind"])
	added := out["memory_id"].(string)
	code, out, _ = s.do("POST", "/memory_stores/howto/items/"+added, map[string]any{"content": "Answer in short numbered steps."})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "procedural", out["kind"])
	assert.Contains(t, contents(s.list("howto", "ann", "?kind=procedural")), "short numbered steps")
	code, out, _ = s.do("DELETE", "/memory_stores/howto/items/"+added, nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.NotContains(t, contents(s.list("howto", "ann", "?kind=procedural")), "numbered steps")

	// A procedural item's id read as another kind's is not found.
	code, _, _ = s.do("GET", "/memory_stores/howto/items/p"+id[1:], nil)
	assert.Equal(t, http.StatusNotFound, code)

	// Without procedural memory: no procedural item, the kind refused.
	operations(t, s.wait("plain", s.update("plain", "ann", 0, talk...)))
	assert.Empty(t, s.list("plain", "ann", "?kind=procedural"))
	code, out, _ = s.do("POST", "/memory_stores/plain/items", map[string]any{"scope": "ann", "kind": "procedural", "content": "x"})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, "kind", errorParam(t, out))
	code, _, _ = s.do("GET", "/memory_stores/plain/items/"+id, nil)
	assert.Equal(t, http.StatusNotFound, code, "another store's item")
}
