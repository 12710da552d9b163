package memoryservice

import (
	"context"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/cosmos"
)

func TestMain(m *testing.M) { cosmostest.Main(m) }

// cosmosOpener opens stores on one database of the Cosmos-protocol test
// server (deleted when t ends); every call opens it anew, as a restarted
// server does.
func cosmosOpener(t *testing.T) opener {
	t.Helper()
	db := cosmostest.DatabaseFor(t) // skips without Node.js or the npm packages (fails in CI)
	return func(t testing.TB, dims int) store.Store {
		st, err := cosmos.Open(context.Background(), cosmos.Config{Endpoint: cosmostest.Endpoint(t), Key: cosmostest.Key,
			Database: db, Dimensions: dims, CreateIfNotExists: true, Logger: quiet(),
			ClientOptions: &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
				Retry: policy.RetryOptions{MaxRetries: 2, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: time.Second}}}})
		require.NoError(t, err)
		return st
	}
}

// TestOnCosmos runs the update, search, item and delete_scope flow, the
// isolation checks and the restart on Azure Cosmos DB's protocol.
func TestOnCosmos(t *testing.T) {
	cosmostest.Endpoint(t) // skips as a whole without the server
	t.Run("flow", func(t *testing.T) {
		updateSearchListGetDelete(t, startOn(t, cosmosOpener(t), Config{}))
	})
	t.Run("isolation", func(t *testing.T) {
		isolation(t, startOn(t, cosmosOpener(t), Config{}))
	})
	t.Run("restart", func(t *testing.T) {
		open := cosmosOpener(t)
		completesAfterRestart(t, func(cfg Config) *server { return startOn(t, open, cfg) })
	})
}

// TestWithoutServer: without the Cosmos test server's npm packages the
// Cosmos half skips, saying why once; in CI it fails.
func TestWithoutServer(t *testing.T) {
	cosmostest.CheckWithoutServer(t, "^TestOnCosmos$")
}
