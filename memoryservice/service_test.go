package memoryservice

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// server is a Service on a SQLite file, served by httptest.
type server struct {
	t   testing.TB
	svc *Service
	st  store.Store
	srv *httptest.Server
	key string
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// start opens the SQLite file at path and serves it with the offline
// models; cfg's Keys and Now are kept.
func start(t testing.TB, path string, cfg Config) *server {
	t.Helper()
	return startWrapped(t, path, cfg, func(st *sqlite.Store) store.Store { return st })
}

// startWrapped is start serving what wrap makes of the SQLite store.
func startWrapped(t testing.TB, path string, cfg Config, wrap func(*sqlite.Store) store.Store) *server {
	t.Helper()
	return startOn(t, func(t testing.TB, dims int) store.Store {
		st, err := sqlite.Open(context.Background(), path, sqlite.Config{Dimensions: dims, Logger: quiet()})
		require.NoError(t, err)
		return wrap(st)
	}, cfg)
}

// opener opens the store a test server runs on, for vectors of dims.
type opener func(t testing.TB, dims int) store.Store

// startOn serves the store open returns, with the offline models unless
// cfg names others.
func startOn(t testing.TB, open opener, cfg Config) *server {
	t.Helper()
	emb, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	chat, err := offline.New(offline.Config{})
	require.NoError(t, err)
	if cfg.Chat == nil && cfg.Models == nil {
		cfg.Chat, cfg.Mini = chat, chat
	}
	if cfg.Embedder == nil && cfg.Models == nil {
		cfg.Embedder = emb
	}
	dims := emb.Dimensions()
	if cfg.Embedder != nil {
		dims = cfg.Embedder.Dimensions()
	}
	st := open(t, dims) // an opener for Models ignores it
	if cfg.Logger == nil {
		cfg.Logger = quiet()
	}
	svc, err := New(context.Background(), st, cfg)
	require.NoError(t, err)
	s := &server{t: t, svc: svc, st: st, srv: httptest.NewServer(svc)}
	if len(cfg.Keys) > 0 {
		s.key = cfg.Keys[0].Key
	}
	t.Cleanup(s.stop)
	return s
}

func (s *server) stop() {
	if s.srv == nil {
		return
	}
	s.srv.Close()
	require.NoError(s.t, s.svc.Close(context.Background()))
	require.NoError(s.t, s.st.Close())
	s.srv = nil
}

// do sends a request with body (a value to encode, or a string sent as
// it is) and decodes the JSON answer.
func (s *server) do(method, path string, body any) (int, map[string]any, http.Header) {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(s.t, err)
		rd = bytes.NewReader(raw)
	}
	if !strings.Contains(path, "api-version") {
		if strings.Contains(path, "?") {
			path += "&api-version=v1"
		} else {
			path += "?api-version=v1"
		}
	}
	req, err := http.NewRequest(method, s.srv.URL+path, rd)
	require.NoError(s.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("foundry-features", "MemoryStores=V1Preview")
	if s.key != "" {
		req.Header.Set("Authorization", "Bearer "+s.key)
	}
	code, raw, header := s.exchange(req)
	var out map[string]any
	if len(raw) > 0 {
		require.NoError(s.t, json.Unmarshal(raw, &out), "body %s", raw)
	}
	return code, out, header
}

// exchange sends req and returns the answer's status, body and headers.
func (s *server) exchange(req *http.Request) (int, []byte, http.Header) {
	s.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	return resp.StatusCode, raw, resp.Header
}

func (s *server) createStore(name string, options map[string]any) map[string]any {
	s.t.Helper()
	def := map[string]any{"kind": "default", "chat_model": "gpt-4.1", "embedding_model": "text-embedding-3-small"}
	if options != nil {
		def["options"] = options
	}
	code, out, _ := s.do("POST", "/memory_stores", map[string]any{"name": name, "description": "d", "definition": def})
	require.Equal(s.t, http.StatusOK, code, "%v", out)
	return out
}

func user(text string) map[string]any {
	return map[string]any{"type": "message", "role": "user", "content": text}
}

// update posts update_memories and returns the update id.
func (s *server) update(name, scope string, delay int, texts ...string) string {
	s.t.Helper()
	var items []any
	for _, t := range texts {
		items = append(items, user(t))
	}
	code, out, h := s.do("POST", "/memory_stores/"+name+":update_memories", map[string]any{"scope": scope, "items": items, "update_delay": delay})
	require.Equal(s.t, http.StatusAccepted, code, "%v", out)
	id, _ := out["update_id"].(string)
	require.NotEmpty(s.t, id)
	assert.Equal(s.t, "queued", out["status"])
	assert.Contains(s.t, h.Get("Operation-Location"), "/memory_stores/"+name+"/updates/"+id)
	return id
}

// wait polls an update until it leaves queued and in_progress.
func (s *server) wait(name, id string) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		code, out, _ := s.do("GET", "/memory_stores/"+name+"/updates/"+id, nil)
		require.Equal(s.t, http.StatusOK, code, "%v", out)
		if st := out["status"]; st != "queued" && st != "in_progress" {
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("update %s still running", id)
	return nil
}

func (s *server) search(name, scope, query string) []map[string]any {
	s.t.Helper()
	code, out, _ := s.do("POST", "/memory_stores/"+name+":search_memories",
		map[string]any{"scope": scope, "items": []any{user(query)}, "options": map[string]any{"max_memories": 10}})
	require.Equal(s.t, http.StatusOK, code, "%v", out)
	return items(out["memories"], "memory_item")
}

func (s *server) list(name, scope, query string) []map[string]any {
	s.t.Helper()
	code, out, _ := s.do("POST", "/memory_stores/"+name+"/items:list"+query, map[string]any{"scope": scope})
	require.Equal(s.t, http.StatusOK, code, "%v", out)
	return items(out["data"], "")
}

// items reads a JSON list of objects, each the field key of the element
// (or the element itself when key is "").
func items(v any, key string) []map[string]any {
	var out []map[string]any
	list, _ := v.([]any)
	for _, e := range list {
		m, _ := e.(map[string]any)
		if key != "" {
			m, _ = m[key].(map[string]any)
		}
		out = append(out, m)
	}
	return out
}

func contents(ms []map[string]any) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m["content"].(string))
		b.WriteString("\n")
	}
	return b.String()
}

// dbPath is a new store file, a copy of an empty one (opening it skips
// creating the schema).
func dbPath(t testing.TB) string { return sqlitetest.NewFile(t) }

func errorParam(t *testing.T, out map[string]any) string {
	t.Helper()
	e, ok := out["error"].(map[string]any)
	require.True(t, ok, "error shape: %v", out)
	assert.NotEmpty(t, e["code"])
	assert.NotEmpty(t, e["message"])
	p, _ := e["param"].(string)
	return p
}

func jsonDecode(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }

// updateWith posts update_memories with body (scope added) and returns the
// update id.
func (s *server) updateWith(name, scope string, body map[string]any) string {
	s.t.Helper()
	body["scope"] = scope
	code, out, _ := s.do("POST", "/memory_stores/"+name+":update_memories", body)
	require.Equal(s.t, http.StatusAccepted, code, "%v", out)
	id, _ := out["update_id"].(string)
	require.NotEmpty(s.t, id)
	return id
}
