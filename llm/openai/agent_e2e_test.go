package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

// notesProvider is a ContextProvider under test: it injects instructions and
// one message, and records what Invoked sees.
type notesProvider struct {
	mu      sync.Mutex
	invoked []agent.InvokedContext
}

func (p *notesProvider) SourceID() string { return "notes" }

func (p *notesProvider) Invoking(context.Context, *agent.InvokingContext) (*agent.AIContext, error) {
	return &agent.AIContext{
		Instructions: "Known facts about the user follow.",
		Messages:     []agent.Message{agent.SystemText("The user lives in Paris.")},
	}, nil
}

func (p *notesProvider) Invoked(_ context.Context, ic *agent.InvokedContext) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.invoked = append(p.invoked, *ic)
	return nil
}

// TestAgentRunOverHTTP drives agent.Run through llm/openai to the fake
// server and checks the exact wire requests of a two-round tool loop.
func TestAgentRunOverHTTP(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(
		fakeopenai.ToolCalls(fakeopenai.Call("call_1", "get_weather", `{"city":"Paris"}`)).WithUsage(50, 10),
		fakeopenai.Text("It is sunny in Paris.").WithUsage(70, 8),
	)
	chat := newChat(t, compatible(srv))

	var (
		toolMu   sync.Mutex
		toolArgs []weatherArgs
	)
	tool := weatherTool(t, func(_ context.Context, in weatherArgs) (string, error) {
		toolMu.Lock()
		defer toolMu.Unlock()
		toolArgs = append(toolArgs, in)
		return "sunny, 21C", nil
	})

	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	n := 0
	prov := &notesProvider{}
	a := agent.New(chat, agent.Config{
		Name:             "weather",
		Instructions:     "You are a helpful assistant.",
		Tools:            []agent.Tool{tool},
		ContextProviders: []agent.ContextProvider{prov},
		Temperature:      ptr(0.3),
		MaxTokens:        200,
		Now:              func() time.Time { return now },
		NewID:            func() string { n++; return fmt.Sprintf("id-%d", n) },
	})
	sess := a.NewSession() // id-1
	sess.AppendMessages(
		agent.Message{ID: "h1", Role: agent.RoleUser, Text: "Hi!", CreatedAt: now},
		agent.Message{ID: "h2", Role: agent.RoleAssistant, Text: "Hello! How can I help?", CreatedAt: now},
	)

	resp, err := a.Run(context.Background(), sess, agent.UserText("What's the weather where I live?"))
	require.NoError(t, err)
	assert.Equal(t, "It is sunny in Paris.", resp.Text())
	assert.Equal(t, agent.Usage{PromptTokens: 120, CompletionTokens: 18, TotalTokens: 138}, resp.Usage)
	assert.Equal(t, []weatherArgs{{City: "Paris"}}, toolArgs)

	// The exact requests, round by round.
	const (
		prefix = `
			{"role": "system", "content": "You are a helpful assistant.\n\nKnown facts about the user follow."},
			{"role": "system", "content": "The user lives in Paris."},
			{"role": "user", "content": "Hi!"},
			{"role": "assistant", "content": "Hello! How can I help?"},
			{"role": "user", "content": "What's the weather where I live?"}`
		rest = `
			"tools": [{"type": "function", "function": {
				"name": "get_weather", "description": "Gets the weather for a city.", "parameters": ` + weatherSchema + `}}],
			"temperature": 0.3,
			"max_tokens": 200`
	)
	reqs := srv.ChatRequests()
	require.Len(t, reqs, 2)
	assert.JSONEq(t, `{"model": "gpt-test", "messages": [`+prefix+`], `+rest+`}`, string(reqs[0].Body))
	assert.JSONEq(t, `{"model": "gpt-test", "messages": [`+prefix+`,
			{"role": "assistant", "tool_calls": [
				{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
			{"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21C"}
		], `+rest+`}`, string(reqs[1].Body))

	// What the provider saw after the run.
	input := agent.Message{ID: "id-2", Role: agent.RoleUser, Text: "What's the weather where I live?", CreatedAt: now}
	produced := []agent.Message{
		{ID: "id-4", Role: agent.RoleAssistant, CreatedAt: now, ToolCalls: []agent.ToolCall{
			{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
		}},
		{ID: "id-5", Role: agent.RoleTool, Name: "get_weather", ToolCallID: "call_1", Text: "sunny, 21C", CreatedAt: now},
		{ID: "id-6", Role: agent.RoleAssistant, Text: "It is sunny in Paris.", CreatedAt: now},
	}
	require.Len(t, prov.invoked, 1)
	ic := prov.invoked[0]
	require.NoError(t, ic.Err)
	assert.Same(t, sess, ic.Session)
	assert.Equal(t, []agent.Message{input}, ic.Request)
	assert.Equal(t, []agent.Message{
		{ID: "id-3", Role: agent.RoleSystem, Text: "The user lives in Paris.", Source: "notes", CreatedAt: now},
	}, ic.Context)
	assert.Equal(t, produced, ic.Response)
	assert.Equal(t, produced, resp.Messages)

	// The session keeps history, input and produced messages, not the
	// injected context.
	assert.Equal(t, 6, sess.Len())
	assert.Equal(t, append([]agent.Message{input}, produced...), sess.Messages()[2:])
}

// TestAgentRunModelErrorReachesInvoked checks that a failing model call
// (after the SDK's retries) fails the run and is shown to providers.
func TestAgentRunModelErrorReachesInvoked(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueError(500, "down")
	srv.QueueError(500, "still down")
	cfg := compatible(srv)
	cfg.MaxRetries = 1
	prov := &notesProvider{}
	a := agent.New(newChat(t, cfg), agent.Config{ContextProviders: []agent.ContextProvider{prov}})
	sess := a.NewSession()

	_, err := a.Run(context.Background(), sess, agent.UserText("hi"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "still down")
	assert.Len(t, srv.ChatRequests(), 2)
	require.Len(t, prov.invoked, 1)
	require.Error(t, prov.invoked[0].Err)
	assert.Contains(t, prov.invoked[0].Err.Error(), "still down")
	assert.Empty(t, prov.invoked[0].Response)
	assert.Equal(t, 0, sess.Len())
}
