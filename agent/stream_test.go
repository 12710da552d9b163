package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/llm/openai"
)

// streamed is what a RunStream yielded, in order.
type streamed struct {
	text      strings.Builder
	texts     int
	toolCalls []agent.ToolCallDelta
	messages  []agent.Message
	resp      *agent.Response
	err       error
}

func drain(t *testing.T, seq func(func(agent.Delta, error) bool)) *streamed {
	t.Helper()
	var s streamed
	for d, err := range seq {
		require.Nil(t, s.resp, "item after the response")
		require.NoError(t, s.err, "item after the error")
		set := 0
		if d.Text != "" {
			set++
			s.texts++
			s.text.WriteString(d.Text)
		}
		if len(d.ToolCalls) > 0 {
			set++
			s.toolCalls = append(s.toolCalls, d.ToolCalls...)
		}
		if d.Message != nil {
			set++
			s.messages = append(s.messages, *d.Message)
		}
		if d.Response != nil {
			set++
			s.resp = d.Response
		}
		if err != nil {
			s.err = err
			assert.Zero(t, set, "an error item carries no delta")
			continue
		}
		if d.Message != nil || d.Response != nil {
			assert.Equal(t, 1, set, "a message or the response comes alone: %+v", d)
		}
		assert.Positive(t, set, "an empty delta: %+v", d)
	}
	return &s
}

func TestRunStreamStreamsTextAndStoresTheTurn(t *testing.T) {
	h := newHarness(t)
	h.srv.QueueChat(fakeopenai.Text("Bonds are calmer than stocks.").WithUsage(9, 6))
	rec := &recorder{}
	a := h.agent(t, agent.Config{Instructions: "Be brief.", ContextProviders: []agent.ContextProvider{rec}})
	sess := a.NewSession()

	got := drain(t, a.RunStream(context.Background(), sess, agent.UserText("Bonds or stocks?")))
	require.NoError(t, got.err)
	assert.Greater(t, got.texts, 1, "the answer arrived in one piece")
	assert.Equal(t, "Bonds are calmer than stocks.", got.text.String())
	require.NotNil(t, got.resp)
	assert.Equal(t, "Bonds are calmer than stocks.", got.resp.Text())
	assert.Equal(t, agent.Usage{PromptTokens: 9, CompletionTokens: 6, TotalTokens: 15}, got.resp.Usage)
	require.Len(t, got.messages, 1)
	assert.Equal(t, got.resp.Messages[0], got.messages[0], "the message item is the stored message, id and all")

	require.Len(t, rec.invoked, 1, "Invoked once")
	assert.NoError(t, rec.invoked[0].Err)
	assert.Equal(t, got.resp.Messages, rec.invoked[0].Response)
	msgs := sess.Messages()
	require.Len(t, msgs, 2)
	assert.Equal(t, "Bonds or stocks?", msgs[0].Text)
	assert.Equal(t, got.resp.Messages[0], msgs[1])

	// The prompt is Run's: instructions, the provider's context, the input.
	req := h.srv.ChatRequests()[0]
	assert.Equal(t, true, req.JSON["stream"])
	require.Len(t, req.Chat.Messages, 3)
	assert.Equal(t, "Be brief.", req.Chat.Messages[0].Content)
	assert.Equal(t, "remembered: likes bonds", req.Chat.Messages[1].Content)
}

func TestRunStreamToolRoundTrip(t *testing.T) {
	h := newHarness(t)
	h.srv.QueueChat(
		fakeopenai.ToolCalls(fakeopenai.Call("c1", "get_weather", `{"city":"Lima"}`)).WithUsage(10, 5),
		fakeopenai.Text("Sunny in Lima.").WithUsage(20, 4),
	)
	rec := &recorder{}
	a := h.agent(t, agent.Config{ContextProviders: []agent.ContextProvider{rec}})
	sess := a.NewSession()

	got := drain(t, a.RunStream(context.Background(), sess, agent.UserText("Weather in Lima?")))
	require.NoError(t, got.err)
	assert.Equal(t, []string{"Lima"}, h.calls, "the agent ran the tool")

	var args strings.Builder
	for _, tc := range got.toolCalls {
		args.WriteString(tc.Arguments)
	}
	require.NotEmpty(t, got.toolCalls)
	assert.Equal(t, "c1", got.toolCalls[0].ID)
	assert.Equal(t, "get_weather", got.toolCalls[0].Name)
	assert.Equal(t, `{"city":"Lima"}`, args.String())
	assert.Equal(t, "Sunny in Lima.", got.text.String())

	require.Len(t, got.messages, 3, "assistant call, tool result, answer")
	assert.Equal(t, agent.RoleAssistant, got.messages[0].Role)
	assert.Equal(t, "c1", got.messages[0].ToolCalls[0].ID)
	assert.Equal(t, agent.RoleTool, got.messages[1].Role)
	assert.Equal(t, "sunny in Lima", got.messages[1].Text)
	assert.Equal(t, "Sunny in Lima.", got.messages[2].Text)
	require.NotNil(t, got.resp)
	assert.Equal(t, got.messages, got.resp.Messages)
	assert.Equal(t, agent.Usage{PromptTokens: 30, CompletionTokens: 9, TotalTokens: 39}, got.resp.Usage)

	tools := h.toolMessages(t, 1)
	require.Len(t, tools, 1)
	assert.Equal(t, "c1", tools[0].ToolCallID)
	assert.Equal(t, "sunny in Lima", tools[0].Content)
	assert.Len(t, rec.invoked, 1)
	assert.Equal(t, 4, sess.Len())
}

func TestRunStreamConsumerStopsEarly(t *testing.T) {
	for _, stopAt := range []string{"text", "message"} {
		t.Run(stopAt, func(t *testing.T) {
			h := newHarness(t)
			h.srv.QueueChat(fakeopenai.Text("A long answer in many words."), fakeopenai.Text("Again."))
			rec := &recorder{}
			a := h.agent(t, agent.Config{ContextProviders: []agent.ContextProvider{rec}})
			sess := a.NewSession()

			items := 0
			for d, err := range a.RunStream(context.Background(), sess, agent.UserText("Tell me.")) {
				require.NoError(t, err)
				items++
				if (stopAt == "text" && d.Text != "") || (stopAt == "message" && d.Message != nil) {
					break
				}
			}
			assert.Positive(t, items)
			assert.Empty(t, rec.invoked, "an abandoned run calls no Invoked hook")
			assert.Zero(t, sess.Len(), "an abandoned run stores nothing")

			// The session is free again: the next run goes through.
			resp, err := a.Run(context.Background(), sess, agent.UserText("Once more."))
			require.NoError(t, err)
			assert.Equal(t, "Again.", resp.Text())
			assert.Len(t, rec.invoked, 1)
			assert.Equal(t, 2, sess.Len())
		})
	}
}

func TestRunStreamCancelledMidAnswer(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithLatency(fakeopenai.Latency{PerToken: 20 * time.Millisecond}))
	srv.QueueChat(fakeopenai.Text(strings.Repeat("slow words ", 20)))
	chat, err := openai.NewChat(openai.Config{BaseURL: srv.URL(), ChatModel: "gpt-test", MaxRetryDelay: time.Millisecond})
	require.NoError(t, err)
	rec := &recorder{}
	a := agent.New(chat, agent.Config{ContextProviders: []agent.ContextProvider{rec}})
	sess := a.NewSession()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var texts int
	var runErr error
	for d, err := range a.RunStream(ctx, sess, agent.UserText("Take your time.")) {
		if err != nil {
			runErr = err
			continue
		}
		require.Nil(t, d.Response, "a cancelled run has no response")
		if d.Text != "" {
			texts++
			cancel()
		}
	}
	assert.Equal(t, 1, texts)
	assert.ErrorIs(t, runErr, context.Canceled)
	assert.Empty(t, rec.invoked, "a cancelled stream calls no Invoked hook")
	assert.Zero(t, sess.Len())
}

func TestRunStreamModelErrorMidStream(t *testing.T) {
	h := newHarness(t)
	h.srv.QueueChat(fakeopenai.Raw(200, "text/event-stream",
		`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Half "},"finish_reason":null}]}`+"\n\n"+
			`data: {"error":{"message":"overloaded"}}`+"\n\n"))
	rec := &recorder{}
	a := h.agent(t, agent.Config{ContextProviders: []agent.ContextProvider{rec}})
	sess := a.NewSession()

	got := drain(t, a.RunStream(context.Background(), sess, agent.UserText("Go on.")))
	assert.Equal(t, "Half ", got.text.String())
	require.ErrorContains(t, got.err, "overloaded")
	assert.Nil(t, got.resp)
	assert.Zero(t, sess.Len(), "a failed run stores nothing")
	require.Len(t, rec.invoked, 1, "Invoked sees the failure, as with Run")
	assert.ErrorContains(t, rec.invoked[0].Err, "overloaded")
	assert.Empty(t, rec.invoked[0].Response)
}

func TestRunStreamToolRoundsAreBounded(t *testing.T) {
	h := newHarness(t)
	call := fakeopenai.ToolCalls(fakeopenai.Call("c", "get_weather", `{"city":"Oslo"}`))
	h.srv.QueueChat(call, call)
	a := h.agent(t, agent.Config{MaxToolRounds: 1})
	sess := a.NewSession()
	got := drain(t, a.RunStream(context.Background(), sess, agent.UserText("Loop.")))
	assert.ErrorIs(t, got.err, agent.ErrToolRounds)
	assert.Nil(t, got.resp)
	assert.Zero(t, sess.Len())
}

func TestRunStreamRejectsBadInput(t *testing.T) {
	h := newHarness(t)
	a := h.agent(t, agent.Config{MaxInputBytes: 4})
	got := drain(t, a.RunStream(context.Background(), nil, agent.UserText("x")))
	assert.ErrorContains(t, got.err, "RunStream: nil session")
	got = drain(t, a.RunStream(context.Background(), a.NewSession()))
	assert.ErrorContains(t, got.err, "no input")
	got = drain(t, a.RunStream(context.Background(), a.NewSession(), agent.UserText("too long")))
	assert.ErrorIs(t, got.err, agent.ErrInputTooLarge)
	assert.Empty(t, h.srv.Requests(), "bad input never reaches the model")
}

func TestRunStreamFallsBackToComplete(t *testing.T) {
	client, err := offline.New(offline.Config{})
	require.NoError(t, err)
	var _ agent.ChatClient = client
	_, streams := any(client).(agent.ChatStreamer)
	require.False(t, streams, "the test needs a client that does not stream")
	newAgent := func() *agent.Agent {
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		n := 0
		return agent.New(client, agent.Config{
			Instructions: "You are a financial advisor.",
			Now:          func() time.Time { return at },
			NewID:        func() string { n++; return string(rune('a' + n)) },
		})
	}
	input := agent.UserText("I want to roll my 401k over into a Roth IRA.")

	ref := newAgent()
	want, err := ref.Run(context.Background(), ref.NewSession(), input)
	require.NoError(t, err)
	require.NotEmpty(t, want.Text())

	a := newAgent()
	sess := a.NewSession()
	got := drain(t, a.RunStream(context.Background(), sess, input))
	require.NoError(t, got.err)
	assert.Equal(t, 1, got.texts, "the whole answer as one delta")
	assert.Equal(t, want.Text(), got.text.String())
	require.NotNil(t, got.resp)
	assert.Equal(t, want.Messages, got.resp.Messages)
	assert.Equal(t, 2, sess.Len())
}
