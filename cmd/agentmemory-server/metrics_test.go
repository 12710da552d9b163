package main

import (
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

// scrape reads url as Prometheus does, with key when not empty, and
// parses the text exposition.
func scrape(t *testing.T, url, key string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// value returns the value of the series of family name with exactly
// labels (name, value pairs): a counter's or gauge's value, or a
// histogram's count. It is 0 for a series absent.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
next:
	for _, m := range fams[name].GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		for _, l := range m.GetLabel() {
			if want[l.GetName()] != l.GetValue() {
				continue next
			}
		}
		switch {
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount())
		case m.Gauge != nil:
			return m.GetGauge().GetValue()
		}
		return m.GetCounter().GetValue()
	}
	return 0
}

// The server's /metrics, behind its keys, counts the requests by
// operation and status, the store calls, and the model calls with the
// tokens the endpoint reported, and the series move with the work.
func TestMetricsCountTheServersWork(t *testing.T) {
	const key = "metrics-scrape-key-0123456789"
	srv := fakeopenai.New(t)
	srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply { return chatReply(r).WithUsage(7, 2) })
	srv.HandleEmbeddings(func(r fakeopenai.Request) fakeopenai.Reply {
		return embeddingsReply(r).WithUsage(3*len(r.Embeddings.Input), 0)
	})
	base, _ := serve(t, map[string]string{"AGENTMEMORY_SERVER_KEYS": key, "OPENAI_BASE_URL": srv.URL(), "OPENAI_CHAT_MODEL": "env-chat",
		"OPENAI_EMBEDDING_MODEL": "env-emb", "OPENAI_EMBEDDING_DIMENSIONS": "8"})

	code, _ := call(t, "GET", base+"/metrics", "", nil)
	assert.Equal(t, http.StatusUnauthorized, code, "/metrics is behind the keys")
	before := scrape(t, base+"/metrics", key)
	assert.Contains(t, before, "go_goroutines")
	assert.Contains(t, before, "process_resident_memory_bytes")
	assert.Zero(t, value(before, "agentmemory_http_request_duration_seconds", "operation", "update_memories", "status", "202"))

	code, out := call(t, "POST", base+"/memory_stores", key, map[string]any{"name": "support",
		"definition": map[string]any{"kind": "default", "chat_model": "env-chat", "embedding_model": "env-emb"}})
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out = call(t, "POST", base+"/memory_stores/support:update_memories", key, map[string]any{
		"scope": "alice", "update_delay": 0, "items": []any{map[string]any{"role": "user", "content": "I drink matcha daily."}}})
	require.Equal(t, http.StatusAccepted, code, "%v", out)
	id := out["update_id"].(string)
	polls := 0
	for {
		code, out = call(t, "GET", base+"/memory_stores/support/updates/"+id, key, nil)
		require.Equal(t, http.StatusOK, code, "%v", out)
		polls++
		if st := out["status"]; st != "queued" && st != "in_progress" {
			require.Equal(t, "completed", st, "%v", out)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	code, out = call(t, "POST", base+"/memory_stores/support:search_memories", key, map[string]any{
		"scope": "alice", "items": []any{map[string]any{"role": "user", "content": "Which tea?"}}})
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, _ = call(t, "POST", base+"/memory_stores/support:update_memories", key, map[string]any{"scope": ""})
	require.Equal(t, http.StatusBadRequest, code)

	after := scrape(t, base+"/metrics", key)
	req := func(op, status string) float64 {
		return value(after, "agentmemory_http_request_duration_seconds", "operation", op, "status", status)
	}
	assert.Equal(t, 1.0, req("create_memory_store", "200"))
	assert.Equal(t, 1.0, req("update_memories", "202"))
	assert.Equal(t, 1.0, req("update_memories", "400"))
	assert.Equal(t, float64(polls), req("get_update", "200"))
	assert.Equal(t, 1.0, req("search_memories", "200"))

	// The tokens are the endpoint's: 7 in and 2 out a chat answer, 3 a
	// text embedded.
	var chats, texts float64
	for _, r := range srv.Requests() {
		if r.Kind == fakeopenai.KindChat {
			chats++
		} else {
			texts += float64(len(r.Embeddings.Input))
		}
	}
	require.NotZero(t, chats)
	require.NotZero(t, texts)
	tokens := func(role, typ string) float64 {
		return value(after, "agentmemory_model_tokens_total", "role", role, "type", typ)
	}
	assert.Equal(t, 7*chats, tokens("chat", "input")+tokens("mini", "input"))
	assert.Equal(t, 2*chats, tokens("chat", "output")+tokens("mini", "output"))
	assert.Equal(t, 3*texts, tokens("embed", "input"))
	calls := value(after, "agentmemory_model_call_duration_seconds", "role", "chat") + value(after, "agentmemory_model_call_duration_seconds", "role", "mini")
	assert.Equal(t, chats, calls)

	// The accept's writes (its records and turns, one batch on SQLite)
	// and the update's, the search's reads.
	for _, op := range []string{"write_records", "put_interaction", "put_session", "search_sessions"} {
		assert.NotZero(t, value(after, "agentmemory_store_call_duration_seconds", "operation", op), op)
	}
	assert.Greater(t, value(after, "agentmemory_store_call_duration_seconds", "operation", "write_records"),
		value(before, "agentmemory_store_call_duration_seconds", "operation", "write_records"))

	// The queue's series, read from the store at the scrape: the update
	// this replica claimed and ran, none left.
	require.Contains(t, after, "agentmemory_update_queue_depth")
	assert.Zero(t, value(after, "agentmemory_update_queue_depth"))
	assert.GreaterOrEqual(t, value(after, "agentmemory_update_claims_total"), 1.0)

	// The SQLite writer's series: the accept's batch and the update's
	// writes committed since the first scrape, each commit timed.
	commits := value(after, "agentmemory_sqlite_commits_total") - value(before, "agentmemory_sqlite_commits_total")
	writes := value(after, "agentmemory_sqlite_writes_total") - value(before, "agentmemory_sqlite_writes_total")
	assert.Positive(t, commits)
	assert.GreaterOrEqual(t, writes, commits, "a commit holds one write or more")
	assert.Greater(t, value(after, "agentmemory_sqlite_commit_seconds_total"), value(before, "agentmemory_sqlite_commit_seconds_total"))
	assert.GreaterOrEqual(t, value(after, "agentmemory_sqlite_writer_busy_seconds_total"), value(after, "agentmemory_sqlite_commit_seconds_total"))
}

// With -metrics-addr, /metrics is served there without a key, and not
// on the API's address.
func TestMetricsAddr(t *testing.T) {
	const key = "metrics-addr-key-0123456789"
	base, logs, stop := serveOn(t, env(map[string]string{"AGENTMEMORY_SERVER_KEYS": key}), "-metrics-addr", "127.0.0.1:0")
	m := regexp.MustCompile(`metrics_addr=(127\.0\.0\.1:\d+)`).FindStringSubmatch(logs.String())
	require.NotNil(t, m, "the metrics address is logged: %s", logs.String())
	code, out := call(t, "POST", base+"/memory_stores", key, storeBody)
	require.Equal(t, http.StatusOK, code, "%v", out)

	fams := scrape(t, "http://"+m[1]+"/metrics", "")
	assert.Equal(t, 1.0, value(fams, "agentmemory_http_request_duration_seconds", "operation", "create_memory_store", "status", "200"))
	code, _ = call(t, "GET", base+"/metrics", key, nil)
	assert.Equal(t, http.StatusNotFound, code, "the API's address does not serve /metrics then")
	code, _ = call(t, "GET", "http://"+m[1]+"/memory_stores", key, nil)
	assert.Equal(t, http.StatusNotFound, code, "the metrics address serves /metrics only")

	require.NoError(t, stop())
	_, err := http.Get("http://" + m[1] + "/metrics")
	assert.Error(t, err, "the metrics listener stops with the server")

	err = run(t.Context(), []string{"-addr", "127.0.0.1:0", "-db", t.TempDir() + "/m.db", "-metrics-addr", "127.0.0.1:bad"}, env(nil), io.Discard, nil)
	assert.ErrorContains(t, err, "-metrics-addr")
}

// The gateway's requests are counted and logged like the API's: by
// operation and status, refused ones as "other".
func TestMetricsCountTheGatewaysRequests(t *testing.T) {
	const key = "metrics-gateway-key-0123456789"
	srv := fakeopenai.New(t)
	srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply { return chatReply(r) })
	base, logs := serve(t, map[string]string{"AGENTMEMORY_SERVER_KEYS": key, "OPENAI_BASE_URL": srv.URL(), "OPENAI_CHAT_MODEL": "env-chat",
		"OPENAI_EMBEDDING_MODEL": "env-emb", "OPENAI_EMBEDDING_DIMENSIONS": "8"})

	body := map[string]any{"model": "env-chat", "user": "alice", "messages": []any{map[string]any{"role": "user", "content": "Hello there."}}}
	code, out := call(t, "POST", base+"/v1/chat/completions", key, body)
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, _ = call(t, "POST", base+"/v1/chat/completions", "", body)
	require.Equal(t, http.StatusUnauthorized, code)

	fams := scrape(t, base+"/metrics", key)
	req := func(op, status string) float64 {
		return value(fams, "agentmemory_http_request_duration_seconds", "operation", op, "status", status)
	}
	assert.Equal(t, 1.0, req("gateway_chat_completions", "200"))
	assert.Equal(t, 1.0, req("other", "401"), "refused before the gateway")
	assert.Regexp(t, `http request.*path=/v1/chat/completions status=200`, logs.String())
}
