package sqlite

// Every ranking here keeps a leg's k best with internal/topk: the text
// leg (bm25.go), the exact vector scan (cache.go) and the pre-filter
// (prefilter.go).

import (
	"github.com/agentmemory/agentmemory/internal/topk"
	"github.com/agentmemory/agentmemory/store"
)

// worse reports whether a ranks below b: a lower score, then a higher id,
// store.VectorRanker's order.
func worse(a, b store.Scored) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.ID > b.ID
}

// newTop returns a heap keeping the k best results.
func newTop(k int) *topk.Heap[store.Scored] { return topk.New(k, worse) }

// lessFloat orders floats as <.
func lessFloat(a, b float64) bool { return a < b }
