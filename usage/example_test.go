package usage_test

import (
	"context"
	"fmt"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/usage"
)

// A Meter in the context counts what the wrapped client's calls report;
// the offline client reports word counts.
func Example() {
	client, err := offline.New(offline.Config{})
	if err != nil {
		panic(err)
	}
	chat := usage.Chat(client)
	var m usage.Meter
	ctx := usage.WithMeter(context.Background(), &m)
	for _, q := range []string{"hello there", "what did I say?"} {
		if _, err := chat.Complete(ctx, &agent.ChatRequest{Messages: []agent.Message{agent.UserText(q)}}); err != nil {
			panic(err)
		}
	}
	t := m.Totals()
	fmt.Println("chat calls:", t.ChatCalls, "input tokens counted:", t.InputTokens > 0)
	// Output: chat calls: 2 input tokens counted: true
}
