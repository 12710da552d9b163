package memoryservice

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyTransport adds an API key to every request.
type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if k.key != "" {
		r.Header.Set("api-key", k.key)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the official Go MCP client to a scope's endpoint.
func mcpSession(t *testing.T, s *server, key, store, scope string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	return client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: s.srv.URL + "/mcp/" + store + "/" + scope, HTTPClient: &http.Client{Transport: keyTransport{key}},
		MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
}

func callText(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError, "%s: %v", tool, res.Content)
	raw, err := json.Marshal(res)
	require.NoError(t, err)
	return string(raw)
}

func TestMCPOverStreamableHTTP(t *testing.T) {
	s := start(t, dbPath(t), Config{Keys: []APIKey{{Key: "all-stores-key-0123"}, {Key: "beta-only-key-0123", Stores: []string{"beta"}}}})
	s.createStore("alpha", nil)
	s.createStore("beta", nil)

	cs, err := mcpSession(t, s, "all-stores-key-0123", "alpha", "alice")
	require.NoError(t, err)
	defer cs.Close()
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	assert.Contains(t, names, "record_turn")
	assert.Contains(t, names, "search_memory")

	callText(t, cs, "record_turn", map[string]any{"session_id": "s1", "user": "I prefer dark roast coffee.", "assistant": "Noted."})
	callText(t, cs, "end_session", map[string]any{"session_id": "s1"})
	assert.Contains(t, callText(t, cs, "search_memory", map[string]any{"query": "coffee"}), "dark roast")
	// the same memory through the Memory Store API
	assert.Contains(t, contents(s.list("alpha", "alice", "?kind=chat_summary")), "coffee")

	// another store's scope of the same name sees none of it
	other, err := mcpSession(t, s, "all-stores-key-0123", "beta", "alice")
	require.NoError(t, err)
	defer other.Close()
	assert.NotContains(t, callText(t, other, "search_memory", map[string]any{"query": "coffee"}), "dark roast")

	// a key limited to beta is refused alpha, and a wrong key everything
	_, err = mcpSession(t, s, "beta-only-key-0123", "alpha", "alice")
	assert.ErrorContains(t, err, "Forbidden")
	_, err = mcpSession(t, s, "wrong", "beta", "alice")
	assert.ErrorContains(t, err, "Unauthorized")
	limited, err := mcpSession(t, s, "beta-only-key-0123", "beta", "alice")
	require.NoError(t, err)
	limited.Close()
	_, err = mcpSession(t, s, "all-stores-key-0123", "nope", "alice")
	assert.ErrorContains(t, err, "Not Found")

	// delete_scope forgets what MCP stored
	code, _, _ := s.do("POST", "/memory_stores/alpha:delete_scope", map[string]any{"scope": "alice"})
	require.Equal(t, http.StatusOK, code)
	assert.NotContains(t, callText(t, cs, "search_memory", map[string]any{"query": "coffee"}), "dark roast")
}

// An MCP tool that writes a scope waits while an update of the scope runs
// (it takes the scope's lock, as the update and delete_scope do): a turn
// recorded in the middle of a run would otherwise be listed among the
// update's memory operations, or outlive a delete_scope under way. A
// read does not wait.
func TestMCPWritesWaitForTheScopesUpdate(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("alpha", nil)
	cs, err := mcpSession(t, s, "", "alpha", "alice")
	require.NoError(t, err)
	defer cs.Close()

	unlock := s.svc.lockScope("run", UserID("alpha", "alice")) // as a run holds it
	done := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "record_turn",
			Arguments: map[string]any{"session_id": "s1", "user": "I prefer dark roast coffee.", "assistant": "Noted."}})
		if err != nil {
			done <- err.Error()
			return
		}
		raw, _ := json.Marshal(res)
		done <- string(raw)
	}()
	callText(t, cs, "search_memory", map[string]any{"query": "coffee"}) // a read goes on (callText fails on an error)
	select {
	case out := <-done:
		t.Fatalf("record_turn ran while the scope's update held it: %s", out)
	case <-time.After(300 * time.Millisecond):
	}
	unlock()
	select {
	case out := <-done:
		assert.NotContains(t, out, `"isError":true`)
	case <-time.After(10 * time.Second):
		t.Fatal("record_turn still waiting after the update")
	}
}
