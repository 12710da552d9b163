package memoryservice

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// send sends a request as a browser (or curl) would: raw body, the
// headers given, nothing added; host, if set, is the Host header.
func (s *server) send(method, path, host, body string, h map[string]string) (int, map[string]any, http.Header) {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.srv.URL+path, rd)
	require.NoError(s.t, err)
	if host != "" {
		req.Host = host
	}
	for k, v := range h {
		req.Header.Set(k, v)
	}
	code, raw, header := s.exchange(req)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return code, out, header
}

// scopeNoted reports whether the registry holds memory store name's
// scope.
func (s *server) scopeNoted(name, scope string) bool {
	s.t.Helper()
	k := scopeKey(name, scope)
	_, err := s.svc.rec.GetRecord(context.Background(), k.user, k.id)
	if errors.Is(err, store.ErrNotFound) {
		return false
	}
	require.NoError(s.t, err)
	return true
}

const updateBody = `{"scope":"alice","items":[{"type":"message","role":"user","content":"I prefer dark roast coffee."}],"update_delay":3600}`

// A server without keys answers only what a page in a browser cannot
// make it do: a cross-site write, a form or text/plain body (sent without
// a preflight), a DNS-rebinding request under the attacker's host name.
// Each refusal is in the API's error shape, and nothing is written.
func TestKeylessServerRefusesWebPages(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("support", nil)
	host := strings.TrimPrefix(s.srv.URL, "http://")
	_, port, _ := strings.Cut(host, ":")
	crossSite := map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Content-Type": "text/plain"}
	oldBrowser := map[string]string{"Origin": "https://evil.example", "Content-Type": "text/plain"}
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	jsonCT := map[string]string{"Content-Type": "application/json"}
	storeJSON := `{"name":"evil","definition":{"kind":"default","chat_model":"m","embedding_model":"e"}}`

	cases := []struct {
		name, method, path, host, body string
		h                              map[string]string
		status                         int
		param                          string
	}{
		{"cross-site update", "POST", "/memory_stores/support:update_memories?api-version=v1", "", updateBody, crossSite, 403, "Origin"},
		{"cross-site delete_scope", "POST", "/memory_stores/support:delete_scope?api-version=v1", "", `{"scope":"alice"}`, crossSite, 403, "Origin"},
		{"cross-site store creation", "POST", "/memory_stores?api-version=v1", "", storeJSON, crossSite, 403, "Origin"},
		{"cross-site delete store", "DELETE", "/memory_stores/support?api-version=v1", "", "", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403, "Origin"},
		{"cross-origin without Sec-Fetch-Site", "POST", "/memory_stores/support:update_memories?api-version=v1", "", updateBody, oldBrowser, 403, "Origin"},
		{"text/plain update", "POST", "/memory_stores/support:update_memories?api-version=v1", "", updateBody, map[string]string{"Content-Type": "text/plain"}, 415, "Content-Type"},
		{"form store creation", "POST", "/memory_stores?api-version=v1", "", storeJSON, form, 415, "Content-Type"},
		{"no Content-Type", "POST", "/memory_stores/support:delete_scope?api-version=v1", "", `{"scope":"alice"}`, nil, 415, "Content-Type"},
		{"rebound host", "POST", "/memory_stores/support/items:list?api-version=v1", "attacker.example:" + port, `{"scope":"alice"}`,
			map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-origin", "Origin": "http://attacker.example:" + port}, 421, "Host"},
		{"rebound host, no origin", "GET", "/memory_stores?api-version=v1", "attacker.example:" + port, "", nil, 421, "Host"},
		{"rebound host of a loopback prefix", "GET", "/memory_stores?api-version=v1", "127.0.0.1.evil.example:" + port, "", nil, 421, "Host"},
		{"unknown api-version", "GET", "/memory_stores?api-version=2099-01-01", "", "", nil, 400, "api-version"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, _ := s.send(c.method, c.path, c.host, c.body, c.h)
			assert.Equal(t, c.status, code, "%v", out)
			assert.Equal(t, c.param, errorParam(t, out))
		})
	}
	assert.Empty(t, s.list("support", "alice", ""), "nothing was written")
	assert.False(t, s.scopeNoted("support", "alice"))
	code, out, _ := s.do("GET", "/memory_stores/evil", nil)
	assert.Equal(t, http.StatusNotFound, code, "%v", out)
	code, _, _ = s.do("GET", "/memory_stores/support", nil)
	assert.Equal(t, http.StatusOK, code, "the store was not deleted")

	// MCP: refused before the scope's registry row is written.
	mcpCall := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"record_turn","arguments":{"session_id":"s1","user":"I like tea.","assistant":"Noted."}}}`
	accept := "application/json, text/event-stream"
	for name, c := range map[string]struct {
		host   string
		h      map[string]string
		status int
	}{
		"rebound host":  {"attacker.example:" + port, map[string]string{"Content-Type": "application/json", "Accept": accept}, 421},
		"cross-site":    {"", map[string]string{"Content-Type": "application/json", "Accept": accept, "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403},
		"text/plain":    {"", map[string]string{"Content-Type": "text/plain", "Accept": accept}, 415},
		"wrong Accept":  {"", map[string]string{"Content-Type": "application/json", "Accept": "application/json"}, 400},
		"bad JSON":      {"", map[string]string{"Content-Type": "application/json", "Accept": accept}, 400},
		"unknown proto": {"", map[string]string{"Content-Type": "application/json", "Accept": accept, "Mcp-Protocol-Version": "1999-01-01"}, 400},
	} {
		t.Run("mcp "+name, func(t *testing.T) {
			body := mcpCall
			if name == "bad JSON" {
				body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`
			}
			scope := strings.NewReplacer(" ", "-", "/", "-").Replace(name)
			code, _, _ := s.send("POST", "/mcp/support/"+scope, c.host, body, c.h)
			assert.Equal(t, c.status, code)
			assert.False(t, s.scopeNoted("support", scope), "the scope's registry row was written")
		})
	}

	// What a page of the server's own origin, and a client that is no
	// browser, send is served.
	code, out, _ = s.send("POST", "/memory_stores/support/items:list?api-version=v1", "", `{"scope":"alice"}`,
		map[string]string{"Content-Type": "application/json; charset=utf-8", "Origin": s.srv.URL, "Sec-Fetch-Site": "same-origin"})
	assert.Equal(t, http.StatusOK, code, "%v", out)
	code, out, _ = s.send("POST", "/memory_stores/support/items:list", "localhost:"+port, `{"scope":"alice"}`, jsonCT)
	assert.Equal(t, http.StatusOK, code, "localhost, no api-version: %v", out)
	code, out, _ = s.send("GET", "/memory_stores?api-version=2025-11-15-preview", "[::1]:"+port, "", nil)
	assert.Equal(t, http.StatusOK, code, "%v", out)
	code, _, _ = s.send("GET", "/healthz", "attacker.example", "", nil)
	assert.Equal(t, http.StatusOK, code, "health needs no loopback host")
	code, out, _ = s.send("POST", "/mcp/support/bob", "", mcpCall, map[string]string{"Content-Type": "application/json", "Accept": accept})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.True(t, s.scopeNoted("support", "bob"), "a write notes its scope")
}

// With keys, a browser page of an allowed origin calls the service with
// its key: its preflight is answered and its answers carry the CORS
// headers; any other origin is refused. Hosts are not checked.
func TestAllowedOrigins(t *testing.T) {
	key := "allowed-origins-key-1"
	s := start(t, dbPath(t), Config{Keys: []APIKey{{Key: key}}, AllowedOrigins: []string{"https://app.example"}})
	s.createStore("support", nil)
	code, _, h := s.send("OPTIONS", "/memory_stores/support/items:list?api-version=v1", "", "", map[string]string{
		"Origin": "https://app.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "api-key, content-type"})
	assert.Equal(t, http.StatusNoContent, code)
	assert.Equal(t, "https://app.example", h.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, h.Get("Access-Control-Allow-Headers"), "api-key")
	assert.Contains(t, h.Get("Access-Control-Allow-Headers"), "X-Memory-User", "the gateway's request headers")
	assert.Contains(t, h.Get("Access-Control-Allow-Methods"), "POST")

	browser := func(origin string) map[string]string {
		return map[string]string{"Origin": origin, "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors", "Content-Type": "application/json", "api-key": key}
	}
	code, out, h := s.send("POST", "/memory_stores/support/items:list?api-version=v1", "memory.example", `{"scope":"alice"}`, browser("https://app.example"))
	assert.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "https://app.example", h.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, h.Get("Access-Control-Expose-Headers"), "Operation-Location")
	assert.Contains(t, h.Get("Access-Control-Expose-Headers"), "X-Memory", "the gateway's answer header")
	code, out, h = s.send("POST", "/memory_stores/support/items:list?api-version=v1", "", `{"scope":"alice"}`, browser("https://evil.example"))
	assert.Equal(t, http.StatusForbidden, code, "%v", out)
	assert.Equal(t, "Origin", errorParam(t, out))
	assert.Empty(t, h.Get("Access-Control-Allow-Origin"))
	code, _, h = s.send("OPTIONS", "/memory_stores/support/items:list?api-version=v1", "", "", map[string]string{
		"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
	assert.NotEqual(t, http.StatusNoContent, code)
	assert.Empty(t, h.Get("Access-Control-Allow-Origin"))

	_, err := New(context.Background(), s.st, Config{Chat: s.svc.cfg.Chat, Embedder: s.svc.cfg.Embedder, AllowedOrigins: []string{"app.example/path"}})
	assert.ErrorContains(t, err, "AllowedOrigins[0]")
}
