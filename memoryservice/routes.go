package memoryservice

import (
	"net/http"
	"strings"
)

// route is one operation of the API: a ServeMux pattern and its handler.
// A pattern whose last segment is "{name}" or "{name}:operation" names
// an operation on a memory store; the handler reads the store's name as
// r.PathValue("name").
type route struct {
	pattern string
	handler http.Handler
}

// routes builds the service's handler: health and readiness open to all,
// every other path (Config.Metrics' /metrics too) behind authenticate.
func (s *Service) routes() {
	const ok, accepted = http.StatusOK, http.StatusAccepted
	public := []route{
		{"GET /healthz", handle(s, "health", ok, s.health)},
		{"GET /readyz", handle(s, "readiness", ok, s.readiness)},
	}
	api := []route{
		{"POST /memory_stores", handle(s, "create memory store", ok, s.createStore)},
		{"GET /memory_stores", handle(s, "list memory stores", ok, s.listStores)},
		{"GET /memory_stores/{name}", handle(s, "get memory store", ok, s.getStore)},
		{"POST /memory_stores/{name}", handle(s, "update memory store", ok, s.updateStore)},
		{"DELETE /memory_stores/{name}", handle(s, "delete memory store", ok, s.deleteStore)},
		{"POST /memory_stores/{name}:update_memories", handle(s, "update memories", accepted, s.updateMemories)},
		{"GET /memory_stores/{name}/updates/{id}", handle(s, "get update", ok, s.getUpdate)},
		{"POST /memory_stores/{name}:search_memories", handle(s, "search memories", ok, s.searchMemories)},
		{"POST /memory_stores/{name}:delete_scope", handle(s, "delete scope", ok, s.deleteScope)},
		{"POST /memory_stores/{name}/items:list", handle(s, "list memories", ok, s.listItems)},
		{"POST /memory_stores/{name}/items", handle(s, "create memory", ok, s.createItem)},
		{"GET /memory_stores/{name}/items/{id}", handle(s, "get memory", ok, s.getItem)},
		{"POST /memory_stores/{name}/items/{id}", handle(s, "update memory", ok, s.updateItem)},
		{"DELETE /memory_stores/{name}/items/{id}", handle(s, "delete memory", ok, s.deleteItem)},
		{"/mcp/{name}/{scope}", http.HandlerFunc(s.serveMCP)},
		{"/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.fail(w, r, "route", notFound("", "no such operation: %s %s", r.Method, r.URL.Path))
		})},
	}
	if s.cfg.Metrics != nil {
		api = append(api, route{"GET /metrics", s.cfg.Metrics})
	}
	m := s.muxOf(public)
	m.Handle("/", s.guard(s.authenticate(s.muxOf(api))))
	s.mux = m
}

// muxOf serves routes. The routes of "{name}" and "{name}:operation",
// which share a path segment, are served by one pattern per method and
// path, which splits the segment and answers an operation it does not
// have with a 404.
func (s *Service) muxOf(routes []route) *http.ServeMux {
	mux := http.NewServeMux()
	ops := map[string]map[string]http.Handler{} // by ServeMux pattern, then operation
	var order []string
	for _, rt := range routes {
		pattern, op, ok := storeOperation(rt.pattern)
		if !ok {
			mux.Handle(rt.pattern, rt.handler)
			continue
		}
		if ops[pattern] == nil {
			ops[pattern] = map[string]http.Handler{}
			order = append(order, pattern)
		}
		ops[pattern][op] = rt.handler
	}
	for _, pattern := range order {
		byOp := ops[pattern]
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			name, op := splitOp(r.PathValue("seg"))
			h, ok := byOp[op]
			if !ok {
				s.fail(w, r, "route", notFound("", "no such operation %q", op))
				return
			}
			r.SetPathValue("name", name)
			h.ServeHTTP(w, r)
		})
	}
	return mux
}

// storeOperation reads a pattern ending in "{name}" or
// "{name}:operation" as the ServeMux pattern of the segment ("{seg}")
// and the operation ("" for the store itself).
func storeOperation(pattern string) (muxPattern, op string, ok bool) {
	i := strings.LastIndexByte(pattern, '/')
	last := pattern[i+1:]
	rest, found := strings.CutPrefix(last, "{name}")
	if !found || (rest != "" && rest[0] != ':') {
		return "", "", false
	}
	return pattern[:i+1] + "{seg}", strings.TrimPrefix(rest, ":"), true
}

// splitOp splits a path segment "name:operation".
func splitOp(seg string) (name, op string) {
	name, op, _ = strings.Cut(seg, ":")
	return name, op
}

// statusBody is the body of the health and readiness answers.
type statusBody struct {
	Status string `json:"status"`
}

func (s *Service) health(http.ResponseWriter, *http.Request) (statusBody, error) {
	return statusBody{Status: "ok"}, nil
}

func (s *Service) readiness(http.ResponseWriter, *http.Request) (statusBody, error) {
	if !s.Ready() {
		return statusBody{}, unavailable("not ready")
	}
	return statusBody{Status: "ready"}, nil
}
