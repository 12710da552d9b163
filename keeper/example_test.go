package keeper_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/mem"
)

// Three turns with K=2: the first two are pruned into an interaction
// document and folded into the cumulative summary; the context keeps the
// last active turns.
func Example() {
	ctx := context.Background()
	model, _ := offline.New(offline.Config{})
	emb, _ := lexical.New(lexical.Config{})
	k, err := keeper.New(mem.New(mem.Config{}), keeper.Config{Mini: model, Embedder: emb, K: 2, ActiveTurns: 1})
	if err != nil {
		log.Fatal(err)
	}
	s, err := k.Open(ctx, "client-42", "session-1")
	if err != nil {
		log.Fatal(err)
	}
	for i, text := range []string{"I want to retire at 60.", "My 401k holds $40,000.", "Is a Roth IRA right for me?"} {
		_, err := s.AddTurn(ctx, store.Turn{Messages: []store.TurnMessage{{ID: fmt.Sprint("m", i), Role: "user", Content: text}}})
		if err != nil {
			log.Fatal(err)
		}
	}
	pruned, err := s.Prune(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("interactions:", len(pruned), "covering turns", pruned[0].Interaction.FirstTurn, "to", pruned[0].Interaction.LastTurn)
	c := s.RunMemory()
	fmt.Println("active turns:", len(c.Turns), "- summary in context:", c.Manifest.Items[0].Kind)
	// Output:
	// interactions: 1 covering turns 1 to 2
	// active turns: 1 - summary in context: cumulative_summary
}
