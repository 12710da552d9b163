package cosmos

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentmemory/agentmemory/store"
)

// VectorDimensions returns the distinct vector lengths the containers'
// vector embedding policies declare, in increasing order: the lengths the
// account indexes and compares, fixed when the containers were created. A
// container created for another embedding model declares another length
// than the embedder's. It reads the three containers' properties.
func (s *Store) VectorDimensions(ctx context.Context) ([]int, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	var dims []int
	for _, kind := range store.Kinds {
		c, ok := s.conts[kind]
		if !ok {
			continue
		}
		resp, err := c.Read(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("cosmos: read container %q: %w", s.names[kind], err)
		}
		if resp.ContainerProperties == nil || resp.ContainerProperties.VectorEmbeddingPolicy == nil {
			continue
		}
		for _, v := range resp.ContainerProperties.VectorEmbeddingPolicy.VectorEmbeddings {
			if n := int(v.Dimensions); !slices.Contains(dims, n) {
				dims = append(dims, n)
			}
		}
	}
	slices.Sort(dims)
	return dims, nil
}
