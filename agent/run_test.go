package agent_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/internal/logtest"
	"github.com/agentmemory/agentmemory/llm/openai"
)

// The agent's failure paths, driven over HTTP through llm/openai to the
// scripted server: the model's answers come from the wire, not from a stub
// of agent.ChatClient.

type cityArgs struct {
	City string `json:"city"`
}

type harness struct {
	srv   *fakeopenai.Server
	chat  *openai.Chat
	logs  *logtest.Logs
	calls []string
	mu    sync.Mutex
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	srv := fakeopenai.New(t)
	chat, err := openai.NewChat(openai.Config{BaseURL: srv.URL(), ChatModel: "gpt-test", MaxRetryDelay: time.Millisecond})
	require.NoError(t, err)
	return &harness{srv: srv, chat: chat, logs: &logtest.Logs{}}
}

func (h *harness) agent(t *testing.T, cfg agent.Config) *agent.Agent {
	t.Helper()
	tool, err := agent.NewFuncTool("get_weather", "Weather for a city.", func(_ context.Context, in cityArgs) (string, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.calls = append(h.calls, in.City)
		return "sunny in " + in.City, nil
	})
	require.NoError(t, err)
	cfg.Tools = append(cfg.Tools, tool)
	cfg.Logger = h.logs.Logger(nil)
	return agent.New(h.chat, cfg)
}

// toolMessages returns the tool messages of the n-th chat request.
func (h *harness) toolMessages(t *testing.T, n int) []fakeopenai.Message {
	t.Helper()
	reqs := h.srv.ChatRequests()
	require.Greater(t, len(reqs), n)
	var out []fakeopenai.Message
	for _, m := range reqs[n].Chat.Messages {
		if m.Role == "tool" {
			out = append(out, m)
		}
	}
	return out
}

func TestUnknownToolBecomesAToolError(t *testing.T) {
	h := newHarness(t)
	h.srv.QueueChat(
		fakeopenai.ToolCalls(fakeopenai.Call("c1", "launch_rocket", `{}`)),
		fakeopenai.Text("Sorry, I cannot do that."),
	)
	a := h.agent(t, agent.Config{})
	resp, err := a.Run(context.Background(), a.NewSession(), agent.UserText("launch it"))
	require.NoError(t, err)
	assert.Equal(t, "Sorry, I cannot do that.", resp.Text())

	tools := h.toolMessages(t, 1)
	require.Len(t, tools, 1)
	assert.Equal(t, "c1", tools[0].ToolCallID)
	assert.Equal(t, `error: unknown tool "launch_rocket"; available tools: get_weather`, tools[0].Content)
	assert.Contains(t, h.logs.String(), "unknown tool")
}

func TestMalformedArgumentsNeverReachTheTool(t *testing.T) {
	h := newHarness(t)
	h.srv.QueueChat(
		fakeopenai.ToolCalls(
			fakeopenai.Call("c1", "get_weather", `{"city": 42}`),
			fakeopenai.Call("c2", "get_weather", `{"city":"Oslo"`),
			fakeopenai.Call("c3", "get_weather", `{"city":"Oslo"}`),
		),
		fakeopenai.Text("Oslo is sunny."),
	)
	a := h.agent(t, agent.Config{})
	resp, err := a.Run(context.Background(), a.NewSession(), agent.UserText("weather?"))
	require.NoError(t, err)
	assert.Equal(t, "Oslo is sunny.", resp.Text())
	assert.Equal(t, []string{"Oslo"}, h.calls, "only the valid call runs")

	tools := h.toolMessages(t, 1)
	require.Len(t, tools, 3)
	assert.Contains(t, tools[0].Content, "error: agent: bad tool arguments for get_weather")
	assert.Contains(t, tools[1].Content, "error: agent: bad tool arguments for get_weather")
	assert.Equal(t, "sunny in Oslo", tools[2].Content)
}

func TestToolRoundsAreBounded(t *testing.T) {
	h := newHarness(t)
	for range 3 {
		h.srv.QueueChat(fakeopenai.ToolCalls(fakeopenai.Call("c", "get_weather", `{"city":"Rome"}`)))
	}
	rec := &recorder{}
	a := h.agent(t, agent.Config{MaxToolRounds: 2, ContextProviders: []agent.ContextProvider{rec}})
	sess := a.NewSession()
	_, err := a.Run(context.Background(), sess, agent.UserText("loop"))
	require.ErrorIs(t, err, agent.ErrToolRounds)
	assert.Len(t, h.srv.ChatRequests(), 3, "two tool rounds, then the third answer is refused")
	assert.Equal(t, 0, sess.Len(), "a failed run leaves the session unchanged")
	require.Len(t, rec.invoked, 1)
	assert.ErrorIs(t, rec.invoked[0].Err, agent.ErrToolRounds)
	assert.Len(t, rec.invoked[0].Response, 5, "Invoked still sees what the run produced")
}

func TestRetriedServerErrorThenSuccess(t *testing.T) {
	h := newHarness(t)
	h.srv.QueueError(500, "boom")
	h.srv.QueueChat(fakeopenai.Text("fine"))
	a := h.agent(t, agent.Config{})
	resp, err := a.Run(context.Background(), a.NewSession(), agent.UserText("hi"))
	require.NoError(t, err)
	assert.Equal(t, "fine", resp.Text())
	assert.Len(t, h.srv.ChatRequests(), 2)
}

func TestCancelledContext(t *testing.T) {
	h := newHarness(t)
	h.srv.QueueChat(fakeopenai.Text("too late").WithDelay(5 * time.Second))
	rec := &recorder{}
	a := h.agent(t, agent.Config{ContextProviders: []agent.ContextProvider{rec}})
	sess := a.NewSession()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	_, err := a.Run(ctx, sess, agent.UserText("hi"))
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, sess.Len())
	require.Len(t, rec.invoked, 1)
	assert.ErrorIs(t, rec.invoked[0].Err, context.Canceled)
}

// recorder is a well-behaved provider that records what Invoked sees.
type recorder struct {
	mu      sync.Mutex
	invoked []agent.InvokedContext
}

func (r *recorder) SourceID() string { return "recorder" }
func (r *recorder) Invoking(context.Context, *agent.InvokingContext) (*agent.AIContext, error) {
	return &agent.AIContext{Messages: []agent.Message{agent.SystemText("remembered: likes bonds")}}, nil
}
func (r *recorder) Invoked(_ context.Context, ic *agent.InvokedContext) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.invoked = append(r.invoked, *ic)
	return nil
}

// broken fails in every way a provider can.
type broken struct{ panics bool }

func (b broken) SourceID() string { return "broken" }
func (b broken) Invoking(context.Context, *agent.InvokingContext) (*agent.AIContext, error) {
	if b.panics {
		panic("provider bug")
	}
	return &agent.AIContext{Instructions: "never seen"}, errors.New("store down")
}
func (b broken) Invoked(context.Context, *agent.InvokedContext) error {
	if b.panics {
		panic("provider bug")
	}
	return errors.New("store down")
}

func TestFailingProvidersAreLoggedAndSkipped(t *testing.T) {
	h := newHarness(t)
	h.srv.QueueChat(fakeopenai.Text("hello"))
	rec := &recorder{}
	a := h.agent(t, agent.Config{
		Instructions:     "Be brief.",
		ContextProviders: []agent.ContextProvider{broken{}, broken{panics: true}, rec},
	})
	sess := a.NewSession()
	resp, err := a.Run(context.Background(), sess, agent.UserText("hi"))
	require.NoError(t, err, "a failing provider never fails the run")
	assert.Equal(t, "hello", resp.Text())

	msgs := h.srv.ChatRequests()[0].Chat.Messages
	require.Len(t, msgs, 3)
	assert.Equal(t, "Be brief.", msgs[0].Content, "the failed provider's instructions are dropped")
	assert.Equal(t, "remembered: likes bonds", msgs[1].Content, "the healthy provider still contributes")
	assert.Equal(t, "hi", msgs[2].Content)

	require.Len(t, rec.invoked, 1)
	assert.Equal(t, "recorder", rec.invoked[0].Context[0].Source)
	logs := h.logs.String()
	assert.Contains(t, logs, "Invoking failed")
	assert.Contains(t, logs, "store down")
	assert.Contains(t, logs, "panic: provider bug")
	assert.Contains(t, logs, "Invoked failed")
	assert.Equal(t, 2, sess.Len())
}

// dupTool offers a tool whose name the agent already uses.
type dupTool struct{ tool agent.Tool }

func (d dupTool) Invoking(context.Context, *agent.InvokingContext) (*agent.AIContext, error) {
	return &agent.AIContext{Tools: []agent.Tool{d.tool}}, nil
}
func (dupTool) Invoked(context.Context, *agent.InvokedContext) error { return nil }

func TestProviderToolNameClashKeepsTheAgentsTool(t *testing.T) {
	h := newHarness(t)
	h.srv.QueueChat(fakeopenai.ToolCalls(fakeopenai.Call("c1", "get_weather", `{"city":"Lima"}`)), fakeopenai.Text("ok"))
	impostor := agent.MustFuncTool("get_weather", "impostor", func(context.Context, cityArgs) (string, error) {
		t.Error("the provider's clashing tool must not run")
		return "", nil
	})
	a := h.agent(t, agent.Config{ContextProviders: []agent.ContextProvider{dupTool{impostor}}})
	_, err := a.Run(context.Background(), a.NewSession(), agent.UserText("weather in Lima"))
	require.NoError(t, err)
	assert.Equal(t, []string{"Lima"}, h.calls)
	assert.Len(t, h.srv.ChatRequests()[0].Chat.Tools, 1)
	assert.Contains(t, h.logs.String(), "name already in use")
}

func TestRunRejectsBadInput(t *testing.T) {
	h := newHarness(t)
	a := h.agent(t, agent.Config{})
	_, err := a.Run(context.Background(), nil, agent.UserText("x"))
	assert.ErrorContains(t, err, "nil session")
	_, err = a.Run(context.Background(), a.NewSession())
	assert.ErrorContains(t, err, "no input")
	_, err = a.Run(context.Background(), a.NewSession(), agent.Message{Role: "wizard"})
	assert.ErrorContains(t, err, `unknown role "wizard"`)
	assert.Empty(t, h.srv.Requests(), "bad input never reaches the model")
}

// keeper supplies the history itself, or fails.
type keeper struct{ fail bool }

func (k keeper) KeepsHistory() bool { return true }
func (k keeper) Invoking(context.Context, *agent.InvokingContext) (*agent.AIContext, error) {
	if k.fail {
		return nil, errors.New("memory unavailable")
	}
	return &agent.AIContext{Messages: []agent.Message{agent.UserText("earlier question"), agent.AssistantText("earlier answer")}}, nil
}
func (keeper) Invoked(context.Context, *agent.InvokedContext) error { return nil }

func TestHistoryKeeperReplacesTheSessionHistory(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail bool
		want []string
	}{
		{"keeper supplies history", false, []string{"earlier question", "earlier answer", "new question"}},
		{"keeper failed: session history instead", true, []string{"old", "old answer", "new question"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.QueueChat(fakeopenai.Text("ok"))
			a := h.agent(t, agent.Config{ContextProviders: []agent.ContextProvider{keeper{fail: tc.fail}}})
			sess := a.NewSession()
			sess.AppendMessages(agent.UserText("old"), agent.AssistantText("old answer"))
			_, err := a.Run(context.Background(), sess, agent.UserText("new question"))
			require.NoError(t, err)
			var got []string
			for _, m := range h.srv.ChatRequests()[0].Chat.Messages {
				got = append(got, m.Content)
			}
			assert.Equal(t, tc.want, got)
			assert.Equal(t, 4, sess.Len(), "the session still records the whole conversation")
		})
	}
}

// A model that refuses tools still answers a run whose only tools are the
// context providers' (memory's retrieve_user_facts, say): the run goes on
// without them, logged, as with any failing provider. A run offering the
// agent's own tools still fails: the caller asked for them.
func TestProviderToolsRefusedByTheModelAreDropped(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithoutToolCalling())
	srv.QueueChat(fakeopenai.Text("Hello there."))
	chat, err := openai.NewChat(openai.Config{BaseURL: srv.URL(), ChatModel: "gpt-test", MaxRetryDelay: time.Millisecond})
	require.NoError(t, err)
	logs := &logtest.Logs{}
	recall := agent.MustFuncTool("retrieve_user_facts", "Search memory.", func(context.Context, cityArgs) (string, error) { return "", nil })
	a := agent.New(chat, agent.Config{Logger: logs.Logger(nil), ContextProviders: []agent.ContextProvider{dupTool{recall}}})
	sess := a.NewSession()
	resp, err := a.Run(context.Background(), sess, agent.UserText("hi"))
	require.NoError(t, err, "memory's tool never breaks the run")
	assert.Equal(t, "Hello there.", resp.Text())
	reqs := srv.ChatRequests()
	require.Len(t, reqs, 2, "the refused request, then the same without the providers' tools")
	assert.NotEmpty(t, reqs[0].Chat.Tools)
	assert.Empty(t, reqs[1].Chat.Tools)
	assert.Contains(t, logs.String(), "retrieve_user_facts")
	assert.Equal(t, 2, sess.Len(), "the turn is kept")

	own := agent.New(chat, agent.Config{Tools: []agent.Tool{recall}})
	_, err = own.Run(context.Background(), own.NewSession(), agent.UserText("hi"))
	assert.ErrorIs(t, err, agent.ErrToolsUnsupported, "the agent's own tools are not dropped")
}
