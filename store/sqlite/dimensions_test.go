package sqlite_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

func TestVectorDimensions(t *testing.T) {
	ctx := t.Context()
	path := sqlitetest.NewFile(t)

	s := openAt(t, path, sqlite.Config{Dimensions: 3})
	got, err := s.VectorDimensions(ctx)
	require.NoError(t, err)
	assert.Empty(t, got, "an empty file holds no vectors")

	require.NoError(t, s.PutInteraction(ctx, "u1", interaction("a", "s1", 0, "text", 1, 0, 0)))
	require.NoError(t, s.PutInteraction(ctx, "u2", interaction("b", "s1", 0, "no vector")))
	got, err = s.VectorDimensions(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{3}, got)
	require.NoError(t, s.Close())

	// The same file opened for another embedder's length now holds two
	// lengths, whatever user and kind.
	s = openAt(t, path, sqlite.Config{Dimensions: 5})
	c := 0.5
	require.NoError(t, s.PutInsight(ctx, "u3", &store.Insight{ID: "i", InsightType: store.InsightSession, InsightText: "x",
		InsightVector: []float32{1, 0, 0, 0, 0}, Confidence: &c, CreatedAt: t0}))
	got, err = s.VectorDimensions(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{3, 5}, got)

	require.NoError(t, s.Close())
	_, err = s.VectorDimensions(ctx)
	assert.ErrorIs(t, err, store.ErrClosed)
}
