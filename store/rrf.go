package store

import (
	"math"
	"sort"
)

// Fused is one document of a fused ranking.
type Fused struct {
	ID    string
	Score float64
}

// FuseRRF merges ranked lists of document ids with Reciprocal Rank Fusion:
// a document scores the sum over the lists it appears in of 1/(k+rank),
// rank starting at 1. k <= 0 means RRFK. Ties are broken by the best rank a
// document reached in any list, then by id, so the order is deterministic.
// An id repeated within one list counts at its first rank only.
func FuseRRF(k int, lists ...[]string) []Fused {
	if k <= 0 {
		k = RRFK
	}
	type acc struct {
		score float64
		best  int
	}
	m := make(map[string]*acc)
	var order []string
	for _, list := range lists {
		seen := make(map[string]bool, len(list))
		for i, id := range list {
			if seen[id] {
				continue
			}
			seen[id] = true
			a := m[id]
			if a == nil {
				a = &acc{best: math.MaxInt}
				m[id] = a
				order = append(order, id)
			}
			a.score += 1 / float64(k+i+1)
			a.best = min(a.best, i+1)
		}
	}
	out := make([]Fused, len(order))
	for i, id := range order {
		out[i] = Fused{ID: id, Score: m[id].score}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		bi, bj := m[out[i].ID].best, m[out[j].ID].best
		if bi != bj {
			return bi < bj
		}
		return out[i].ID < out[j].ID
	})
	return out
}
