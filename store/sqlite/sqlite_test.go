package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/longtest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
	"github.com/agentmemory/agentmemory/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.RunConformance(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "memory.db"), sqlite.Config{Dimensions: storetest.Dimensions})
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
	if !longtest.Enabled(t) {
		t.Skipf("the suite without the vector cache runs with %s=1 (as in CI)", longtest.Env)
	}
	storetest.RunConformance(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "memory.db"), sqlite.Config{Dimensions: storetest.Dimensions, VectorCacheBytes: -1})
		require.NoError(t, err)
		return s
	})
}
