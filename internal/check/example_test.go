package check_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/check"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// Checking the offline defaults: the chat models are skipped, the lexical
// embedder and a SQLite file are checked.
func ExampleRun() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "check-example")
	defer os.RemoveAll(dir)
	client, _ := offline.New(offline.Config{})
	emb, _ := lexical.New(lexical.Config{})
	st, err := sqlite.Open(ctx, filepath.Join(dir, "memory.db"), sqlite.Config{Dimensions: emb.Dimensions()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	r, err := check.Run(ctx, check.Stack{Chat: client, Mini: client, Embedder: emb, Store: st,
		StoreName: "SQLite file memory.db", Offline: true, Description: "offline"}, check.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range r.Sections {
		fmt.Printf("%s:", s.Name)
		for _, it := range s.Items {
			fmt.Printf(" %s=%s", it.Name, it.Status)
		}
		fmt.Println()
	}
	fmt.Printf("gap %.3f, ok %v\n", r.Calibration.Gap, r.OK)
	// Output:
	// chat model: model=skip
	// mini model: model=skip
	// embedding model: reachable=ok latency=ok dimensions=ok similarity=ok
	// store: reachable=ok latency=ok dimensions=ok round trip=ok
	// gap 0.148, ok true
}
