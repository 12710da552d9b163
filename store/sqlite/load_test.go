package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/longtest"
	"github.com/agentmemory/agentmemory/store"
)

// loadFixture writes n interactions with text for user "u" to a store
// file once, and returns a function that gives each caller a copy of it
// in the caller's own t.TempDir(): a store opened on a copy starts with
// an empty cache, so its first search loads the user's set cold.
func loadFixture(t *testing.T, n int) (fresh func(t *testing.T) string) {
	t.Helper()
	path := newFile(t)
	s, err := Open(t.Context(), path, Config{})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(11, 12))
	ds := make([]*store.Interaction, n)
	for i := range ds {
		ds[i] = &store.Interaction{ID: fmt.Sprintf("i%05d", i), SessionID: "s", FirstTurn: i + 1, LastTurn: i + 1,
			Timestamp: t0(0).Add(time.Duration(i) * time.Minute), Content: textOf(rng, 40)}
	}
	// The writer prepares a statement after the first batch that runs it
	// (writeStmts): one document first, so that the others, in a batch
	// of their own, run the statements prepared instead of compiling
	// them for each document (a third of the fixture's time under -race).
	require.NoError(t, s.putInteractions(t.Context(), "u", ds[:1]))
	require.NoError(t, s.putInteractions(t.Context(), "u", ds[1:]))
	require.NoError(t, s.Close()) // the last connection checkpoints the WAL into the file
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return func(t *testing.T) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), "s.db")
		require.NoError(t, os.WriteFile(p, b, 0o600))
		return p
	}
}

// loadSize is the fixture of the set-load tests: enough interactions that
// a cold load outlasts a 10 ms deadline (800; 3,000 in the long mode).
func loadSize(t *testing.T) int { return longtest.Pick(t, 800, 3000) }

// TestSetLoad checks a cold set load against searches that give up and
// a Close, each subtest on its own copy of one fixture file (writing the
// fixture is most of the work).
func TestSetLoad(t *testing.T) {
	t.Parallel()
	fresh := loadFixture(t, loadSize(t))
	t.Run("OutlivesAnImpatientSearch", func(t *testing.T) { testSetLoadOutlivesAnImpatientSearch(t, fresh(t)) })
	t.Run("StoppedByClose", func(t *testing.T) { testCloseStopsASetLoad(t, fresh(t)) })
}

// testSetLoadOutlivesAnImpatientSearch checks that a search giving up
// while the user's set loads (retrieval gives a search 2 s; a cold set of
// 10,000 interactions takes seconds to load) does not waste the load: the
// set is cached for the next search, instead of every search starting the
// load again and giving up again.
func testSetLoadOutlivesAnImpatientSearch(t *testing.T, path string) {
	s, err := Open(t.Context(), path, Config{})
	require.NoError(t, err)
	defer s.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	_, err = s.SearchInteractions(ctx, "u", store.SearchRequest{Text: "bond rates", TopK: 5})
	if err == nil {
		t.Log("the set loaded within the deadline: nothing to wait for")
	} else {
		require.ErrorIs(t, err, context.DeadlineExceeded)
	}
	require.Eventually(t, func() bool {
		sets, _ := s.cache.stats()
		return sets == 1
	}, 30*time.Second, 10*time.Millisecond, "the set the impatient search started loading is cached")
	// The next search, as impatient, is served from it.
	ctx2, cancel2 := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel2()
	hits, err := s.SearchInteractions(ctx2, "u", store.SearchRequest{Text: "bond rates", TopK: 5})
	require.NoError(t, err)
	assert.Len(t, hits, 5)
}

// testCloseStopsASetLoad checks that Close does not wait for a set load
// that no search waits for any more, and that the store is closed after.
func testCloseStopsASetLoad(t *testing.T, path string) {
	s, err := Open(t.Context(), path, Config{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	_, _ = s.SearchInteractions(ctx, "u", store.SearchRequest{Text: "bond rates", TopK: 5})
	start := time.Now()
	require.NoError(t, s.Close())
	assert.Less(t, time.Since(start), 5*time.Second, "Close cancels the load")
	sets, _ := s.cache.stats()
	assert.Zero(t, sets, "nothing cached after Close")
	_, err = s.SearchInteractions(t.Context(), "u", store.SearchRequest{Text: "bond"})
	assert.ErrorIs(t, err, store.ErrClosed)
}
