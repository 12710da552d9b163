package memoryservice

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The MCP library reads a call's tool name with exact, case-sensitive
// keys: a body naming record_turn as "name" and search_memory as "Name"
// calls record_turn, a write, which waits for the scope's update run like
// any other write (a reader matching keys case-insensitively, last one
// winning, would class it as a read).
func TestMCPCaseTrickWriteWaitsForTheScopesUpdate(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("alpha", nil)
	unlock := s.svc.lockScope("run", UserID("alpha", "alice")) // as a run holds it
	locked := true
	defer func() {
		if locked {
			unlock()
		}
	}()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"record_turn","Name":"search_memory",` +
		`"arguments":{"session_id":"s1","user":"I prefer dark roast coffee.","assistant":"Noted.","query":"coffee"}}}`
	done := make(chan int, 1)
	go func() {
		code, _, _ := s.send("POST", "/mcp/alpha/alice", "", body,
			map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
		done <- code
	}()
	select {
	case code := <-done:
		t.Fatalf("record_turn ran while the scope's update held it (status %d)", code)
	case <-time.After(300 * time.Millisecond):
	}
	locked = false
	unlock()
	select {
	case code := <-done:
		require.Equal(t, http.StatusOK, code)
	case <-time.After(10 * time.Second):
		t.Fatal("record_turn still waiting after the update")
	}
	assert.True(t, s.scopeNoted("alpha", "alice"))
}
