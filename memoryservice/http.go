package memoryservice

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

func (s *Service) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	m.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !s.Ready() {
			writeError(w, unavailable("not ready"))
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	api := http.NewServeMux()
	api.HandleFunc("POST /memory_stores", s.createStore)
	api.HandleFunc("GET /memory_stores", s.listStores)
	// "{name}" and "{name}:operation" share a path segment.
	api.HandleFunc("GET /memory_stores/{seg}", func(w http.ResponseWriter, r *http.Request) {
		name, op := splitOp(r.PathValue("seg"))
		if op != "" {
			writeError(w, notFound("", "no such operation"))
			return
		}
		s.getStore(w, r, name)
	})
	api.HandleFunc("DELETE /memory_stores/{seg}", func(w http.ResponseWriter, r *http.Request) {
		name, op := splitOp(r.PathValue("seg"))
		if op != "" {
			writeError(w, notFound("", "no such operation"))
			return
		}
		s.deleteStore(w, r, name)
	})
	api.HandleFunc("POST /memory_stores/{seg}", func(w http.ResponseWriter, r *http.Request) {
		name, op := splitOp(r.PathValue("seg"))
		switch op {
		case "":
			s.updateStore(w, r, name)
		case "update_memories":
			s.updateMemories(w, r, name)
		case "search_memories":
			s.searchMemories(w, r, name)
		case "delete_scope":
			s.deleteScope(w, r, name)
		default:
			writeError(w, notFound("", "no such operation %q", op))
		}
	})
	api.HandleFunc("GET /memory_stores/{name}/updates/{id}", s.getUpdate)
	api.HandleFunc("POST /memory_stores/{name}/items:list", s.listItems)
	api.HandleFunc("POST /memory_stores/{name}/items", s.createItem)
	api.HandleFunc("GET /memory_stores/{name}/items/{id}", s.getItem)
	api.HandleFunc("POST /memory_stores/{name}/items/{id}", s.updateItem)
	api.HandleFunc("DELETE /memory_stores/{name}/items/{id}", s.deleteItem)
	api.HandleFunc("/mcp/{name}/{scope}", s.serveMCP)
	api.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, notFound("", "no such operation: %s %s", r.Method, r.URL.Path))
	})
	m.Handle("/", s.guard(s.authenticate(api)))
	s.mux = m
}

func splitOp(seg string) (name, op string) {
	name, op, _ = strings.Cut(seg, ":")
	return name, op
}

// ServeHTTP serves the API with request ids and request logs.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.Header.Get("x-ms-client-request-id")
	if id == "" || len(id) > 128 {
		id = newID("req_")
	}
	w.Header().Set("x-request-id", id)
	w.Header().Set("x-ms-client-request-id", id)
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	s.mux.ServeHTTP(rec, r)
	level := slog.LevelInfo
	if rec.status >= 500 {
		level = slog.LevelError
	}
	s.log.Log(r.Context(), level, "http request", "request_id", id, "method", r.Method, "path", truncate(r.URL.Path, maxLogField),
		"status", rec.status, "duration_ms", time.Since(start).Milliseconds())
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController the connection's writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// authenticate admits a request carrying one of Config.Keys, as
// "Authorization: Bearer <key>" or "api-key: <key>", and refuses with 403
// a key limited to other memory stores than the one the path names; with
// no keys configured it admits every request. An admitted request takes a
// token of its key's rate limit (admit).
func (s *Service) authenticate(next http.Handler) http.Handler {
	if len(s.cfg.Keys) == 0 {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if s.admit(w, r, 0) {
				next.ServeHTTP(w, r)
			}
		})
	}
	sums := make([][32]byte, len(s.cfg.Keys))
	for i, k := range s.cfg.Keys {
		sums[i] = sha256.Sum256([]byte(k.Key))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("api-key")
		if key == "" {
			if a := r.Header.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
				key = strings.TrimSpace(a[7:])
			}
		}
		if key == "" {
			refuse(w, r, unauthorized("missing credentials: send \"Authorization: Bearer <key>\" or \"api-key: <key>\""))
			return
		}
		got := sha256.Sum256([]byte(key))
		match := -1
		for i, want := range sums {
			if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
				match = i
			}
		}
		if match < 0 {
			refuse(w, r, unauthorized("invalid API key"))
			return
		}
		if stores := s.cfg.Keys[match].Stores; len(stores) > 0 {
			if name, ok := storeInPath(r.URL.Path); ok && !slices.Contains(stores, name) {
				refuse(w, r, forbidden(name))
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), storesKey{}, stores))
		}
		if !s.admit(w, r, match) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// storesKey keys the memory stores a limited key may reach in a request's
// context.
type storesKey struct{}

// mayReach reports whether the request's key may reach memory store name.
func mayReach(r *http.Request, name string) bool {
	stores, ok := r.Context().Value(storesKey{}).([]string)
	return !ok || slices.Contains(stores, name)
}

// storeInPath returns the memory store a path names, if any.
func storeInPath(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/memory_stores/")
	if !ok {
		rest, ok = strings.CutPrefix(path, "/mcp/")
	}
	if !ok || rest == "" {
		return "", false
	}
	seg, _, _ := strings.Cut(rest, "/")
	name, _ := splitOp(seg)
	return name, true
}

// decode reads a JSON body of at most Config.MaxBodyBytes into v,
// refusing unknown trailing data; its errors are 4xx naming the field.
func (s *Service) decode(w http.ResponseWriter, r *http.Request, v any) error {
	body := http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &tooBig):
			return tooLarge(tooBig.Limit)
		case errors.As(err, &typeErr):
			field := typeErr.Field
			if field == "" {
				field = "body"
			}
			return badRequest(field, "expected %s, got JSON %s", typeErr.Type, typeErr.Value)
		case errors.Is(err, io.EOF):
			return badRequest("body", "a JSON object is required")
		default:
			return badRequest("body", "not valid JSON: %v", err)
		}
	}
	if dec.More() {
		return badRequest("body", "unexpected data after the JSON object")
	}
	return nil
}

// tooLarge is the error of a body over the server's limit of limit bytes.
func tooLarge(limit int64) *apiError {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Code: "request_too_large", Type: "invalid_request_error",
		Param: "body", Message: "body: larger than the server's limit of " + itoa(limit) + " bytes"}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// fail answers err: an *apiError as it is, a store's ErrInvalid as a 400,
// anything else as a logged 500.
func (s *Service) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		writeError(w, ae)
	case errors.Is(err, store.ErrInvalid):
		writeError(w, badRequest("body", "%v", err))
	default:
		s.log.ErrorContext(r.Context(), "memoryservice: "+what, "err", truncate(err.Error(), maxLogField))
		writeError(w, err)
	}
}
