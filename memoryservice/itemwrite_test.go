package memoryservice

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreateAndUpdateItems(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("alpha", nil)
	s.createStore("beta", nil)

	for _, kind := range []string{"user_profile", "chat_summary"} {
		t.Run(kind, func(t *testing.T) {
			scope := "scope-" + kind
			code, it, _ := s.do("POST", "/memory_stores/alpha/items", map[string]any{"scope": scope, "kind": kind, "content": "Prefers vegetarian restaurants near the office."})
			require.Equal(t, http.StatusOK, code, "%v", it)
			assert.Equal(t, kind, it["kind"])
			assert.Equal(t, scope, it["scope"])
			id := it["memory_id"].(string)

			code, got, _ := s.do("GET", "/memory_stores/alpha/items/"+id, nil)
			require.Equal(t, http.StatusOK, code)
			assert.Equal(t, "Prefers vegetarian restaurants near the office.", got["content"])
			assert.Contains(t, contents(s.search("alpha", scope, "vegetarian restaurants")), "vegetarian")
			assert.Len(t, s.list("alpha", scope, "?kind="+kind), 1)
			code, _, _ = s.do("GET", "/memory_stores/beta/items/"+id, nil)
			assert.Equal(t, http.StatusNotFound, code, "not through another store")
			assert.Empty(t, s.search("beta", scope, "vegetarian restaurants"))

			code, upd, _ := s.do("POST", "/memory_stores/alpha/items/"+id, map[string]any{"content": "Now eats fish: pescatarian since March."})
			require.Equal(t, http.StatusOK, code, "%v", upd)
			assert.Equal(t, id, upd["memory_id"])
			_, got, _ = s.do("GET", "/memory_stores/alpha/items/"+id, nil)
			assert.Equal(t, "Now eats fish: pescatarian since March.", got["content"])
			found := contents(s.search("alpha", scope, "pescatarian fish"))
			assert.Contains(t, found, "pescatarian")
			assert.NotContains(t, contents(s.search("alpha", scope, "vegetarian restaurants office")), "vegetarian restaurants")

			code, _, _ = s.do("POST", "/memory_stores/beta/items/"+id, map[string]any{"content": "x"})
			assert.Equal(t, http.StatusNotFound, code, "not writable through another store")
			code, _, _ = s.do("DELETE", "/memory_stores/alpha/items/"+id, nil)
			require.Equal(t, http.StatusOK, code)
			assert.Empty(t, s.list("alpha", scope, ""))
		})
	}

	for _, c := range []struct {
		body  map[string]any
		param string
	}{
		{map[string]any{"scope": "a", "kind": "procedural", "content": "x"}, "kind"},
		{map[string]any{"scope": "a", "kind": "nope", "content": "x"}, "kind"},
		{map[string]any{"scope": "a", "content": "x"}, "kind"},
		{map[string]any{"scope": "a", "kind": "user_profile", "content": "  "}, "content"},
		{map[string]any{"kind": "user_profile", "content": "x"}, "scope"},
	} {
		code, out, _ := s.do("POST", "/memory_stores/alpha/items", c.body)
		assert.Equal(t, http.StatusBadRequest, code, "%v", c.body)
		assert.Equal(t, c.param, errorParam(t, out))
	}
	assert.Empty(t, s.list("alpha", "a", ""), "nothing refused was stored")
}
