package mcpserver_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/mcpserver"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store/mem"
)

// An MCP client records an exchange in dana's memory and searches it.
// cmd/agentmemory-mcp serves the same tools on standard input and output.
func Example() {
	ctx := context.Background()
	st := mem.New(mem.Config{}) // or sqlite.Open, cosmos.Open
	model, _ := offline.New(offline.Config{})
	emb, _ := lexical.New(lexical.Config{})
	memory, err := provider.New(st, provider.Config{Chat: model, Embedder: emb, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	defer memory.Close(ctx)
	srv, err := mcpserver.New(memory, st, mcpserver.Config{UserID: "dana"})
	if err != nil {
		log.Fatal(err)
	}

	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, serverEnd, nil); err != nil {
		log.Fatal(err)
	}
	client, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v1"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	for _, c := range []mcp.CallToolParams{
		{Name: "record_turn", Arguments: map[string]any{"session_id": "chat-1", "user": "My old 401k from Acme holds $40,000.", "assistant": "Noted."}},
		{Name: "end_session", Arguments: map[string]any{"session_id": "chat-1"}},
	} {
		res, err := client.CallTool(ctx, &c)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(c.Name, res.Content[0].(*mcp.TextContent).Text)
	}
	res, err := client.CallTool(ctx, &mcp.CallToolParams{Name: "search_memory", Arguments: map[string]any{"query": "Acme 401k", "kinds": []string{"interactions"}}})
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range res.StructuredContent.(map[string]any)["documents"].([]any) {
		doc := d.(map[string]any)
		fmt.Printf("%s from session %s: %q\n", doc["kind"], doc["session_id"], doc["text"])
	}
	// Output:
	// record_turn {"stored":true}
	// end_session {"summary":"My old 401k from Acme holds $40,000.","interactions":1}
	// interactions from session chat-1: "user: My old 401k from Acme holds $40,000.\nassistant: Noted."
}
