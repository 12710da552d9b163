package sqlite

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// TestWriteStatsCountABatch: a batch of four writes, one of which fails,
// queued behind a held writer for at least hold: the stats count the
// held write's transaction and the batch's, the four writes committed,
// and at least hold of waiting for each of the three of the batch.
func TestWriteStatsCountABatch(t *testing.T) {
	ctx := t.Context()
	s, _ := openTest(t)
	require.NoError(t, s.PutRecord(ctx, "u1", &store.Record{ID: "r0", Time: time.Now(), Body: []byte(`{}`)}))
	before := s.WriteStats()
	const hold = 30 * time.Millisecond
	release := holdWriter(t, s)
	writes := []*store.Record{
		{ID: "r1", Time: time.Now(), Body: []byte(`{}`)},
		{ID: "r0", Time: time.Now(), Body: []byte(`{}`), ETag: store.CreateOnly}, // exists: fails
		{ID: "r2", Time: time.Now(), Body: []byte(`{}`)},
		{ID: "r3", Time: time.Now(), Body: []byte(`{}`)},
	}
	errs := make([]error, len(writes))
	var wg sync.WaitGroup
	for i, r := range writes {
		wg.Go(func() { errs[i] = s.PutRecord(ctx, "u1", r) })
		require.Eventually(t, func() bool { return queued(s) == i+1 }, 5*time.Second, time.Millisecond)
	}
	time.Sleep(hold)
	release()
	wg.Wait()
	require.ErrorIs(t, errs[1], store.ErrConflict)
	after := s.WriteStats()
	assert.Equal(t, int64(2), after.Commits-before.Commits, "the held write's transaction and the batch's")
	assert.Equal(t, int64(4), after.Writes-before.Writes, "the held write and the three that succeeded")
	assert.GreaterOrEqual(t, after.Wait-before.Wait, 3*hold, "each of the three waited at least the hold")
	assert.GreaterOrEqual(t, after.Busy-before.Busy, hold, "the writer was at work through the hold")
	assert.Positive(t, after.Commit-before.Commit)
	assert.LessOrEqual(t, after.Commit-before.Commit, after.Busy-before.Busy, "a commit is part of its batch")
}
