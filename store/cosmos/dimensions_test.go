package cosmos

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/storetest"
)

func TestVectorDimensions(t *testing.T) {
	ctx := context.Background()
	s := openLauncher(t, nil)
	got, err := s.VectorDimensions(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{storetest.Dimensions}, got)

	// Containers keep the length they were created with: a store opened on
	// them for another embedder reports theirs, not its own.
	other, err := Open(ctx, Config{Endpoint: s.cfg.Endpoint, Key: cosmostest.Key, Database: s.cfg.Database,
		Dimensions: storetest.Dimensions + 1, CreateIfNotExists: true, ClientOptions: fastRetries()})
	require.NoError(t, err)
	defer other.Close()
	got, err = other.VectorDimensions(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{storetest.Dimensions}, got)

	require.NoError(t, s.Close())
	_, err = s.VectorDimensions(ctx)
	assert.ErrorIs(t, err, store.ErrClosed)
}
