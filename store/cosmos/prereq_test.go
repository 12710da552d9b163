package cosmos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
	"github.com/agentmemory/agentmemory/internal/logtest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/storetest"
)

// prereqConfig is a provisioning Config for the server at endpoint, with a
// database of tb's own that is deleted when tb ends.
func prereqConfig(tb testing.TB, endpoint string) Config {
	tb.Helper()
	cfg := Config{
		Endpoint:          endpoint,
		Key:               cosmostest.Key,
		Database:          cosmostest.DatabaseName(tb),
		Dimensions:        storetest.Dimensions,
		CreateIfNotExists: true,
		ClientOptions:     fastRetries(),
	}
	tb.Cleanup(func() {
		cred, _ := azcosmos.NewKeyCredential(cosmostest.Key)
		c, err := azcosmos.NewClientWithKey(endpoint, cred, fastRetries())
		if err != nil {
			return
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if db, err := c.NewDatabase(cfg.Database); err == nil {
			_, _ = db.Delete(ctx, nil)
		}
	})
	return cfg
}

func TestOpenWithoutVectorSearchCapability(t *testing.T) {
	endpoint := cosmostest.NewAccount(t, cosmostest.Account{Without: []string{cosmostest.CapabilityVectorSearch}})
	s, err := Open(t.Context(), prereqConfig(t, endpoint))
	if s != nil {
		s.Close()
	}
	require.ErrorIs(t, err, ErrVectorSearchDisabled)
	var pe *PrerequisiteError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "vector search", pe.Prerequisite)
	assert.Equal(t, DefaultInteractions, pe.Container)
	for _, want := range []string{"EnableNoSQLVectorSearch", "az cosmosdb update --resource-group <resource-group> --name <account> --capabilities EnableNoSQLVectorSearch", "capability has not been enabled"} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestOpenOnSharedThroughput(t *testing.T) {
	endpoint := cosmostest.Endpoint(t)
	cfg := prereqConfig(t, endpoint)
	admin := cosmostest.NewClient(t)
	tp := azcosmos.NewManualThroughputProperties(400)
	_, err := admin.CreateDatabase(t.Context(), azcosmos.DatabaseProperties{ID: cfg.Database}, &azcosmos.CreateDatabaseOptions{ThroughputProperties: &tp})
	require.NoError(t, err)

	s, err := Open(t.Context(), cfg)
	if s != nil {
		s.Close()
	}
	require.ErrorIs(t, err, ErrSharedThroughput)
	for _, want := range []string{cfg.Database, "shared throughput", "AZURE_COSMOS_DATABASE"} {
		assert.Contains(t, err.Error(), want)
	}
}

// TestFlatOverItsDimensionLimit: flat at 1,536 dimensions is refused by
// Open before any request (the endpoint here accepts none).
func TestFlatOverItsDimensionLimit(t *testing.T) {
	for _, c := range []struct {
		idx  VectorIndexType
		dims int
	}{{Flat, 1536}, {Flat, 506}, {QuantizedFlat, 4097}, {DiskANN, 4097}} {
		_, err := Open(t.Context(), Config{Endpoint: "http://127.0.0.1:1", Key: cosmostest.Key, CreateIfNotExists: true, VectorIndex: c.idx, Dimensions: c.dims})
		require.ErrorIs(t, err, ErrDimensionsOverLimit, "%s at %d", c.idx, c.dims)
		var pe *PrerequisiteError
		require.ErrorAs(t, err, &pe)
		assert.Empty(t, pe.Container, "found before any request")
		assert.Contains(t, err.Error(), "flat indexes at most 505 dimensions, quantizedFlat and diskANN 4,096")
	}
	for _, c := range []struct {
		idx  VectorIndexType
		dims int
	}{{Flat, 505}, {QuantizedFlat, 1536}, {DiskANN, 4096}} {
		_, err := Open(t.Context(), Config{Endpoint: "http://127.0.0.1:1", Key: cosmostest.Key, CreateIfNotExists: true, VectorIndex: c.idx, Dimensions: c.dims})
		require.ErrorIs(t, err, ErrUnreachable, "%s at %d is valid: Open goes on to the endpoint", c.idx, c.dims)
	}
}

// TestOpenWithoutFullTextCapability: where the account refuses full-text
// policies, the store opens without them, says so once, and finds text
// through search_terms, as it always does.
func TestOpenWithoutFullTextCapability(t *testing.T) {
	endpoint := cosmostest.NewAccount(t, cosmostest.Account{Without: []string{cosmostest.CapabilityFullTextSearch}})
	var logs logtest.Logs
	cfg := prereqConfig(t, endpoint)
	cfg.Logger = logs.Logger(nil)
	s, err := Open(t.Context(), cfg)
	require.NoError(t, err)
	defer s.Close()
	assert.False(t, s.NativeFullText(), "full text is computed through search_terms")
	assert.Equal(t, 1, strings.Count(logs.String(), "full-text policy refused"), "said once:\n%s", logs.String())
	assert.Contains(t, logs.String(), "EnableNoSQLFullTextSearch")

	ctx := t.Context()
	require.NoError(t, s.PutInsight(ctx, "alice", &store.Insight{ID: "n1", InsightType: store.InsightSession, InsightText: "Prefers index funds", InsightVector: unitVec(0)}))
	hits, err := s.SearchInsights(ctx, "alice", store.SearchRequest{Text: "funds"})
	require.NoError(t, err)
	assert.Equal(t, []string{"n1"}, hitIDsOf(hits))
	hits, err = s.SearchInsights(ctx, "alice", store.SearchRequest{Vector: unitVec(0)})
	require.NoError(t, err)
	assert.Equal(t, []string{"n1"}, hitIDsOf(hits), "the vector policy is kept")

	pre, err := s.Prerequisites(ctx)
	require.NoError(t, err)
	require.Len(t, pre, 2)
	assert.True(t, pre[0].Met, pre[0].Detail)
	assert.True(t, pre[1].Met, "no query needs the full-text policy")
	assert.Contains(t, pre[1].Detail, "no full-text policy (the account refused it)")

	// Reopened (the containers exist), the store says so once more: once
	// per Open.
	again, err := Open(ctx, cfg)
	require.NoError(t, err)
	assert.False(t, again.NativeFullText())
	again.Close()
	assert.Equal(t, 2, strings.Count(logs.String(), "full-text policy refused"))

}

func TestPrerequisitesMet(t *testing.T) {
	s := openLauncher(t, func(c *Config) { c.VectorIndex = DiskANN })
	pre, err := s.Prerequisites(t.Context())
	require.NoError(t, err)
	require.Len(t, pre, 2)
	assert.Equal(t, Prerequisite{Name: "vector search", Met: true,
		Detail: "every container has a vector embedding policy and diskANN vector indexes: the account has NoSQL vector search (EnableNoSQLVectorSearch)"}, pre[0])
	assert.Equal(t, Prerequisite{Name: "full-text search", Met: true,
		Detail: "every container has a full-text policy and index; the store matches full text through search_terms and does not need them"}, pre[1])
	require.NoError(t, s.Close())
	_, err = s.Prerequisites(t.Context())
	assert.ErrorIs(t, err, store.ErrClosed)
}

// TestRefusalOf classifies the service's 400s on container creation by
// their messages (as the test server sends them, and a dimension refusal
// that Config validation otherwise pre-empts).
func TestRefusalOf(t *testing.T) {
	respond := func(status int, message string) error {
		body, _ := json.Marshal(map[string]string{"code": http.StatusText(status), "message": "Message: {\"Errors\":[\"" + message + "\"]}\r\nActivityId: 1"})
		return runtime.NewResponseError(&http.Response{StatusCode: status, Status: http.StatusText(status), Body: io.NopCloser(bytes.NewReader(body)),
			Header: http.Header{}, Request: &http.Request{Method: http.MethodPost, URL: &url.URL{Path: "/dbs/d/colls"}}})
	}
	for _, c := range []struct {
		err  error
		want refusal
	}{
		{respond(400, "A Container Vector Policy has been provided, but the capability has not been enabled on your account."), refusedVectorCapability},
		{respond(400, "A Full Text Policy has been provided, but the capability has not been enabled on your account."), refusedFullTextCapability},
		{respond(400, "Vector Indexing is not supported for shared throughput offer"), refusedSharedThroughput},
		{respond(400, "The Vector Indexing Policy's path '/v' has 1536 dimensions, more than the 505 supported by vector index type 'flat'."), refusedDimensions},
		{respond(400, "The partition key path is invalid."), refusedOther},
		{respond(409, "Vector Indexing is not supported for shared throughput offer"), refusedOther},
		{errors.New("vector capability not enabled"), refusedOther},
		{nil, refusedOther},
	} {
		assert.Equal(t, c.want, refusalOf(c.err), "%v", c.err)
	}
}
