package check_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/check"
	"github.com/agentmemory/agentmemory/internal/cosmostest"
	"github.com/agentmemory/agentmemory/store/cosmos"
)

func TestMain(m *testing.M) { cosmostest.Main(m) }

// TestWithoutServer: without the Cosmos test server's npm packages the
// Cosmos checks skip, saying why once; in CI they fail.
func TestWithoutServer(t *testing.T) {
	cosmostest.CheckWithoutServer(t, "TestCosmos")
}

// cosmosConfig provisions a database of t's own on the server at endpoint.
func cosmosConfig(t *testing.T, endpoint string) cosmos.Config {
	return cosmos.Config{Endpoint: endpoint, Key: cosmostest.Key, Database: cosmostest.DatabaseName(t),
		Dimensions: lexical.DefaultDimensions, CreateIfNotExists: true}
}

func TestCosmosCapabilitiesReported(t *testing.T) {
	cosmostest.Endpoint(t) // skips as a whole without the server
	t.Run("All", func(t *testing.T) {
		st, err := cosmos.Open(t.Context(), cosmosConfig(t, cosmostest.Endpoint(t)))
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		s := stackOn(t, obedientServer(t), "m", "m", lexical.DefaultDimensions)
		s.Store, s.StoreName = st, "Cosmos test server"
		r := run(t, s)
		assert.Empty(t, r.Failures)
		vs := status(t, r, "store", "vector search")
		assert.Equal(t, check.OK, vs.Status)
		assert.Contains(t, vs.Detail, "EnableNoSQLVectorSearch")
		assert.Equal(t, check.OK, status(t, r, "store", "full-text search").Status)
	})
	t.Run("WithoutFullText", func(t *testing.T) {
		endpoint := cosmostest.NewAccount(t, cosmostest.Account{Without: []string{cosmostest.CapabilityFullTextSearch}})
		st, err := cosmos.Open(t.Context(), cosmosConfig(t, endpoint))
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		s := stackOn(t, obedientServer(t), "m", "m", lexical.DefaultDimensions)
		s.Store, s.StoreName = st, "Cosmos test server"
		r := run(t, s)
		assert.Empty(t, r.Failures)
		ft := status(t, r, "store", "full-text search")
		assert.Equal(t, check.OK, ft.Status, "no query needs the full-text policy")
		assert.Contains(t, ft.Detail, "no full-text policy (the account refused it)")
	})
	t.Run("WithoutVectorSearch", func(t *testing.T) {
		endpoint := cosmostest.NewAccount(t, cosmostest.Account{Without: []string{cosmostest.CapabilityVectorSearch}})
		_, err := cosmos.Open(t.Context(), cosmosConfig(t, endpoint))
		require.ErrorIs(t, err, cosmos.ErrVectorSearchDisabled)
		s := stackOn(t, obedientServer(t), "m", "m", lexical.DefaultDimensions)
		s.Store, s.StoreErr, s.StoreName = nil, err, "Cosmos test server"
		r := run(t, s)
		assert.Equal(t, []string{"store: vector search"}, r.Failures)
		assert.Equal(t, check.OK, status(t, r, "store", "reachable").Status, "the account answered")
		vs := status(t, r, "store", "vector search")
		assert.Contains(t, vs.Detail, "az cosmosdb update --resource-group <resource-group> --name <account> --capabilities EnableNoSQLVectorSearch")
		assert.NotContains(t, vs.Detail, "RESPONSE 400", "the fix, not the service's body")
		var out bytes.Buffer
		require.NoError(t, r.WriteText(&out))
		assert.Contains(t, out.String(), "fail  vector search")
	})
}

// TestCosmosDimensionsOverLimit: a configuration no account accepts is
// named before any request.
func TestCosmosDimensionsOverLimit(t *testing.T) {
	_, err := cosmos.Open(t.Context(), cosmos.Config{Endpoint: "http://127.0.0.1:1", Key: cosmostest.Key,
		CreateIfNotExists: true, VectorIndex: cosmos.Flat, Dimensions: 1536})
	require.ErrorIs(t, err, cosmos.ErrDimensionsOverLimit)
	s := stackOn(t, obedientServer(t), "m", "m", lexical.DefaultDimensions)
	s.Store, s.StoreErr, s.StoreName = nil, err, "Azure Cosmos DB"
	r := run(t, s)
	assert.Equal(t, []string{"store: dimensions"}, r.Failures)
	assert.Equal(t, check.Skip, status(t, r, "store", "reachable").Status)
	assert.Contains(t, status(t, r, "store", "dimensions").Detail, "flat indexes at most 505 dimensions")
}
