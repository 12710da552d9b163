package cosmos

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/storetest"
)

func TestMain(m *testing.M) { cosmostest.Main(m) }

// TestWithoutServer: on a clone without the test server's npm packages,
// every test of this package passes or skips, saying why once; in CI they
// fail.
func TestWithoutServer(t *testing.T) {
	cosmostest.CheckWithoutServer(t, ".")
}

// fastRetries keeps a failing test from waiting on azcore's default
// back-off against the local server.
func fastRetries() *azcosmos.ClientOptions {
	return &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: 2, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: time.Second},
	}}
}

// openLauncher opens a Store on the test server, provisioning a database
// of its own that is deleted when tb ends.
func openLauncher(tb testing.TB, mod func(*Config)) *Store {
	tb.Helper()
	admin := cosmostest.NewClient(tb) // skips without Node.js or the npm packages
	cfg := Config{
		Endpoint:          cosmostest.Endpoint(tb),
		Key:               cosmostest.Key,
		Database:          cosmostest.DatabaseName(tb),
		Dimensions:        storetest.Dimensions,
		CreateIfNotExists: true,
		ClientOptions:     fastRetries(),
	}
	if mod != nil {
		mod(&cfg)
	}
	s, err := Open(context.Background(), cfg)
	require.NoError(tb, err)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, err := admin.NewDatabase(cfg.Database)
		if err == nil {
			_, err = db.Delete(ctx, nil)
		}
		if err != nil {
			tb.Errorf("delete test database %q: %v", cfg.Database, err)
		}
	})
	return s
}

// TestConformance runs store/storetest over HTTP against the Cosmos
// protocol test server.
func TestConformance(t *testing.T) {
	cosmostest.Endpoint(t) // skips as a whole without the server
	storetest.RunConformance(t, func(t *testing.T) store.Store { return openLauncher(t, nil) })
}

// textCandidateCap is the MaxTextCandidates of the candidate cases'
// second run: well below storetest.TextCandidateFixture.
const textCandidateCap = 5

// TestTextCandidatesUnderCap runs storetest's full-text candidate cases
// with MaxTextCandidates below the size of their fixture: the best
// candidate must be kept, not whichever the service returns first.
func TestTextCandidatesUnderCap(t *testing.T) {
	cosmostest.Endpoint(t) // skips as a whole without the server
	storetest.RunTextCandidates(t, func(t *testing.T) store.Store {
		return openLauncher(t, func(c *Config) { c.MaxTextCandidates = textCandidateCap })
	})
}

// TestConformanceLive runs the suite, and storetest.RunLargeUser with a
// user past 1,000 vectors, against a real account when
// AZURE_COSMOS_ENDPOINT is set: with AZURE_COSMOS_KEY, or else Entra ID
// through DefaultAzureCredential. Each store provisions a database of its
// own (serverless unless the account is provisioned) and deletes it.
func TestConformanceLive(t *testing.T) {
	endpoint := liveEndpoint(t, "run the conformance suite against a real Azure Cosmos DB account")
	open := func(t *testing.T, maxTextCandidates int) store.Store {
		return openLive(t, endpoint, func(c *Config) { c.MaxTextCandidates = maxTextCandidates })
	}
	storetest.RunConformance(t, func(t *testing.T) store.Store { return open(t, 0) })
	t.Run("TextCandidatesUnderCap", func(t *testing.T) {
		storetest.RunTextCandidates(t, func(t *testing.T) store.Store { return open(t, textCandidateCap) })
	})
	// Past the 1,000 vectors from which the service's index replaces an
	// exact scan, the default search is still exact.
	t.Run("LargeUser", func(t *testing.T) {
		storetest.RunLargeUser(t, func(t *testing.T) store.Store { return open(t, 0) }, storetest.LargeUserVectors)
	})
}

// liveEndpoint is AZURE_COSMOS_ENDPOINT, the real account a live test
// runs against; without it t is skipped, the message saying what the
// test would do.
func liveEndpoint(t *testing.T, what string) string {
	t.Helper()
	endpoint := os.Getenv("AZURE_COSMOS_ENDPOINT")
	if endpoint == "" {
		t.Skip("AZURE_COSMOS_ENDPOINT is not set: set it (and AZURE_COSMOS_KEY, or sign in for DefaultAzureCredential) to " + what)
	}
	return endpoint
}

// openLive opens a store on a database of its own on the real account at
// endpoint (AZURE_COSMOS_KEY, or else Entra ID through
// DefaultAzureCredential), storetest's dimensions unless mod says
// otherwise, and deletes the database when t ends.
func openLive(t *testing.T, endpoint string, mod func(*Config)) *Store {
	t.Helper()
	cfg := Config{Endpoint: endpoint, Key: os.Getenv("AZURE_COSMOS_KEY"), Database: cosmostest.DatabaseName(t),
		Dimensions: storetest.Dimensions, CreateIfNotExists: true}
	mod(&cfg)
	s, err := Open(t.Context(), cfg)
	require.NoError(t, err)
	var db *azcosmos.DatabaseClient
	require.True(t, s.As(&db))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := db.Delete(ctx, nil); err != nil {
			t.Errorf("delete database %s: %v", cfg.Database, err)
		}
	})
	return s
}
