package agent_test

import (
	"context"
	"fmt"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/llm/offline"
)

// RunStream yields the answer as it is produced: text fragments, tool-call
// fragments, each message once complete, and last the whole Response, by
// which time the turn is stored. The offline client does not stream, so
// each model answer arrives whole; llm/openai's Chat streams token by
// token.
func ExampleAgent_RunStream() {
	ctx := context.Background()
	client, err := offline.New(offline.Config{})
	if err != nil {
		panic(err)
	}
	facts := agent.MustFuncTool(offline.RetrieveUserFactsTool, "Looks up what is known about the user.",
		func(ctx context.Context, in struct {
			Query string `json:"query"`
		}) (string, error) {
			return "The user plans to retire at 60.", nil
		})
	a := agent.New(client, agent.Config{Instructions: "You are a financial advisor.", Tools: []agent.Tool{facts}})
	sess := a.NewSession()

	for d, err := range a.RunStream(ctx, sess, agent.UserText("When do I plan to retire?")) {
		switch {
		case err != nil:
			fmt.Println("error:", err)
		case d.Text != "":
			fmt.Printf("text: %q\n", d.Text)
		case len(d.ToolCalls) > 0:
			fmt.Println("calling:", d.ToolCalls[0].Name)
		case d.Message != nil:
			fmt.Println("message:", d.Message.Role)
		case d.Response != nil:
			fmt.Println("done:", len(d.Response.Messages), "messages;", sess.Len(), "in the session")
		}
	}
	// Output:
	// calling: retrieve_user_facts
	// message: assistant
	// message: tool
	// text: "From memory: The user plans to retire at 60."
	// message: assistant
	// done: 3 messages; 4 in the session
}
