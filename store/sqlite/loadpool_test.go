package sqlite_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// Searches waiting for a user's set to load hold read connections; the
// load must not need one of them. With every read connection taken by a
// waiting search (one, here) the load still runs and every search
// answers, instead of all of them waiting for each other.
func TestSearchesWaitingForALoadLeaveItAConnection(t *testing.T) {
	ctx := context.Background()
	path := sqlitetest.NewFile(t)
	st, err := sqlite.Open(ctx, path, sqlite.Config{Dimensions: 4, MaxReaders: 1})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	for i := range 20 {
		require.NoError(t, st.PutInteraction(ctx, "u1", interaction("i"+string(rune('a'+i)), "s", i, "market volatility worries", 1, float32(i), 0, 0)))
	}
	// A new store on the file: the user's sets are cold.
	require.NoError(t, st.Close())
	st, err = sqlite.Open(ctx, path, sqlite.Config{Dimensions: 4, MaxReaders: 1})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })

	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			hits, err := st.SearchInteractions(ctx, "u1", store.SearchRequest{Text: "volatility", Vector: []float32{1, 0, 0, 0}, TopK: 5})
			if err == nil && len(hits) == 0 {
				err = store.ErrNotFound
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
