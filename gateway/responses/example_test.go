package responses_test

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/gateway/responses"
)

// A gateway translates the client's request, adds its own messages, sends
// the chat body upstream and translates the answer back.
func Example() {
	req, err := responses.ParseRequest([]byte(`{
		"model": "gpt-4.1-mini",
		"instructions": "Be brief.",
		"input": "Where should I eat tonight?",
		"previous_response_id": "resp_earlier"
	}`))
	if err != nil {
		fmt.Println(err) // the client's error: HTTP 400
		return
	}
	// The upstream keeps no chain: the gateway supplies the memory block
	// and the earlier turns it stored under req.PreviousResponseID.
	body, err := req.ChatBody(
		agent.SystemText("Memory: the user is vegetarian."),
		agent.UserText("I am in Lyon this week."),
		agent.AssistantText("Enjoy Lyon!"),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(body))

	// POST body to the upstream's /chat/completions; its answer:
	answer := `{"model":"gpt-4.1-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Try Le Potager."},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":5,"total_tokens":45}}`
	res, err := responses.FromChat([]byte(answer), responses.Meta{ID: "resp_1", Request: req})
	if err != nil {
		fmt.Println(err)
		return
	}
	// res.Body is the client's response object; the turn to record is
	// req.Input followed by res.Message.
	fmt.Println(res.ID, res.Status, req.Input[0].Text, "->", res.Message.Text, res.Usage.TotalTokens)
	// Output:
	// {"messages":[{"role":"system","content":"Be brief."},{"role":"system","content":"Memory: the user is vegetarian."},{"role":"user","content":"I am in Lyon this week."},{"role":"assistant","content":"Enjoy Lyon!"},{"role":"user","content":"Where should I eat tonight?"}],"model":"gpt-4.1-mini"}
	// resp_1 completed Where should I eat tonight? -> Try Le Potager. 45
}

// A streamed answer is translated chunk by chunk; each call writes whole
// events, which a gateway flushes to the client.
func ExampleStream() {
	upstream := `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"}}]}

data: {"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}

data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}

data: [DONE]
`
	var client bytes.Buffer // an http.ResponseWriter in a gateway
	st := responses.NewStream(&client, responses.Meta{})
	sc := bufio.NewScanner(strings.NewReader(upstream))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if err := st.Chunk([]byte(data)); err != nil {
			st.Fail(err.Error()) // ends the client's stream with response.failed
			return
		}
	}
	res, err := st.Finish()
	if err != nil {
		fmt.Println(err) // the answer did not complete: record no turn
		return
	}
	for _, line := range strings.Split(client.String(), "\n") {
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			fmt.Println(name)
		}
	}
	fmt.Println(res.Message.Text, res.Usage.TotalTokens)
	// Output:
	// response.created
	// response.in_progress
	// response.output_item.added
	// response.content_part.added
	// response.output_text.delta
	// response.output_text.delta
	// response.output_text.done
	// response.content_part.done
	// response.output_item.done
	// response.completed
	// Hello there 5
}
