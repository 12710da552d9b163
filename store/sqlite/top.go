package sqlite

// Every ranking here keeps a leg's k best with internal/topk: the text
// leg (bm25.go), the exact vector scan (cache.go) and the pre-filter
// (prefilter.go).

import (
	"github.com/agentmemory/agentmemory/internal/topk"
	"github.com/agentmemory/agentmemory/store/driver"
)

// newTop returns a heap keeping the k best results.
func newTop(k int) *topk.Heap[driver.Scored] { return topk.New(k, driver.Below) }

// lessFloat orders floats as <.
func lessFloat(a, b float64) bool { return a < b }
