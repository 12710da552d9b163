package memoryservice

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAuthentication(t *testing.T) {
	s := start(t, dbPath(t), Config{Keys: []APIKey{{Key: "k-one-0123456789"}, {Key: "k-two-0123456789"}, {Key: "k-limited-0123456789", Stores: []string{"mine"}}}})
	s.createStore("support", nil) // Bearer k-one

	req := func(header, value string) (int, map[string]any) {
		r, err := http.NewRequest("GET", s.srv.URL+"/memory_stores/support?api-version=v1", nil)
		require.NoError(t, err)
		if header != "" {
			r.Header.Set(header, value)
		}
		resp, err := http.DefaultClient.Do(r)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		_ = jsonDecode(resp.Body, &out)
		return resp.StatusCode, out
	}
	code, out := req("", "")
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Equal(t, "unauthorized", out["error"].(map[string]any)["code"])
	code, _ = req("Authorization", "Bearer wrong")
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _ = req("api-key", "k-one-012345678")
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _ = req("Authorization", "k-two-0123456789")
	assert.Equal(t, http.StatusUnauthorized, code, "a key without the Bearer scheme")
	code, _ = req("Authorization", "Bearer k-two-0123456789")
	assert.Equal(t, http.StatusOK, code)
	code, _ = req("api-key", "k-one-0123456789")
	assert.Equal(t, http.StatusOK, code)

	// a key limited to the store "mine"
	limited := *s
	limited.key = "k-limited-0123456789"
	code, out, _ = limited.do("GET", "/memory_stores/support", nil)
	assert.Equal(t, http.StatusForbidden, code)
	assert.Equal(t, "forbidden", out["error"].(map[string]any)["code"])
	for _, p := range []string{"/memory_stores/support:search_memories", "/memory_stores/support/items:list"} {
		code, _, _ = limited.do("POST", p, map[string]any{"scope": "a"})
		assert.Equal(t, http.StatusForbidden, code, p)
	}
	code, _, _ = limited.do("POST", "/memory_stores", map[string]any{"name": "other", "definition": map[string]any{"kind": "default", "chat_model": "m", "embedding_model": "e"}})
	assert.Equal(t, http.StatusForbidden, code, "may not create another store")
	limited.createStore("mine", nil)
	code, page, _ := limited.do("GET", "/memory_stores", nil)
	require.Equal(t, http.StatusOK, code)
	require.Len(t, items(page["data"], ""), 1, "lists only its stores")
	assert.Equal(t, "mine", items(page["data"], "")[0]["name"])
	code, page, _ = s.do("GET", "/memory_stores", nil)
	require.Equal(t, http.StatusOK, code)
	assert.Len(t, items(page["data"], ""), 2, "an unlimited key lists every store")

	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(s.srv.URL + p)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, p+" needs no key")
	}
}

func TestReadinessEndsAtClose(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	resp, err := http.Get(s.srv.URL + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("x-request-id"))
	require.NoError(t, s.svc.Close(t.Context()))
	resp, err = http.Get(s.srv.URL + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	code, out, _ := s.do("POST", "/memory_stores", map[string]any{"name": "x", "definition": map[string]any{"kind": "default", "chat_model": "m", "embedding_model": "e"}})
	// a store operation still works on a closing service; memory work does not
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out, _ = s.do("POST", "/memory_stores/x:update_memories", map[string]any{"scope": "a", "items": []any{user("hi")}})
	assert.Equal(t, http.StatusServiceUnavailable, code, "%v", out)
}

func TestBadInputNamesTheField(t *testing.T) {
	s := start(t, dbPath(t), Config{MaxBodyBytes: 4096})
	s.createStore("support", nil)
	def := map[string]any{"kind": "default", "chat_model": "m", "embedding_model": "e"}
	cases := []struct {
		name, method, path string
		body               any
		status             int
		param              string
	}{
		{"not JSON", "POST", "/memory_stores", "{nope", 400, "body"},
		{"empty body", "POST", "/memory_stores", "", 400, "body"},
		{"trailing data", "POST", "/memory_stores", `{"name":"a"} {}`, 400, "body"},
		{"wrong type", "POST", "/memory_stores", `{"name": 5}`, 400, "name"},
		{"missing name", "POST", "/memory_stores", map[string]any{"definition": def}, 400, "name"},
		{"bad name", "POST", "/memory_stores", map[string]any{"name": "a b", "definition": def}, 400, "name"},
		{"missing definition", "POST", "/memory_stores", map[string]any{"name": "a"}, 400, "definition"},
		{"bad kind", "POST", "/memory_stores", map[string]any{"name": "a", "definition": map[string]any{"kind": "x", "chat_model": "m", "embedding_model": "e"}}, 400, "definition.kind"},
		{"missing chat model", "POST", "/memory_stores", map[string]any{"name": "a", "definition": map[string]any{"kind": "default", "embedding_model": "e"}}, 400, "definition.chat_model"},
		{"ttl", "POST", "/memory_stores", map[string]any{"name": "a", "definition": map[string]any{"kind": "default", "chat_model": "m", "embedding_model": "e", "options": map[string]any{"default_ttl_seconds": -1}}}, 400, "definition.options.default_ttl_seconds"},
		{"too many metadata keys", "POST", "/memory_stores/support", map[string]any{"metadata": manyKeys(17)}, 400, "metadata"},
		{"oversized body", "POST", "/memory_stores", `{"name":"` + strings.Repeat("a", 5000) + `"}`, 413, "body"},
		{"oversized MCP body", "POST", "/mcp/support/a", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"` + strings.Repeat("a", 5000) + `"}}`, 413, "body"},
		{"unknown store", "GET", "/memory_stores/nope", nil, 404, "name"},
		{"bad list limit", "GET", "/memory_stores?limit=0", nil, 400, "limit"},
		{"bad list order", "GET", "/memory_stores?order=up", nil, 400, "order"},
		{"unknown cursor", "GET", "/memory_stores?after=zzz", nil, 400, "after"},
		{"missing scope", "POST", "/memory_stores/support:update_memories", map[string]any{"items": []any{user("x")}}, 400, "scope"},
		{"scope with slash", "POST", "/memory_stores/support:update_memories", map[string]any{"scope": "a/b", "items": []any{user("x")}}, 400, "scope"},
		{"bad role", "POST", "/memory_stores/support:update_memories", map[string]any{"scope": "a", "items": []any{map[string]any{"role": "robot", "content": "x"}}}, 400, "items[0].role"},
		{"bad item type", "POST", "/memory_stores/support:update_memories", map[string]any{"scope": "a", "items": []any{map[string]any{"type": "function_call", "role": "user", "content": "x"}}}, 400, "items[0].type"},
		{"bad content", "POST", "/memory_stores/support:update_memories", map[string]any{"scope": "a", "items": []any{map[string]any{"role": "user", "content": 3}}}, 400, "items[0].content"},
		{"negative delay", "POST", "/memory_stores/support:update_memories", map[string]any{"scope": "a", "items": []any{user("x")}, "update_delay": -1}, 400, "update_delay"},
		{"unknown previous", "POST", "/memory_stores/support:update_memories", map[string]any{"scope": "a", "items": []any{user("x")}, "previous_update_id": "memupd_nope"}, 400, "previous_update_id"},
		{"bad max memories", "POST", "/memory_stores/support:search_memories", map[string]any{"scope": "a", "options": map[string]any{"max_memories": 0}}, 400, "options.max_memories"},
		{"bad kind filter", "POST", "/memory_stores/support/items:list?kind=x", map[string]any{"scope": "a"}, 400, "kind"},
		{"malformed item id", "GET", "/memory_stores/support/items/garbage", nil, 404, "memory_id"},
		{"unknown update", "GET", "/memory_stores/support/updates/memupd_nope", nil, 404, "update_id"},
		{"unknown operation", "POST", "/memory_stores/support:explode", map[string]any{}, 404, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, _ := s.do(c.method, c.path, c.body)
			assert.Equal(t, c.status, code, "%v", out)
			assert.Equal(t, c.param, errorParam(t, out))
		})
	}
	// nothing of the refused requests was stored
	code, out, _ := s.do("GET", "/memory_stores", nil)
	require.Equal(t, http.StatusOK, code)
	assert.Len(t, items(out["data"], ""), 1)
	assert.Empty(t, s.list("support", "a", ""))
}

func manyKeys(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[strings.Repeat("k", i+1)] = "v"
	}
	return m
}

// Operation-Location names the address the client reached. Behind a TLS
// proxy that is the proxy's: with Config.TrustForwarded the Forwarded
// header (or X-Forwarded-Proto and X-Forwarded-Host) says it; without, the
// headers are never read, as any client may send them.
func TestOperationLocationBehindAProxy(t *testing.T) {
	location := func(s *server, h map[string]string) string {
		t.Helper()
		raw := `{"scope":"alice","items":[{"type":"message","role":"user","content":"I like tea."}],"update_delay":3600}`
		req, err := http.NewRequest("POST", s.srv.URL+"/memory_stores/support:update_memories?api-version=v1", strings.NewReader(raw))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusAccepted, resp.StatusCode)
		return resp.Header.Get("Operation-Location")
	}
	forwarded := map[string]string{"Forwarded": `for=10.0.0.1;proto=https;host="memory.example:8443", for=10.0.0.2;proto=http;host=inner`}
	xf := map[string]string{"X-Forwarded-Proto": "https, http", "X-Forwarded-Host": "memory.example, inner:80"}
	bad := map[string]string{"X-Forwarded-Proto": "gopher", "X-Forwarded-Host": "evil.example/path?x"}

	plain := start(t, dbPath(t), Config{})
	plain.createStore("support", nil)
	direct := "http://" + strings.TrimPrefix(plain.srv.URL, "http://")
	for _, h := range []map[string]string{nil, forwarded, xf} {
		assert.True(t, strings.HasPrefix(location(plain, h), direct+"/memory_stores/support/updates/"), "untrusted by default: %v", h)
	}

	proxied := start(t, dbPath(t), Config{TrustForwarded: true})
	proxied.createStore("support", nil)
	loc := location(proxied, forwarded)
	assert.True(t, strings.HasPrefix(loc, "https://memory.example:8443/memory_stores/support/updates/"), loc)
	assert.True(t, strings.HasSuffix(loc, "?api-version=v1"), loc)
	loc = location(proxied, xf)
	assert.True(t, strings.HasPrefix(loc, "https://memory.example/memory_stores/support/updates/"), loc)
	loc = location(proxied, map[string]string{"X-Forwarded-Proto": "https"})
	assert.True(t, strings.HasPrefix(loc, "https://"+strings.TrimPrefix(proxied.srv.URL, "http://")+"/"), "the proto alone: %s", loc)
	loc = location(proxied, bad)
	assert.True(t, strings.HasPrefix(loc, proxied.srv.URL+"/memory_stores/"), "malformed values are ignored: %s", loc)
	loc = location(proxied, nil)
	assert.True(t, strings.HasPrefix(loc, proxied.srv.URL+"/memory_stores/"), "no header: %s", loc)
}
