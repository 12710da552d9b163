package provider_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// A memory-aware agent on the embedded defaults: SQLite, the offline "no
// LLM" client and the lexical embedder. The second session starts with the
// first one's summary in its context.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agentmemory-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	st, err := sqlite.Open(ctx, filepath.Join(dir, "memory.db"), sqlite.Config{Dimensions: 384})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	model, _ := offline.New(offline.Config{}) // swap in llm/openai for a real model
	emb, _ := lexical.New(lexical.Config{Dimensions: 384})

	mem, err := provider.New(st, provider.Config{Chat: model, Embedder: emb})
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close(ctx)
	advisor := agent.New(model, agent.Config{
		Instructions:     "You are a financial advisor.",
		ContextProviders: []agent.ContextProvider{mem},
	})

	first, _ := advisor.NewUserSession("client-42")
	for _, q := range []string{"I am 35 and plan to retire at 60.", "I hold $40,000 in an old 401k."} {
		if _, err := advisor.Run(ctx, first, agent.UserText(q)); err != nil {
			log.Fatal(err)
		}
	}
	ended, err := mem.EndSession(ctx, first)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("first session:", ended.Session.Status, "-", len(ended.Pruned), "interaction stored")

	second, _ := advisor.NewUserSession("client-42")
	if _, err := advisor.Run(ctx, second, agent.UserText("What do you remember about my 401k?")); err != nil {
		log.Fatal(err)
	}
	m, _ := mem.LastManifest(second)
	fmt.Println("second session's context:", m.Items[0].Kind, m.Items[0].ID == first.ID())
	// Output:
	// first session: completed - 1 interaction stored
	// second session's context: session_summary true
}
