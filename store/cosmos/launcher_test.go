package cosmos

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/storetest"
)

// TestContainerDefinitionsReadBack provisions the containers on the test
// server and reads their definitions back: partition key, vector and
// full-text policies, indexing policy.
func TestContainerDefinitionsReadBack(t *testing.T) {
	cosmostest.Endpoint(t) // skips as a whole without the server
	for _, idx := range []VectorIndexType{QuantizedFlat, DiskANN} {
		t.Run(string(idx), func(t *testing.T) {
			s := openLauncher(t, func(c *Config) { c.VectorIndex = idx })
			var db *azcosmos.DatabaseClient
			require.True(t, s.As(&db))
			for _, kind := range store.Kinds {
				c, err := db.NewContainer(string(kind))
				require.NoError(t, err)
				resp, err := c.Read(t.Context(), nil)
				require.NoError(t, err, kind)
				raw, err := io.ReadAll(resp.RawResponse.Body)
				if err != nil || len(raw) == 0 {
					raw, err = json.Marshal(resp.ContainerProperties)
					require.NoError(t, err)
				}
				var got containerJSON
				require.NoError(t, json.Unmarshal(raw, &got))
				checkContainer(t, got, storetest.Dimensions, idx)
			}
		})
	}
}

// TestUserIsolationWire proves isolation on the wire: with alice's
// partition key, no query, point read, search or delete returns or touches
// bob's documents, even with bob's ids in the query text or parameters.
func TestUserIsolationWire(t *testing.T) {
	s := openLauncher(t, nil)
	ctx := t.Context()
	for _, u := range []string{"alice", "bob"} {
		require.NoError(t, s.PutInteraction(ctx, u, &store.Interaction{ID: u + "-int", SessionID: "s1", Content: "zebra " + u, ContentVector: unitVec(0)}))
		require.NoError(t, s.PutInsight(ctx, u, &store.Insight{ID: u + "-ins", InsightType: store.InsightSession, InsightText: "zebra " + u, InsightVector: unitVec(0)}))
		require.NoError(t, s.PutSession(ctx, u, &store.Session{ID: u + "-ses", Summary: "zebra " + u, SummaryVector: unitVec(0)}))
	}
	var client *azcosmos.Client
	require.True(t, s.As(&client))
	alicePK := azcosmos.NewPartitionKeyString("alice")
	for _, kind := range store.Kinds {
		c, err := client.NewContainer(s.cfg.Database, string(kind))
		require.NoError(t, err)
		// Raw queries under alice's partition key, without a user filter,
		// even naming bob's ids: only alice's documents come back.
		for _, sql := range []struct {
			q      string
			params []azcosmos.QueryParameter
		}{
			{"SELECT * FROM c", nil},
			{"SELECT * FROM c WHERE c.user_id = 'bob'", nil},
			{"SELECT * FROM c WHERE STARTSWITH(c.id, 'bob')", nil},
			{"SELECT * FROM c WHERE ARRAY_CONTAINS(@ids, c.id)", []azcosmos.QueryParameter{{Name: "@ids", Value: []string{"bob-int", "bob-ins", "bob-ses"}}}},
		} {
			pager := c.NewQueryItemsPager(sql.q, alicePK, &azcosmos.QueryOptions{QueryParameters: sql.params})
			var users []string
			for pager.More() {
				page, err := pager.NextPage(ctx)
				require.NoError(t, err, sql.q)
				for _, b := range page.Items {
					var d struct {
						UserID string `json:"user_id"`
					}
					require.NoError(t, json.Unmarshal(b, &d))
					users = append(users, d.UserID)
				}
			}
			for _, u := range users {
				assert.Equal(t, "alice", u, "%s %s under alice's partition key", kind, sql.q)
			}
		}
		// Point read and delete of bob's id under alice's key: not found.
		bobID := map[store.Kind]string{store.KindInteraction: "bob-int", store.KindInsight: "bob-ins", store.KindSessionSummary: "bob-ses"}[kind]
		_, err = c.ReadItem(ctx, alicePK, bobID, nil)
		assert.Equal(t, http.StatusNotFound, statusOf(err), kind)
		assert.ErrorIs(t, s.DeleteDocument(ctx, "alice", kind, bobID), store.ErrNotFound)
	}
	// Store searches and lists for alice with bob's ids in the text.
	q := store.SearchRequest{Text: "zebra bob bob-int bob-ins bob-ses", Vector: unitVec(0), MinSimilarity: -1, TopK: 50}
	ih, err := s.SearchInteractions(ctx, "alice", q)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice-int"}, hitIDsOf(ih))
	nh, err := s.SearchInsights(ctx, "alice", q)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice-ins"}, hitIDsOf(nh))
	sh, err := s.SearchSessions(ctx, "alice", q)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice-ses"}, hitIDsOf(sh))
	// DeleteUser alice leaves bob whole.
	require.NoError(t, s.DeleteUser(ctx, "alice"))
	_, err = s.GetInteraction(ctx, "bob", "bob-int")
	assert.NoError(t, err)
	_, err = s.GetInsight(ctx, "bob", "bob-ins")
	assert.NoError(t, err)
	_, err = s.GetSession(ctx, "bob", "bob-ses")
	assert.NoError(t, err)
	_, err = s.GetSession(ctx, "alice", "alice-ses")
	assert.ErrorIs(t, err, store.ErrNotFound)
}

func unitVec(i int) []float32 {
	v := make([]float32, storetest.Dimensions)
	v[i] = 1
	return v
}

func hitIDsOf[T any](hits []store.Hit[T]) []string {
	ids := []string{}
	for _, h := range hits {
		switch d := any(h.Doc).(type) {
		case *store.Interaction:
			ids = append(ids, d.ID)
		case *store.Insight:
			ids = append(ids, d.ID)
		case *store.Session:
			ids = append(ids, d.ID)
		}
	}
	return ids
}

// recorder is an azcore transport that records query bodies on their way
// to the server.
type recorder struct {
	mu      sync.Mutex
	queries []queryBody
	noPK    []string
}

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	if strings.HasPrefix(req.Header.Get("Content-Type"), "application/query+json") || strings.Contains(req.URL.Path, "/docs") {
		var body []byte
		if req.Body != nil {
			body, _ = io.ReadAll(req.Body)
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		r.mu.Lock()
		if strings.HasPrefix(req.Header.Get("Content-Type"), "application/query+json") {
			var q queryBody
			if err := json.Unmarshal(body, &q); err == nil {
				r.queries = append(r.queries, q)
			}
		}
		if req.Header.Get("x-ms-documentdb-partitionkey") == "" {
			r.noPK = append(r.noPK, req.Method+" "+req.URL.Path)
		}
		r.mu.Unlock()
	}
	return http.DefaultClient.Do(req)
}

// sqlVocabulary is every word our queries may contain: keywords, system
// functions, field names and aliases. Anything else in a query's text
// would be data that should have been a parameter.
var sqlVocabulary = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`SELECT TOP FROM WHERE AND OR NOT AS VALUE ORDER BY ASC DESC true
		IS_DEFINED ARRAY_CONTAINS VectorDistance COUNT SUM
		c id user_id session_id timestamp first_turn metadata_pending content summary metadata
		mentioned_topics entities content_vector summary_vector insight_vector insight_text
		insight_type category session_ids processed created_at content_hash supersede_reason
		status reflection_status start_time key_topics search_terms search_length vector_fields
		score n total has doc_type seq turn_id subject`) {
		sqlVocabulary[w] = true
	}
}

var (
	sqlWord   = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	sqlParam  = regexp.MustCompile(`@p[0-9]+`)
	sqlString = regexp.MustCompile(`"[^"]*"|'[^']*'`)
	sqlNumber = regexp.MustCompile(`\b[0-9]+\b`)
)

// TestConformanceRecorded runs the whole conformance suite through a
// recording transport and checks every query the suite caused: its text is
// made of our vocabulary, parameters and the literals "" and 1 only, so no
// user text ever reached the SQL; and every document request names a
// partition key.
func TestConformanceRecorded(t *testing.T) {
	// Without the server every subtest would skip and the count below
	// fail: skip the test as a whole instead.
	cosmostest.Endpoint(t)
	rec := &recorder{}
	storetest.RunConformance(t, func(t *testing.T) store.Store {
		return openLauncher(t, func(c *Config) { c.ClientOptions.Transport = rec })
	})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Greater(t, len(rec.queries), 500, "the suite ran its queries through the recorder")
	bad := map[string]bool{}
	for _, q := range rec.queries {
		text := sqlParam.ReplaceAllString(q.Query, "")
		for _, lit := range sqlString.FindAllString(text, -1) {
			if lit != `""` {
				bad["literal "+lit+" in "+q.Query] = true
			}
		}
		text = sqlString.ReplaceAllString(text, "")
		for _, num := range sqlNumber.FindAllString(text, -1) {
			if num != "1" {
				bad["number "+num+" in "+q.Query] = true
			}
		}
		for _, w := range sqlWord.FindAllString(text, -1) {
			if !sqlVocabulary[w] {
				bad["word "+w+" in "+q.Query] = true
			}
		}
		if len(q.Parameters) == 0 || q.Parameters[0].Name != "@p0" {
			bad["no user parameter in "+q.Query] = true
		}
	}
	for b := range bad {
		t.Error(b)
	}
	assert.Empty(t, rec.noPK, "document requests without a partition key")
}
