package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/gateway"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/retrieval"
)

func TestTheGatewayRunsRetrieveUserFactsItselfUnseenByTheClient(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *gateway.Config) {
		c.IdleTimeout = 50 * time.Millisecond
		c.RetrievalTool = true
	})
	r.ask("alice", "s1", "My dog's name is Biscuit and he is a beagle.", fakeopenai.Text("Lovely."))
	r.endSessions("alice")

	before := len(r.up.ChatRequests())
	r.up.QueueChat(
		fakeopenai.ToolCalls(fakeopenai.Call("call_m", retrieval.ToolName, `{"query":"dog name"}`)),
		fakeopenai.Text("Your dog is Biscuit."),
	)
	out, err := r.chat("alice").New(context.Background(), openai.ChatCompletionNewParams{
		Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{userMessage("Remind me, what's my dog called?")},
	})
	require.NoError(t, err)
	assert.Equal(t, "Your dog is Biscuit.", out.Choices[0].Message.Content)
	assert.Empty(t, out.Choices[0].Message.ToolCalls, "the client never sees the gateway's tool")

	reqs := r.up.ChatRequests()[before:]
	require.Len(t, reqs, 2)
	require.Len(t, reqs[0].Chat.Tools, 1)
	assert.Equal(t, retrieval.ToolName, reqs[0].Chat.Tools[0].Function.Name)
	msgs := reqs[1].Chat.Messages
	result := msgs[len(msgs)-1]
	assert.Equal(t, "tool", result.Role)
	assert.Equal(t, "call_m", result.ToolCallID)
	assert.Contains(t, result.Content, "Biscuit", "the gateway answered the call from memory")
}

func TestClientToolCallsReachTheClientWithoutTheGatewaysOwn(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *gateway.Config) { c.RetrievalTool = true })
	r.up.QueueChat(fakeopenai.ToolCalls(
		fakeopenai.Call("call_m", retrieval.ToolName, `{"query":"home city"}`),
		fakeopenai.Call("call_w", "get_weather", `{"city":"Lisbon"}`),
	))
	weather := openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather"})
	out, err := r.chat("alice").New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{userMessage("What's the weather where I live?")},
		Tools:    []openai.ChatCompletionToolUnionParam{weather},
	})
	require.NoError(t, err)
	calls := out.Choices[0].Message.ToolCalls
	require.Len(t, calls, 1)
	assert.Equal(t, "get_weather", calls[0].Function.Name)
	tools := r.up.ChatRequests()[0].Chat.Tools
	require.Len(t, tools, 2, "the client's tool and the gateway's")
	assert.Equal(t, "get_weather", tools[0].Function.Name)
}

func TestTheGatewaysToolLoopIsBounded(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *gateway.Config) {
		c.RetrievalTool = true
		c.MaxToolRounds = 2
	})
	call := fakeopenai.ToolCalls(fakeopenai.Call("call_m", retrieval.ToolName, `{"query":"anything"}`))
	r.up.QueueChat(call, call, fakeopenai.Text("Giving up on memory."))
	out, err := r.chat("alice").New(context.Background(), openai.ChatCompletionNewParams{
		Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{userMessage("What do you know about me?")},
	})
	require.NoError(t, err)
	assert.Equal(t, "Giving up on memory.", out.Choices[0].Message.Content)
	reqs := r.up.ChatRequests()
	require.Len(t, reqs, 3)
	assert.Empty(t, reqs[2].Chat.Tools, "the last round offers no tool")
}

func TestTheGatewaysToolLoopRunsInStreamsToo(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *gateway.Config) {
		c.IdleTimeout = 50 * time.Millisecond
		c.RetrievalTool = true
	})
	r.ask("alice", "s1", "My dog's name is Biscuit and he is a beagle.", fakeopenai.Text("Lovely."))
	r.endSessions("alice")

	before := len(r.up.ChatRequests())
	r.up.QueueChat(
		fakeopenai.ToolCalls(fakeopenai.Call("call_m", retrieval.ToolName, `{"query":"dog name"}`)).WithText("Let me look. "),
		fakeopenai.Text("Your dog is Biscuit."),
	)
	acc := r.stream("alice", openai.ChatCompletionNewParams{
		Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{userMessage("Remind me, what's my dog called?")},
	})
	assert.Equal(t, "Let me look. Your dog is Biscuit.", acc.Choices[0].Message.Content)
	assert.Empty(t, acc.Choices[0].Message.ToolCalls, "the client never sees the gateway's tool")
	assert.Equal(t, "stop", acc.Choices[0].FinishReason)

	reqs := r.up.ChatRequests()[before:]
	require.Len(t, reqs, 2)
	msgs := reqs[1].Chat.Messages
	assert.Equal(t, retrieval.ToolName, msgs[len(msgs)-2].ToolCalls[0].Name)
	assert.Contains(t, msgs[len(msgs)-1].Content, "Biscuit", "the gateway answered the call from memory")

	var answers []string
	for _, m := range r.turns("alice") {
		answers = append(answers, m.Content)
	}
	assert.Contains(t, answers, "Your dog is Biscuit.", "the turn is recorded once the last answer completes")
	assert.Contains(t, answers, "Let me look. ", "with the text before the gateway's call")
}

func TestAStreamedAnswerCallingBothToolsShowsTheClientOnlyItsOwn(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *gateway.Config) { c.RetrievalTool = true })
	r.up.QueueChat(fakeopenai.ToolCalls(
		fakeopenai.Call("call_m", retrieval.ToolName, `{"query":"home city"}`),
		fakeopenai.Call("call_w", "get_weather", `{"city":"Lisbon"}`),
	))
	weather := openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather"})
	acc := r.stream("alice", openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{userMessage("What's the weather where I live?")},
		Tools:    []openai.ChatCompletionToolUnionParam{weather},
	})
	calls := acc.Choices[0].Message.ToolCalls
	require.Len(t, calls, 1)
	assert.Equal(t, "get_weather", calls[0].Function.Name)
	assert.Equal(t, "call_w", calls[0].ID)
	assert.Equal(t, `{"city":"Lisbon"}`, calls[0].Function.Arguments)
	assert.Len(t, r.up.ChatRequests(), 1)
}

// wholeCallsStream is a streamed answer whose tool calls come whole, one
// chunk each and all at index 0, as some local servers send them.
func wholeCallsStream(calls ...[3]string) fakeopenai.Reply {
	var b strings.Builder
	for _, c := range calls {
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-w\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":%q,\"type\":\"function\",\"function\":{\"name\":%q,\"arguments\":%q}}]},\"finish_reason\":null}]}\n\n", c[0], c[1], c[2])
	}
	b.WriteString("data: {\"id\":\"chatcmpl-w\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n")
	return fakeopenai.Raw(200, "text/event-stream", b.String())
}

func TestWholeToolCallsAtOneIndexStayApartInAStream(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *gateway.Config) { c.RetrievalTool = true })
	r.up.QueueChat(wholeCallsStream(
		[3]string{"call_w", "get_weather", `{"city":"Lisbon"}`},
		[3]string{"call_m", retrieval.ToolName, `{"query":"home city"}`},
	))
	weather := openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather"})
	s := r.chat("alice").NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{userMessage("What's the weather where I live?")},
		Tools:    []openai.ChatCompletionToolUnionParam{weather},
	})
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
		for _, tc := range s.Current().Choices[0].Delta.ToolCalls {
			assert.NotEqual(t, retrieval.ToolName, tc.Function.Name, "the gateway's own call reached the client")
			assert.NotEqual(t, "call_m", tc.ID, "the gateway's own call reached the client")
		}
	}
	require.NoError(t, s.Err())
	calls := acc.Choices[0].Message.ToolCalls
	require.Len(t, calls, 1)
	assert.Equal(t, "get_weather", calls[0].Function.Name)
	assert.Equal(t, `{"city":"Lisbon"}`, calls[0].Function.Arguments)
}

func TestTheGatewayAnswersEachOfItsWholeCallsAtOneIndex(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *gateway.Config) { c.RetrievalTool = true })
	r.up.QueueChat(
		wholeCallsStream(
			[3]string{"call_a", retrieval.ToolName, `{"query":"home city"}`},
			[3]string{"call_b", retrieval.ToolName, `{"query":"dog"}`},
		),
		fakeopenai.Text("Done."),
	)
	acc := r.stream("alice", openai.ChatCompletionNewParams{
		Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{userMessage("What do you know?")},
	})
	assert.Equal(t, "Done.", acc.Choices[0].Message.Content)
	assert.Empty(t, acc.Choices[0].Message.ToolCalls)
	reqs := r.up.ChatRequests()
	require.Len(t, reqs, 2)
	msgs := reqs[1].Chat.Messages
	var results []string
	for _, m := range msgs {
		if m.Role == "tool" {
			results = append(results, m.ToolCallID)
		}
	}
	assert.Equal(t, []string{"call_a", "call_b"}, results, "each call answered under its own id")
}
