package cosmos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// hostile are user-controlled strings that must never reach a query's
// text; each carries the marker qzx, which no query of ours contains.
var hostile = []string{
	`qzx' OR '1'='1`,
	`x") OR true OR ("qzx`,
	`qzx'); DELETE FROM c; --`,
	`@p0 qzx`,
	`c.user_id = "qzx"`,
}

// TestQueriesAreParameterised drives every query-issuing method with
// hostile user ids, session ids, categories, hashes and search text over
// the wire, and checks each recorded query body: the user's values travel
// only as parameters, never inside the SQL text.
func TestQueriesAreParameterised(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r recorded) bool {
		if r.isQuery() && strings.Contains(string(r.Body), "VectorDistance") {
			// One vector hit, so that search goes on to load it.
			_, _ = w.Write([]byte(`{"Documents":[{"id":"doc-1","score":0.9}],"_count":1}`))
			return true
		}
		if r.isQuery() && strings.Contains(string(r.Body), "COUNT(1)") {
			_, _ = w.Write([]byte(`{"Documents":[{"n":1,"total":3}],"_count":1}`))
			return true
		}
		return false
	})
	s := f.open(t, nil)
	ctx := t.Context()
	for _, h := range hostile {
		f.reset()
		since := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		_, err := s.ListInteractions(ctx, h, store.InteractionFilter{SessionID: h, MetadataPending: true, Since: since, Until: since.Add(time.Hour), Limit: 3})
		require.NoError(t, err)
		_, err = s.ListInsights(ctx, h, store.InsightFilter{Type: store.InsightType(h), Category: h, SessionID: h, Processed: new(bool), Limit: 2})
		require.NoError(t, err)
		_, err = s.ListSessions(ctx, h, store.SessionFilter{Status: store.SessionStatus(h), ReflectionStatus: store.ReflectionStatus(h), Limit: 1})
		require.NoError(t, err)
		_, err = s.FindInsightByHash(ctx, h, h)
		require.ErrorIs(t, err, store.ErrNotFound)
		q := store.SearchRequest{Text: h + " zebra", Vector: []float32{1, 0, 0}, SessionID: h, Category: h, InsightType: store.InsightType(h), Since: since}
		_, err = s.SearchInteractions(ctx, h, q)
		require.NoError(t, err)
		_, err = s.SearchInsights(ctx, h, q)
		require.NoError(t, err)
		_, err = s.SearchSessions(ctx, h, q)
		require.NoError(t, err)
		require.NoError(t, s.DeleteUser(ctx, h))

		reqs := f.requests()
		var queries int
		for _, r := range reqs {
			if !r.isQuery() {
				continue
			}
			queries++
			body := r.query(t)
			for _, w := range []string{"qzx", "zebra", "doc-1"} {
				assert.NotContains(t, strings.ToLower(body.Query), w, "query text carries user data: %s", body.Query)
			}
			assert.NotContains(t, body.Query, "'", "no string literal in %s", body.Query)
			// Every partition-scoped query names the user's partition.
			assert.Equal(t, mustJSON(t, []string{h}), r.Header.Get("x-ms-documentdb-partitionkey"), body.Query)
			var carried bool
			for _, p := range body.Parameters {
				if p.Value == h {
					carried = true
				}
			}
			assert.True(t, carried, "the user id travels as a parameter: %s", body.Query)
		}
		// 3 lists, 1 find, 3 searches x (legs + statistics + load), 3 id listings.
		assert.GreaterOrEqual(t, queries, 3+1+3*4+3, "every method ran its queries")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// TestQueryShapes pins the SQL of the search legs.
func TestQueryShapes(t *testing.T) {
	r := store.SearchRequest{Text: "x", Vector: []float32{1, 2}, SessionID: "s1", Category: "risk", InsightType: store.InsightSession,
		Since: time.Date(2026, 3, 1, 10, 0, 0, 0, time.FixedZone("x", 3600))}
	sql, params := vectorQuery(store.KindInsight, "alice", r, store.FieldInsightVector, 100, Config{VectorSearch: VectorSearchIndex})
	assert.Equal(t, `SELECT TOP @p6 c.id, VectorDistance(c.insight_vector, @p7) AS score FROM c WHERE c.user_id = @p0`+
		` AND (NOT IS_DEFINED(c.supersede_reason) OR c.supersede_reason = "") AND ARRAY_CONTAINS(c.session_ids, @p1)`+
		` AND c.insight_type = @p2 AND c.category = @p3 AND c.created_at >= @p4 AND ARRAY_CONTAINS(c.vector_fields, @p5)`+
		` ORDER BY VectorDistance(c.insight_vector, @p7)`, sql)
	require.Len(t, params, 8)
	assert.Equal(t, "2026-03-01T09:00:00.000000000Z", params[4].Value, "time bounds are fixed-width UTC")
	assert.Equal(t, 100, params[6].Value)

	sql, _ = vectorQuery(store.KindInteraction, "alice", store.SearchRequest{Vector: []float32{1}}, store.FieldSummaryVector, 5, Config{VectorSearch: VectorSearchExact})
	assert.Contains(t, sql, "VectorDistance(c.summary_vector, @p3, true)", "exact search is VectorDistance's brute-force flag")

	cand, cp, stats, sp := textQueries(store.KindInteraction, "alice", store.SearchRequest{SessionID: "s1"}, []string{"zebra", "quartz"}, 50)
	assert.Equal(t, `SELECT TOP @p2 c.id, c.content, c.summary, c.metadata FROM c WHERE c.user_id = @p0 AND c.session_id = @p1`+
		` AND (ARRAY_CONTAINS(c.search_terms, @p3) OR ARRAY_CONTAINS(c.search_terms, @p4))`, cand)
	assert.Len(t, cp, 5)
	assert.Equal(t, `SELECT COUNT(1) AS n, SUM(c.search_length) AS total FROM c WHERE c.user_id = @p0 AND c.session_id = @p1`, stats)
	assert.Len(t, sp, 2)

	cand, _, _, _ = textQueries(store.KindSessionSummary, "alice", store.SearchRequest{}, []string{"zebra", "quartz"}, 50)
	assert.Equal(t, `SELECT TOP @p1 c.id, c.summary, c.key_topics FROM c WHERE c.user_id = @p0 AND NOT IS_DEFINED(c.doc_type)`+
		` AND (ARRAY_CONTAINS(c.search_terms, @p2) OR ARRAY_CONTAINS(c.search_terms, @p3))`, cand)

	scan, scanParams := textScanQuery(store.KindInsight, "alice", store.SearchRequest{}, []string{"zebra", "quartz"}, 500)
	assert.Equal(t, `SELECT TOP @p1 c.id, c.search_length, [ARRAY_CONTAINS(c.search_terms, @p2), ARRAY_CONTAINS(c.search_terms, @p3)] AS has`+
		` FROM c WHERE c.user_id = @p0 AND (NOT IS_DEFINED(c.supersede_reason) OR c.supersede_reason = "")`+
		` AND (ARRAY_CONTAINS(c.search_terms, @p2) OR ARRAY_CONTAINS(c.search_terms, @p3))`, scan)
	require.Len(t, scanParams, 4)
	assert.Equal(t, 500, scanParams[1].Value)

	load, loadParams := textLoadQuery(store.KindInsight, "alice", store.SearchRequest{}, []string{"a", "b"})
	assert.Equal(t, `SELECT c.id, c.insight_text FROM c WHERE c.user_id = @p0`+
		` AND (NOT IS_DEFINED(c.supersede_reason) OR c.supersede_reason = "") AND ARRAY_CONTAINS(@p1, c.id)`, load)
	assert.Equal(t, []string{"a", "b"}, loadParams[1].Value)
}

// TestRetriesThrottling scripts 429s with x-ms-retry-after-ms before a
// success: the call succeeds after waiting at least what the service asked.
func TestRetriesThrottling(t *testing.T) {
	var throttled atomic.Int32
	f := newFake(t, func(w http.ResponseWriter, r recorded) bool {
		if r.Method == http.MethodGet && throttled.Add(1) <= 2 {
			w.Header().Set("x-ms-retry-after-ms", "60")
			w.Header().Set("x-ms-substatus", "3200")
			writeError(w, http.StatusTooManyRequests, "TooManyRequests", "Request rate is large")
			return true
		}
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte(`{"id":"i1","user_id":"alice","session_id":"s1","timestamp":"2026-03-01T10:00:00.000000000Z","content":"hello","first_turn":1,"last_turn":1,"metadata":{"mentioned_topics":[],"entities":[]}}`))
			return true
		}
		return false
	})
	s := f.open(t, nil)
	start := time.Now()
	got, err := s.GetInteraction(t.Context(), "alice", "i1")
	require.NoError(t, err)
	assert.Equal(t, "hello", got.Content)
	assert.GreaterOrEqual(t, time.Since(start), 120*time.Millisecond, "waited the service's retry-after twice, not the 1 ms retry delay")
	assert.Equal(t, int32(3), throttled.Load(), "two 429s, then the success")
	st := s.Stats()[OpRead]
	assert.Equal(t, int64(1), st.Requests, "one logical read")
	assert.Equal(t, 1.5, st.RequestCharge)

	// With retries off, a 429 surfaces as an error that is none of the sentinels.
	throttled.Store(0)
	s2 := f.open(t, func(c *Config) { c.ClientOptions.Retry.MaxRetries = -1 })
	_, err = s2.GetInteraction(t.Context(), "alice", "i1")
	require.Error(t, err)
	assert.Equal(t, http.StatusTooManyRequests, statusOf(err))
	for _, sentinel := range []error{store.ErrNotFound, store.ErrConflict, store.ErrInvalid} {
		assert.False(t, errors.Is(err, sentinel))
	}
	assert.Equal(t, int64(1), s2.Stats()[OpRead].Errors)
}

// TestErrorMapping checks each service status against the store sentinels.
func TestErrorMapping(t *testing.T) {
	var status atomic.Int32
	f := newFake(t, func(w http.ResponseWriter, r recorded) bool {
		if r.isQuery() {
			return false
		}
		writeError(w, int(status.Load()), "Error", "scripted")
		return true
	})
	s := f.open(t, nil)
	ctx := t.Context()
	sess := &store.Session{ID: "s1", StartTime: time.Now()}

	status.Store(http.StatusNotFound)
	_, err := s.GetInteraction(ctx, "alice", "i1")
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.GetSession(ctx, "alice", "s1")
	assert.ErrorIs(t, err, store.ErrNotFound)
	assert.ErrorIs(t, s.DeleteDocument(ctx, "alice", store.KindInsight, "n1"), store.ErrNotFound)
	assert.ErrorIs(t, s.SupersedeInsight(ctx, "alice", "n1", store.Supersession{Reason: store.ReasonForgotten}), store.ErrNotFound)
	sess.ETag = `"old"`
	assert.ErrorIs(t, s.PutSession(ctx, "alice", sess), store.ErrConflict, "a conditional write on a missing session conflicts")

	status.Store(http.StatusPreconditionFailed)
	assert.ErrorIs(t, s.PutSession(ctx, "alice", sess), store.ErrConflict)
	assert.Equal(t, `"old"`, sess.ETag, "a failed write leaves the ETag")

	status.Store(http.StatusConflict)
	assert.ErrorIs(t, s.PutInteraction(ctx, "alice", &store.Interaction{ID: "i1", SessionID: "s1"}), store.ErrConflict)

	status.Store(http.StatusRequestEntityTooLarge)
	assert.ErrorIs(t, s.PutInsight(ctx, "alice", &store.Insight{ID: "n1", InsightType: store.InsightSession}), store.ErrInvalid)

	status.Store(http.StatusBadRequest)
	assert.ErrorIs(t, s.PutInteraction(ctx, "alice", &store.Interaction{ID: "i1", SessionID: "s1"}), store.ErrInvalid)

	status.Store(http.StatusForbidden)
	err = s.PutInteraction(ctx, "alice", &store.Interaction{ID: "i1", SessionID: "s1"})
	require.Error(t, err)
	assert.Equal(t, http.StatusForbidden, statusOf(err))
	assert.Contains(t, err.Error(), "put interaction i1", "the error names the operation")
}

// TestSessionWire checks what PutSession sends and reads back: no _etag
// in the body, If-Match with the caller's ETag, the response's ETag kept.
func TestSessionWire(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r recorded) bool {
		switch r.Method {
		case http.MethodPut, http.MethodPost:
			w.Header().Set("etag", `"v2"`)
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(`{}`))
			return true
		case http.MethodGet:
			w.Header().Set("etag", `"v3"`)
			_, _ = w.Write([]byte(`{"id":"s1","user_id":"alice","_etag":"\"v3\"","status":"active","reflection_status":"pending","start_time":"2026-03-01T10:00:00.000000000Z","state":{"turns":[],"turn_counter":0,"pruned_through":0}}`))
			return true
		}
		return false
	})
	s := f.open(t, nil)
	doc := &store.Session{ID: "s1", StartTime: time.Date(2026, 3, 1, 11, 0, 0, 0, time.FixedZone("x", 3600)), ETag: `"v1"`}
	require.NoError(t, s.PutSession(t.Context(), "alice", doc))
	assert.Equal(t, `"v2"`, doc.ETag)
	reqs := f.requests()
	require.Len(t, reqs, 1)
	put := reqs[0]
	assert.Equal(t, http.MethodPut, put.Method, "a conditional write is a replace")
	assert.True(t, strings.HasSuffix(put.Path, "/colls/session_summaries/docs/s1"), put.Path)
	assert.Equal(t, `"v1"`, put.Header.Get("If-Match"))
	var body map[string]any
	require.NoError(t, json.Unmarshal(put.Body, &body))
	assert.NotContains(t, body, "_etag", "the service owns _etag")
	assert.Equal(t, "2026-03-01T10:00:00.000000000Z", body["start_time"], "the ordered time is fixed-width UTC")
	assert.Equal(t, "alice", body["user_id"])

	f.reset()
	doc.ETag = ""
	require.NoError(t, s.PutSession(t.Context(), "alice", doc))
	reqs = f.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, http.MethodPost, reqs[0].Method, "an unconditional write is an upsert")
	assert.Equal(t, "true", strings.ToLower(reqs[0].Header.Get("x-ms-documentdb-is-upsert")))
	assert.Empty(t, reqs[0].Header.Get("If-Match"))

	got, err := s.GetSession(t.Context(), "alice", "s1")
	require.NoError(t, err)
	assert.Equal(t, `"v3"`, got.ETag)
}

// TestStatsAndDebugLog: every request is counted with its charge, and
// logged at Debug with it.
func TestStatsAndDebugLog(t *testing.T) {
	f := newFake(t, nil)
	var logs bytes.Buffer
	s := f.open(t, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	ctx := t.Context()
	for i := range 3 {
		require.NoError(t, s.PutInteraction(ctx, "alice", &store.Interaction{ID: fmt.Sprint("i", i), SessionID: "s1"}))
	}
	_, err := s.ListSessions(ctx, "alice", store.SessionFilter{})
	require.NoError(t, err)
	st := s.Stats()
	assert.Equal(t, OpStats{Requests: 3, RequestCharge: 4.5}, st[OpUpsert])
	assert.Equal(t, OpStats{Requests: 1, RequestCharge: 1.5}, st[OpQuery])
	assert.Equal(t, OpStats{Requests: 4, RequestCharge: 6}, st.Total())
	var lines int
	for line := range strings.Lines(logs.String()) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec))
		if rec["msg"] == "cosmos request" {
			lines++
			assert.Equal(t, 1.5, rec["request_charge"])
			assert.Contains(t, []any{"interactions", "session_summaries"}, rec["container"])
		}
	}
	assert.Equal(t, 4, lines)
}

func TestAsAndClose(t *testing.T) {
	f := newFake(t, nil)
	s := f.open(t, nil)
	var c *azcosmosClient
	assert.True(t, s.As(&c))
	assert.NotNil(t, c)
	var db *azcosmosDatabase
	assert.True(t, s.As(&db))
	assert.Equal(t, DefaultDatabase, db.ID())
	assert.False(t, s.As((**azcosmosClient)(nil)))
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close twice")
	_, err := s.GetSession(t.Context(), "alice", "s1")
	assert.ErrorIs(t, err, store.ErrClosed)
}

func TestOpenValidatesConfig(t *testing.T) {
	ctx := t.Context()
	for name, cfg := range map[string]Config{
		"no endpoint":         {Key: fakeKey},
		"bad index":           {Endpoint: "http://127.0.0.1:1", Key: fakeKey, VectorIndex: "hnsw"},
		"bad mode":            {Endpoint: "http://127.0.0.1:1", Key: fakeKey, FullText: "lucene"},
		"negative dimensions": {Endpoint: "http://127.0.0.1:1", Key: fakeKey, Dimensions: -1},
		"create, no dims":     {Endpoint: "http://127.0.0.1:1", Key: fakeKey, CreateIfNotExists: true},
		"create, low RU":      {Endpoint: "http://127.0.0.1:1", Key: fakeKey, CreateIfNotExists: true, Dimensions: 8, AutoscaleMaxRU: 400},
		"bad key":             {Endpoint: "http://127.0.0.1:1", Key: "not base64!"},
	} {
		_, err := Open(ctx, cfg)
		assert.Error(t, err, name)
	}
}
