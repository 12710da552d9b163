package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/openai"
)

// collect reads a whole stream: its fragments, its final response and the
// error it ended with.
func collect(t *testing.T, s func(func(agent.ChatDelta, error) bool)) (fragments []agent.ChatDelta, resp *agent.ChatResponse, err error) {
	t.Helper()
	for d, e := range s {
		require.Nil(t, resp, "item after the response")
		require.NoError(t, err, "item after the error")
		switch {
		case e != nil:
			err = e
		case d.Response != nil:
			resp = d.Response
		default:
			fragments = append(fragments, d)
		}
	}
	return fragments, resp, err
}

func TestCompleteStreamText(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("Rain is expected in Lyon tomorrow.").WithUsage(20, 8))
	chat := newChat(t, compatible(srv))
	req := &agent.ChatRequest{Messages: []agent.Message{agent.SystemText("Be brief."), agent.UserText("Weather?")}, Temperature: ptr(0.2)}

	frags, resp, err := collect(t, chat.CompleteStream(context.Background(), req))
	require.NoError(t, err)
	require.Greater(t, len(frags), 1, "the text arrived in one piece")
	var text strings.Builder
	for _, f := range frags {
		text.WriteString(f.Text)
	}
	assert.Equal(t, "Rain is expected in Lyon tomorrow.", text.String())
	require.NotNil(t, resp)
	assert.Equal(t, "Rain is expected in Lyon tomorrow.", resp.Message.Text)
	assert.Equal(t, agent.RoleAssistant, resp.Message.Role)
	assert.Equal(t, agent.Usage{PromptTokens: 20, CompletionTokens: 8, TotalTokens: 28}, resp.Usage)
	assert.Equal(t, "stop", resp.FinishReason)
	assert.Equal(t, "gpt-test", resp.Model)

	// The request is Complete's, streamed, asking for usage.
	reqs := srv.ChatRequests()
	require.Len(t, reqs, 1)
	assert.Equal(t, true, reqs[0].JSON["stream"])
	assert.Equal(t, map[string]any{"include_usage": true}, reqs[0].JSON["stream_options"])
	assert.Equal(t, 0.2, reqs[0].JSON["temperature"])
	require.Len(t, reqs[0].Chat.Messages, 2)
	assert.Equal(t, "Be brief.", reqs[0].Chat.Messages[0].Content)
}

func TestCompleteStreamToolCalls(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.ToolCalls(
		fakeopenai.Call("call_a", "get_weather", `{"city": "Paris", "unit": "C"}`),
		fakeopenai.Call("", "get_weather", `not json`),
	).WithUsage(30, 12))
	chat := newChat(t, compatible(srv))
	req := &agent.ChatRequest{Messages: []agent.Message{agent.UserText("Weather?")}, Tools: []agent.Tool{weatherTool(t, nil)}}

	frags, resp, err := collect(t, chat.CompleteStream(context.Background(), req))
	require.NoError(t, err)
	args := map[int]string{}
	names := map[int]string{}
	for _, f := range frags {
		for _, tc := range f.ToolCalls {
			args[tc.Index] += tc.Arguments
			names[tc.Index] += tc.Name
		}
	}
	assert.Equal(t, map[int]string{0: `{"city": "Paris", "unit": "C"}`, 1: "not json"}, args, "fragments carry the model's text")
	assert.Equal(t, map[int]string{0: "get_weather", 1: "get_weather"}, names)

	require.NotNil(t, resp)
	assert.Equal(t, "tool_calls", resp.FinishReason)
	assert.Equal(t, agent.Usage{PromptTokens: 30, CompletionTokens: 12, TotalTokens: 42}, resp.Usage)
	require.Len(t, resp.Message.ToolCalls, 2)
	assert.Equal(t, agent.ToolCall{ID: "call_a", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris","unit":"C"}`)}, resp.Message.ToolCalls[0])
	assert.Equal(t, "call_chatcmpl-fake-1_1", resp.Message.ToolCalls[1].ID, "a call without id gets one, as Complete gives it")
	assert.JSONEq(t, `"not json"`, string(resp.Message.ToolCalls[1].Arguments))
	assert.Len(t, srv.ChatRequests()[0].Chat.Tools, 1)
}

func TestCompleteStreamRetriesBeforeTheFirstChunk(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueError(http.StatusInternalServerError, "hiccup")
	srv.QueueChat(fakeopenai.Text("fine"))
	chat := newChat(t, compatible(srv))
	_, resp, err := collect(t, chat.CompleteStream(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("hi")}}))
	require.NoError(t, err)
	assert.Equal(t, "fine", resp.Message.Text)
	assert.Len(t, srv.ChatRequests(), 2)
}

func TestCompleteStreamNotFound(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueError(http.StatusNotFound, "no such model")
	chat := newChat(t, compatible(srv))
	frags, resp, err := collect(t, chat.CompleteStream(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("hi")}}))
	assert.ErrorIs(t, err, openai.ErrNotFound)
	assert.Contains(t, err.Error(), "no such model")
	assert.Nil(t, resp)
	assert.Empty(t, frags)
}

const firstChunk = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Half an "},"finish_reason":null}]}` + "\n\n"

func TestCompleteStreamErrorEventMidStream(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Raw(http.StatusOK, "text/event-stream", firstChunk+`data: {"error":{"message":"overloaded"}}`+"\n\n"))
	chat := newChat(t, compatible(srv))
	frags, resp, err := collect(t, chat.CompleteStream(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("hi")}}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "overloaded")
	assert.Nil(t, resp)
	require.Len(t, frags, 1)
	assert.Equal(t, "Half an ", frags[0].Text)
}

func TestCompleteStreamCutBeforeTheFinishReason(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Raw(http.StatusOK, "text/event-stream", firstChunk))
	chat := newChat(t, compatible(srv))
	_, resp, err := collect(t, chat.CompleteStream(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("hi")}}))
	assert.ErrorIs(t, err, openai.ErrStreamCut)
	assert.Nil(t, resp, "half an answer is not an answer")
}

func TestCompleteStreamConsumerStopsEarly(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("one two three four five"))
	chat := newChat(t, compatible(srv))
	n := 0
	// A yield after the consumer stopped would make range panic.
	for d, err := range chat.CompleteStream(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("hi")}}) {
		require.NoError(t, err)
		assert.Equal(t, "one ", d.Text)
		n++
		break
	}
	assert.Equal(t, 1, n)
}

func TestCompleteStreamRejectsBadRequestsWithoutCallingServer(t *testing.T) {
	srv := fakeopenai.New(t)
	chat := newChat(t, compatible(srv))
	_, _, err := collect(t, chat.CompleteStream(context.Background(), nil))
	assert.ErrorContains(t, err, "nil request")
	_, _, err = collect(t, chat.CompleteStream(context.Background(), &agent.ChatRequest{}))
	assert.ErrorContains(t, err, "no messages")
	assert.Empty(t, srv.Requests())
}

func TestCompleteStreamCancelled(t *testing.T) {
	srv := fakeopenai.New(t)
	chat := newChat(t, compatible(srv))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := collect(t, chat.CompleteStream(ctx, &agent.ChatRequest{Messages: []agent.Message{agent.UserText("hi")}}))
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}

func TestCompleteStreamFailsAsCompleteOnAServerWithoutTools(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithoutToolCalling())
	chat := newChat(t, compatible(srv))
	req := &agent.ChatRequest{Messages: []agent.Message{agent.UserText("Weather?")}, Tools: []agent.Tool{weatherTool(t, nil)}}
	_, completeErr := chat.Complete(context.Background(), req)
	require.Error(t, completeErr)
	_, resp, err := collect(t, chat.CompleteStream(context.Background(), req))
	require.Error(t, err)
	assert.Nil(t, resp)
	assert.Contains(t, err.Error(), fakeopenai.NoToolsMessage)
	var apiErr *sdk.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
}
