package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

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

// TestConformancePrefiltered runs the suite with the vector pre-filter on
// from the first document: its codes are built on load and kept in step
// by cached writes, and its pools (at least 200 vectors) hold every row of
// the suite's small corpora, so results stay exact.
func TestConformancePrefiltered(t *testing.T) {
	storetest.RunConformance(t, func(t *testing.T) store.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "memory.db"),
			sqlite.Config{Dimensions: storetest.Dimensions, VectorPrefilterMin: 1})
		require.NoError(t, err)
		return s
	})
}
