package sqlite

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentmemory/agentmemory/store"
)

// VectorDimensions returns the distinct lengths of the vectors the file
// holds, every user and vector field together, in increasing order (none
// when no vector is stored). It reads every row of the three document
// tables: meant for a check, not for a hot path. A file whose vectors have
// another length than the embedder's was written with another embedding
// model; its vectors cannot be compared with the embedder's.
func (s *Store) VectorDimensions(ctx context.Context) ([]int, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	var dims []int
	for _, kind := range store.Kinds {
		sp, _ := specOf(kind)
		for _, f := range sp.fields {
			// Table and column names come from specOf, never from input.
			q := fmt.Sprintf(`SELECT DISTINCT length(%s) / 4 FROM %s WHERE %s IS NOT NULL`, f, sp.table, f)
			rows, err := s.r.QueryContext(ctx, q)
			if err != nil {
				return nil, s.fail("vector dimensions", err)
			}
			for rows.Next() {
				var n int
				if err := rows.Scan(&n); err != nil {
					rows.Close()
					return nil, s.fail("vector dimensions", err)
				}
				if !slices.Contains(dims, n) {
					dims = append(dims, n)
				}
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return nil, s.fail("vector dimensions", err)
			}
		}
	}
	slices.Sort(dims)
	return dims, nil
}
