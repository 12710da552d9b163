package memoryservice

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/metrics"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// observed is what Config.ObserveRequest was told.
type observed struct {
	mu  sync.Mutex
	ops []string // "operation status"
}

func (o *observed) observe(op string, status int, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ops = append(o.ops, op+" "+http.StatusText(status))
	if d <= 0 {
		o.ops = append(o.ops, "no duration for "+op)
	}
}

func (o *observed) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.ops...)
}

// Every operation's request is observed once, under its name in
// snake_case, with the status answered: a success, a client's error, and
// a failure of the store.
func TestRequestsAreObserved(t *testing.T) {
	var o observed
	s := start(t, dbPath(t), Config{ObserveRequest: o.observe})
	s.createStore("support", nil)
	s.update("support", "alice", 3600, "I like tea.")
	code, _, _ := s.do("POST", "/memory_stores/support:update_memories", map[string]any{"scope": ""})
	require.Equal(t, http.StatusBadRequest, code)
	code, _, _ = s.do("GET", "/memory_stores/nowhere", nil)
	require.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, []string{"create_memory_store OK", "update_memories Accepted", "update_memories Bad Request", "get_memory_store Not Found"}, o.list())

	require.NoError(t, s.st.Close()) // every store call fails from now on
	code, _, _ = s.do("GET", "/memory_stores", nil)
	require.Equal(t, http.StatusInternalServerError, code)
	assert.Equal(t, "list_memory_stores Internal Server Error", o.list()[4])
}

// Config.WrapModels wraps the clients a memory store runs on, for its
// provider's work and for the service's own embeddings.
func TestWrapModelsSeesEveryModelCall(t *testing.T) {
	reg := prometheus.NewRegistry()
	rec, err := metrics.New(reg)
	require.NoError(t, err)
	var wrapped int
	var mu sync.Mutex
	wrap := func(chat, mini agent.ChatClient, emb embed.Embedder) (agent.ChatClient, agent.ChatClient, embed.Embedder) {
		mu.Lock()
		wrapped++
		mu.Unlock()
		return rec.Models(chat, mini, emb)
	}
	s := start(t, dbPath(t), Config{WrapModels: wrap})
	s.createStore("support", nil)
	id := s.update("support", "alice", 0, "I like green tea.", "My sister is Ana.")
	require.Equal(t, "completed", s.wait("support", id)["status"])
	code, out, _ := s.do("POST", "/memory_stores/support/items", map[string]any{"scope": "alice", "kind": "user_profile", "content": "Likes tea."})
	require.Equal(t, http.StatusOK, code, "%v", out)

	mu.Lock()
	assert.NotZero(t, wrapped)
	mu.Unlock()
	text := scrapeText(t, reg)
	assert.Regexp(t, `agentmemory_model_call_duration_seconds_count\{role="(chat|mini)"\} [1-9]`, text, "the update's model work is counted")
	assert.Regexp(t, `agentmemory_model_call_duration_seconds_count\{role="embed"\} [1-9]`, text, "the item's embedding is counted")
}

// Config.Metrics is served at GET /metrics behind the keys, and without
// it there is no such path.
func TestMetricsAreServedBehindTheKeys(t *testing.T) {
	const key = "metrics-test-key-0123456789"
	reg := prometheus.NewRegistry()
	rec, err := metrics.New(reg)
	require.NoError(t, err)
	s := start(t, dbPath(t), Config{Keys: []APIKey{{Key: key}}, ObserveRequest: rec.Request, Metrics: metrics.Handler(reg, nil)})
	s.createStore("support", nil)

	resp, err := http.Get(s.srv.URL + "/metrics")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	req, err := http.NewRequest("GET", s.srv.URL+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("api-key", key)
	code, body, _ := s.exchange(req)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, string(body), `agentmemory_http_request_duration_seconds_count{operation="create_memory_store",status="200"} 1`)

	plain := start(t, dbPath(t), Config{})
	code, _, _ = plain.do("GET", "/metrics", nil)
	assert.Equal(t, http.StatusNotFound, code)
}

// scrapeText reads reg's exposition text through metrics.Handler.
func scrapeText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	w := httptest.NewRecorder()
	metrics.Handler(reg, nil).ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, http.StatusOK, w.Code)
	return w.Body.String()
}

// A store that fails shows in the store's error series, scraped over
// HTTP from /metrics: a SQLite store closed under the service fails
// every call with store.ErrClosed.
func TestStoreErrorsShowInMetrics(t *testing.T) {
	const key = "store-errors-key-0123456789"
	reg := prometheus.NewRegistry()
	rec, err := metrics.New(reg)
	require.NoError(t, err)
	var under *sqlite.Store
	s := startWrapped(t, dbPath(t), Config{Keys: []APIKey{{Key: key}}, ObserveRequest: rec.Request, Metrics: metrics.Handler(reg, nil)},
		func(st *sqlite.Store) store.Store { under = st; return rec.Store(st) })
	s.createStore("support", nil)
	require.NoError(t, under.Close())
	for range 2 {
		code, _, _ := s.do("GET", "/memory_stores/support", nil)
		require.Equal(t, http.StatusInternalServerError, code)
	}

	req, err := http.NewRequest("GET", s.srv.URL+"/metrics", nil)
	require.NoError(t, err)
	req.Header.Set("api-key", key)
	code, body, _ := s.exchange(req)
	require.Equal(t, http.StatusOK, code)
	text := string(body)
	assert.Regexp(t, `agentmemory_store_call_errors_total\{error="closed",operation="[a-z_]+"\} [1-9]`, text)
	assert.Contains(t, text, `agentmemory_http_request_duration_seconds_count{operation="get_memory_store",status="500"} 2`)
}

// Requests no operation answered are observed too, as "other": refused
// before an operation (401, 429…) or for an unknown route.
func TestRefusedRequestsAreObserved(t *testing.T) {
	var o observed
	const key = "observe-refused-key-0123"
	s := start(t, dbPath(t), Config{Keys: []APIKey{{Key: key}}, ObserveRequest: o.observe})
	code, _, _ := s.send("GET", "/memory_stores?api-version=v1", "", "", map[string]string{"api-key": "not-the-key-at-all"})
	require.Equal(t, http.StatusUnauthorized, code)
	code, _, _ = s.send("GET", "/no/such/route?api-version=v1", "", "", map[string]string{"api-key": key})
	require.Equal(t, http.StatusNotFound, code)
	code, _, _ = s.send("GET", "/memory_stores?api-version=v1", "", "", map[string]string{"api-key": key})
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, []string{"other Unauthorized", "other Not Found", "list_memory_stores OK"}, o.list())
}
