package memoryservice

import (
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
		writeError(w, err)
		return
	}
	p, err := s.providerFor(def)
	if err != nil {
		s.fail(w, r, "mcp", err)
		return
	}
	if r.Method == http.MethodPost {
		// The scope may be written: deleting the store must find it.
		if err := s.noteScope(ctx, name, scope); err != nil {
			s.fail(w, r, "mcp", err)
			return
		}
	}
	// The tools read the store directly: expired memories go first.
	if err := s.expireScope(ctx, def, scope); err != nil {
		s.fail(w, r, "mcp", err)
		return
	}
	srv, err := mcpserver.New(p, s.st, mcpserver.Config{UserID: userID})
	if err != nil {
		s.fail(w, r, "mcp", err)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.log})
	h.ServeHTTP(w, r)
}
