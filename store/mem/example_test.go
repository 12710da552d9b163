package mem_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/mem"
)

func Example() {
	ctx := context.Background()
	s := mem.New(mem.Config{Dimensions: 3})
	defer s.Close()

	for _, in := range []*store.Insight{
		{ID: "i1", InsightType: store.InsightSession, InsightText: "Prefers index funds", InsightVector: []float32{1, 0, 0}},
		{ID: "i2", InsightType: store.InsightSession, InsightText: "Worried about inflation", InsightVector: []float32{0, 1, 0}},
	} {
		if err := s.PutInsight(ctx, "alice", in); err != nil {
			fmt.Println(err)
			return
		}
	}
	// Hybrid search: the vector leg ranks i1 then i2, the text leg finds
	// i1 only; Reciprocal Rank Fusion puts i1 first.
	hits, err := s.SearchInsights(ctx, "alice", store.SearchRequest{Text: "index funds", Vector: []float32{0.9, 0.1, 0}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range hits {
		fmt.Printf("%s: score %.4f, similarity %.2f\n", h.Doc.InsightText, h.Score, h.Similarity)
	}

	// Bob sees nothing of alice's.
	bobHits, _ := s.SearchInsights(ctx, "bob", store.SearchRequest{Text: "index funds"})
	fmt.Println("bob's hits:", len(bobHits))

	// Session state is written with ETag concurrency.
	sess := &store.Session{ID: "s1"}
	_ = s.PutSession(ctx, "alice", sess)
	stale := *sess
	sess.Summary = "talked about funds"
	_ = s.PutSession(ctx, "alice", sess)
	err = s.PutSession(ctx, "alice", &stale)
	fmt.Println("stale write conflicts:", errors.Is(err, store.ErrConflict))

	// Output:
	// Prefers index funds: score 0.0328, similarity 0.99
	// Worried about inflation: score 0.0161, similarity 0.11
	// bob's hits: 0
	// stale write conflicts: true
}
