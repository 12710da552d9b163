package memoryservice

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
)

// ServeHTTP serves the API with request ids and request logs.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.serve(w, r, s.mux) }

// serve serves r with h, giving it a request id, logging it, and telling
// Config.ObserveRequest of a request no operation of h observed.
func (s *Service) serve(w http.ResponseWriter, r *http.Request, h http.Handler) {
	start := time.Now()
	id := r.Header.Get("x-ms-client-request-id")
	if id == "" || len(id) > 128 {
		id = newID("req_")
	}
	w.Header().Set("x-request-id", id)
	w.Header().Set("x-ms-client-request-id", id)
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	observed := false
	if s.cfg.ObserveRequest != nil {
		r = r.WithContext(context.WithValue(r.Context(), observedKey{}, &observed))
	}
	h.ServeHTTP(rec, r)
	if s.cfg.ObserveRequest != nil && !observed {
		// Refused before an operation (401, 403, 415, 421, 429), an
		// unknown route, or MCP's endpoint.
		s.cfg.ObserveRequest(otherOperation, rec.status, time.Since(start))
	}
	level := slog.LevelInfo
	if rec.status >= 500 {
		level = slog.LevelError
	}
	s.log.Log(r.Context(), level, "http request", "request_id", id, "method", r.Method, "path", truncate(r.URL.Path, maxLogField),
		"status", rec.status, "duration_ms", time.Since(start).Milliseconds())
}

// otherOperation is the operation Config.ObserveRequest is told of for a
// request no operation answered.
const otherOperation = "other"

// observedKey carries, in a request's context, the flag handle sets once
// it has told Config.ObserveRequest of the request.
type observedKey struct{}

// observed tells Config.ObserveRequest of r, answered with status after
// d, as op, and marks it told.
func (s *Service) observed(r *http.Request, op string, status int, d time.Duration) {
	if s.cfg.ObserveRequest == nil {
		return
	}
	s.cfg.ObserveRequest(op, status, d)
	if done, ok := r.Context().Value(observedKey{}).(*bool); ok {
		*done = true
	}
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
			if s.admitFailure(w, r) {
				refuse(w, r, unauthorized("missing credentials: send \"Authorization: Bearer <key>\" or \"api-key: <key>\""))
			}
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
			if s.admitFailure(w, r) {
				refuse(w, r, unauthorized("invalid API key"))
			}
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
