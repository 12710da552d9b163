package offline_test

import (
	"context"
	"fmt"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/llm/offline"
)

func Example() {
	ctx := context.Background()
	client, err := offline.New(offline.Config{}) // no LLM: rules only
	if err != nil {
		panic(err)
	}
	facts := agent.MustFuncTool(offline.RetrieveUserFactsTool, "Looks up what is known about the user.",
		func(ctx context.Context, in struct {
			Query string `json:"query"`
		}) (string, error) {
			return "The user plans to retire at 60. The 401k is in index funds.", nil
		})
	a := agent.New(client, agent.Config{Instructions: "You are a financial advisor.", Tools: []agent.Tool{facts}})

	resp, err := a.Run(ctx, a.NewSession(), agent.UserText("When do I plan to retire?"))
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Messages[0].ToolCalls[0].Name, string(resp.Messages[0].ToolCalls[0].Arguments))
	fmt.Println(resp.Text())
	// Output:
	// retrieve_user_facts {"query":"When do I plan to retire?"}
	// From memory: The user plans to retire at 60. The 401k is in index funds.
}

// A prompt template starts with its marker; the handler registered for that
// name answers it.
func ExampleClient_Handle() {
	client, _ := offline.New(offline.Config{})
	err := client.Handle("echo_topic", func(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
		last := req.Messages[len(req.Messages)-1]
		return &agent.ChatResponse{Message: agent.AssistantText("topic: " + last.Text)}, nil
	})
	if err != nil {
		panic(err)
	}
	resp, err := client.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{
		agent.SystemText(offline.Marker("echo_topic") + "\nName the topic of the text."),
		agent.UserText("retirement"),
	}})
	if err != nil {
		panic(err)
	}
	fmt.Println(offline.Marker("echo_topic"))
	fmt.Println(resp.Message.Text, "/", resp.Model)
	// Output:
	// agentmemory:prompt=echo_topic
	// topic: retirement / offline-no-llm
}
