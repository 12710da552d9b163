package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "agentmemory-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "memory.db"), sqlite.Config{Dimensions: 3})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i, text := range []string{
		"user: I want to retire early\nassistant: Let's look at your savings rate.",
		"user: What about index funds?\nassistant: They are low-cost and diversified.",
	} {
		err := s.PutInteraction(ctx, "alice", &store.Interaction{
			ID:            store.InteractionID("s1", i+1, i+1),
			SessionID:     "s1",
			Timestamp:     at.Add(time.Duration(i) * time.Minute),
			FirstTurn:     i + 1,
			LastTurn:      i + 1,
			Content:       text,
			ContentVector: []float32{1, float32(i), 0},
		})
		if err != nil {
			log.Fatal(err)
		}
	}

	hits, err := s.SearchInteractions(ctx, "alice", store.SearchRequest{
		Text:   "retirement savings",
		Vector: []float32{1, 0, 0},
		TopK:   1,
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits {
		fmt.Printf("turn %d, similarity %.2f\n", h.Doc.FirstTurn, h.Similarity)
	}

	// Another user sees nothing of alice's.
	hits, err = s.SearchInteractions(ctx, "bob", store.SearchRequest{Text: "retirement savings"})
	fmt.Println(len(hits), err)
	// Output:
	// turn 1, similarity 1.00
	// 0 <nil>
}
