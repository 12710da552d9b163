package driver_test

import (
	"math"
	"testing"

	"github.com/agentmemory/agentmemory/store/driver"
)

func TestBM25(t *testing.T) {
	// One term, twice in a document of 10 words; 3 of 100 documents hold
	// it, averaging 8 words.
	idf := math.Log(1 + (100-3+0.5)/(3+0.5))
	want := idf * 2 * 2.2 / (2 + 1.2*(1-0.75+0.75*10/8.0))
	if got := driver.BM25(map[string]int{"rollover": 2}, 10, map[string]int{"rollover": 3}, 100, 8); math.Abs(got-want) > 1e-12 {
		t.Errorf("one term: %v, want %v", got, want)
	}
	// Terms add up; a term in every document still scores above zero.
	two := driver.BM25(map[string]int{"rollover": 2, "ira": 1}, 10, map[string]int{"rollover": 3, "ira": 100}, 100, 8)
	if two <= want {
		t.Errorf("two terms: %v, not above one term's %v", two, want)
	}
	if got := driver.BM25(nil, 10, nil, 100, 8); got != 0 {
		t.Errorf("no term: %v", got)
	}
}
