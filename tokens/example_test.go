package tokens_test

import (
	"fmt"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/tokens"
)

func Example() {
	var c tokens.BPE // o200k_base, loaded on first use
	fmt.Println(c.Count("What did we decide about my 401k?"))
	fmt.Println(tokens.CountMessages(&c, []agent.Message{
		agent.SystemText("You are a financial advisor."),
		agent.UserText("What did we decide about my 401k?"),
	}))
	// Output:
	// 10
	// 27
}
