package sqlite_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/longtest"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
	"github.com/agentmemory/agentmemory/store/storetest"
)

// The package's slowest tests (a second of CPU or more under -race) call
// t.Parallel: they run together once the others are done, so that the
// package keeps both cores of a small machine busy when it is the last
// one go test ./... runs.

// TestConformance opens each test's store on a copy of an empty store
// file whose schema was created once (sqlitetest.NewFile): the suite
// checks the store's behaviour, and creating a schema is most of an Open.
// Opening new files is TestOpen*'s and the migration tests'.
func TestConformance(t *testing.T) {
	t.Parallel()
	cfg := sqlite.Config{Dimensions: storetest.Dimensions}
	storetest.RunConformance(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), sqlitetest.NewFile(t), cfg)
		require.NoError(t, err)
		return s
	})
}

// TestConformanceWithoutCache runs the suite with the vector cache off:
// every search loads the user's vectors, and the text leg runs in SQL.
// It is the long mode's (longtest): the short mode covers the uncached
// paths with TestTextLegWithoutCache and the tests that set
// VectorCacheBytes themselves.
func TestConformanceWithoutCache(t *testing.T) {
	t.Parallel()
	if !longtest.Enabled(t) {
		t.Skipf("the suite without the vector cache runs with %s=1 (as in CI)", longtest.Env)
	}
	cfg := sqlite.Config{Dimensions: storetest.Dimensions, VectorCacheBytes: -1}
	storetest.RunConformance(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), sqlitetest.NewFile(t), cfg)
		require.NoError(t, err)
		return s
	})
}
