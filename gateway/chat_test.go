package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/gateway"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

func TestChatCompletionIsForwardedAndItsTurnStored(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	r.up.QueueChat(fakeopenai.Text("Hello Alice, noted.").WithUsage(10, 4))
	var resp *http.Response
	c := r.client("alice")
	out, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{userMessage("I live in Lisbon and I like cycling.")},
	}, option.WithResponseInto(&resp))
	require.NoError(t, err)
	assert.Equal(t, "Hello Alice, noted.", out.Choices[0].Message.Content)
	assert.Equal(t, int64(4), out.Usage.CompletionTokens)
	assert.True(t, strings.HasPrefix(resp.Header.Get(gateway.Header), "used"), resp.Header.Get(gateway.Header))

	reqs := r.up.ChatRequests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "Bearer upstream-key", reqs[0].Header.Get("Authorization"), "the upstream's key, never the client's")
	assert.Equal(t, "gpt-test", reqs[0].Chat.Model)

	// The turn is durable once the answer has arrived.
	msgs := r.turns("alice")
	require.Len(t, msgs, 2)
	assert.Equal(t, "user", msgs[0].Role)
	assert.Equal(t, "I live in Lisbon and I like cycling.", msgs[0].Content)
	assert.Equal(t, "assistant", msgs[1].Role)
	assert.Equal(t, "Hello Alice, noted.", msgs[1].Content)
}

func TestStreamedChatCompletionIsRelayedAndItsTurnStoredBeforeDone(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	r.up.QueueChat(fakeopenai.Text("Lisbon is a fine city for cycling."))
	c := r.client("alice")
	s := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{userMessage("I live in Lisbon.")},
	})
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for s.Next() {
		acc.AddChunk(s.Current())
		chunks++
	}
	require.NoError(t, s.Err())
	assert.Greater(t, chunks, 3, "chunks are relayed one by one")
	assert.Equal(t, "Lisbon is a fine city for cycling.", acc.Choices[0].Message.Content)

	// No wait: the turn was stored before [DONE] was passed on.
	msgs := r.turns("alice")
	require.Len(t, msgs, 2)
	assert.Equal(t, "I live in Lisbon.", msgs[0].Content)
	assert.Equal(t, "Lisbon is a fine city for cycling.", msgs[1].Content)
}

func TestStreamedClientToolCallsRoundTripIntoOneTurn(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	weather := openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather"})
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{userMessage("Is it warm in Lisbon today?")},
		Tools:    []openai.ChatCompletionToolUnionParam{weather},
	}
	stream := func() openai.ChatCompletionAccumulator { return r.stream("alice", params) }
	r.up.QueueChat(fakeopenai.ToolCalls(fakeopenai.Call("call_9", "get_weather", `{"city":"Lisbon","unit":"celsius"}`)).WithText("Let me check."))
	first := stream()
	require.Len(t, first.Choices[0].Message.ToolCalls, 1)
	assert.Equal(t, `{"city":"Lisbon","unit":"celsius"}`, first.Choices[0].Message.ToolCalls[0].Function.Arguments, "the fragments reach the client")
	assert.Empty(t, r.turns("alice"), "text beside a tool call does not end the turn")

	params.Messages = append(params.Messages, first.Choices[0].Message.ToParam(), openai.ToolMessage("24°C and sunny", "call_9"))
	r.up.QueueChat(fakeopenai.Text("Yes, 24°C and sunny."))
	second := stream()
	assert.Equal(t, "Yes, 24°C and sunny.", second.Choices[0].Message.Content)
	turns := r.storedTurns("alice")
	require.Len(t, turns, 1)
	msgs := turns[0].Messages
	require.Len(t, msgs, 3, "the question, the text beside the call, the answer")
	assert.Equal(t, "Is it warm in Lisbon today?", msgs[0].Content)
	assert.Equal(t, "Let me check.", msgs[1].Content)
	assert.Equal(t, "Yes, 24°C and sunny.", msgs[2].Content)
	assert.Contains(t, turns[0].Metadata["tools"], `"city":"Lisbon"`, "the streamed call's arguments, put together")
	assert.Contains(t, turns[0].Metadata["tools"], "24°C and sunny")
}
