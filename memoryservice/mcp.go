package memoryservice

import (
	"bytes"
	"context"
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
	// The body is read here, so that one over the limit gets the API's
	// 413, not the library's plain text.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.fail(w, r, "mcp", tooLarge(tooBig.Limit))
		} else {
			s.fail(w, r, "mcp", badRequest("body", "body: %v", err))
		}
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	srv, err := mcpserver.New(p, s.st, mcpserver.Config{UserID: userID})
	if err != nil {
		s.fail(w, r, "mcp", err)
		return
	}
	// Nothing is written before the library has checked the request and
	// read its body: the scope is noted, locked and expired as each tool
	// call is dispatched, from the call the library itself parsed.
	srv.AddReceivingMiddleware(s.mcpScope(def, scope, userID))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: bounded(s.log)})
	h.ServeHTTP(w, r)
}

// mcpReads are the tools of package mcpserver that only read memory: a
// call of any other tool waits for the scope's update run.
var mcpReads = map[string]bool{"retrieve_user_facts": true, "search_memory": true, "get_user_context": true, "list_insights": true}

// mcpScope is the MCP middleware that readies the scope for each tool
// call: a call of a tool not in mcpReads notes the scope (deleting the
// store must find it) and waits for the scope's update run (and
// delete_scope), as another update would — it would otherwise be listed
// among the run's memory operations, or outlive the scope's deletion;
// then the scope's expired memories go, since the tools read the store
// directly. The tool's name is the one the library parsed (exact,
// case-sensitive keys), so what the lock decides on is what runs; a batch
// dispatches each of its calls here.
func (s *Service) mcpScope(def *memoryStore, scope, userID string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			params, _ := req.GetParams().(*mcp.CallToolParamsRaw)
			write := params == nil || !mcpReads[params.Name]
			if write {
				if err := s.noteScope(ctx, def.Name, scope); err != nil {
					return nil, err
				}
				unlock, err := s.lockRun(ctx, def.Name, scope)
				if err != nil {
					return nil, err
				}
				defer unlock()
			}
			if err := s.expire(ctx, def, scope, write); err != nil {
				return nil, err
			}
			return next(ctx, method, req)
		}
	}
}
