package memoryservice

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmemory/agentmemory/mcpserver"
)

// serveMCP serves the MCP tools of package mcpserver for one scope of a
// memory store, over streamable HTTP at /mcp/{name}/{scope}, behind the
// same keys as the API. It is stateless: every request reaches the scope
// its path names, and no session id carries a client to another scope.
func (s *Service) serveMCP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	name, scope := r.PathValue("name"), r.PathValue("scope")
	def, _, err := s.loadStore(ctx, name)
	if err != nil {
		s.fail(w, r, "mcp", err)
		return
	}
	userID, err := scopeUser(name, scope)
	if err != nil {
		s.fail(w, r, "mcp", err)
		return
	}
	p, err := s.providerFor(def)
	if err != nil {
		s.fail(w, r, "mcp", err)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	locked := false // this request holds the scope's run lock
	if r.Method == http.MethodPost {
		// The scope may be written: deleting the store must find it.
		if err := s.noteScope(ctx, name, scope); err != nil {
			s.fail(w, r, "mcp", err)
			return
		}
		// A write waits for the scope's update run (and delete_scope), as
		// another update would: it would otherwise be listed among the
		// run's memory operations, or outlive the scope's deletion.
		write, err := mcpWrites(r)
		if err != nil {
			s.fail(w, r, "mcp", err)
			return
		}
		if write {
			unlock := s.lockScope("run", userID)
			defer unlock()
			locked = true
		}
	}
	// The tools read the store directly: expired memories go first.
	if err := s.expire(ctx, def, scope, locked); err != nil {
		s.fail(w, r, "mcp", err)
		return
	}
	srv, err := mcpserver.New(p, s.st, mcpserver.Config{UserID: userID})
	if err != nil {
		s.fail(w, r, "mcp", err)
		return
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.log})
	h.ServeHTTP(w, r)
}

// mcpReads are the tools of package mcpserver that only read memory: a
// call of any other tool (or a batch holding one) waits for the scope's
// update run.
var mcpReads = map[string]bool{"retrieve_user_facts": true, "search_memory": true, "get_user_context": true, "list_insights": true}

// mcpWrites reads an MCP request's body (leaving it to be read again) and
// reports whether it may write the scope: a call of a tool not in
// mcpReads, alone or in a batch. A body that is not JSON-RPC is left to
// the MCP handler to refuse.
func mcpWrites(r *http.Request) (bool, error) {
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return false, tooLarge(tooBig.Limit)
	}
	if err != nil {
		return false, badRequest("body", "unreadable: %v", err)
	}
	type message struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	var msgs []message
	if err := json.Unmarshal(b, &msgs); err != nil {
		var one message
		if err := json.Unmarshal(b, &one); err != nil {
			return false, nil
		}
		msgs = []message{one}
	}
	for _, m := range msgs {
		if m.Method == "tools/call" && !mcpReads[m.Params.Name] {
			return true, nil
		}
	}
	return false, nil
}
