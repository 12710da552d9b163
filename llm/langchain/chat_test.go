package langchain_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tmc/langchaingo/llms"
	lcopenai "github.com/tmc/langchaingo/llms/openai"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/langchain"
)

type weatherArgs struct {
	City string `json:"city" jsonschema:"the city name"`
	Unit string `json:"unit,omitempty"`
}

const weatherSchema = `{"type":"object","properties":{"city":{"type":"string","description":"the city name"},"unit":{"type":"string"}},"required":["city"],"additionalProperties":false}`

func weatherTool(t *testing.T, fn func(context.Context, weatherArgs) (string, error)) agent.Tool {
	t.Helper()
	if fn == nil {
		fn = func(context.Context, weatherArgs) (string, error) { return "sunny", nil }
	}
	tool, err := agent.NewFuncTool("get_weather", "Gets the weather for a city.", fn)
	require.NoError(t, err)
	return tool
}

// newLLM returns langchaingo's own OpenAI client talking to the fake server:
// the whole stack below the adapter is real.
func newLLM(t *testing.T, srv *fakeopenai.Server, opts ...lcopenai.Option) *lcopenai.LLM {
	t.Helper()
	llm, err := lcopenai.New(append([]lcopenai.Option{
		lcopenai.WithToken("sk-test"),
		lcopenai.WithBaseURL(srv.URL()),
		lcopenai.WithModel("gpt-test"),
		lcopenai.WithEmbeddingModel("emb-test"),
	}, opts...)...)
	require.NoError(t, err)
	return llm
}

func newChat(t *testing.T, llm llms.Model, cfg langchain.ChatConfig) *langchain.ChatClient {
	t.Helper()
	c, err := langchain.NewChatClient(llm, cfg)
	require.NoError(t, err)
	return c
}

func ptr[T any](v T) *T { return &v }

func user(text string) *agent.ChatRequest {
	return &agent.ChatRequest{Messages: []agent.Message{agent.UserText(text)}}
}

func TestCompletePlainText(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("Hello!").WithUsage(12, 2).WithModel("gpt-test-2025"))
	chat := newChat(t, newLLM(t, srv), langchain.ChatConfig{})
	assert.Equal(t, "", chat.Model())

	resp, err := chat.Complete(context.Background(), user("Hi"))
	require.NoError(t, err)
	assert.Equal(t, &agent.ChatResponse{
		Message:      agent.Message{Role: agent.RoleAssistant, Text: "Hello!"},
		Usage:        agent.Usage{PromptTokens: 12, CompletionTokens: 2, TotalTokens: 14},
		FinishReason: "stop",
		Model:        "", // langchaingo does not report the answering model
	}, resp)

	reqs := srv.ChatRequests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/v1/chat/completions", reqs[0].Path)
	assert.Equal(t, "Bearer sk-test", reqs[0].Header.Get("Authorization"))
	// langchaingo's openai client always sends a temperature: 0 when none is set.
	assert.JSONEq(t, `{"model":"gpt-test","messages":[{"role":"user","content":"Hi"}],"temperature":0}`, string(reqs[0].Body))
}

func TestCompleteHistoryOnTheWire(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("It is 42."))
	chat := newChat(t, newLLM(t, srv), langchain.ChatConfig{})

	_, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{
		agent.SystemText("You are terse."),
		{Role: agent.RoleSystem, Text: "<memory>The user likes numbers.</memory>", Source: "memory"},
		{Role: agent.RoleUser, Name: "Ann Lee", Text: "What is x?", ID: "m1", CreatedAt: time.Unix(1, 0)},
		{Role: agent.RoleAssistant, Name: "bot", Text: "Which x?"},
		agent.UserText("The answer to everything."),
	}})
	require.NoError(t, err)
	reqs := srv.ChatRequests()
	require.Len(t, reqs, 1)
	// Names are not sent: llms.MessageContent has no author name.
	assert.JSONEq(t, `[
		{"role":"system","content":"You are terse."},
		{"role":"system","content":"<memory>The user likes numbers.</memory>"},
		{"role":"user","content":"What is x?"},
		{"role":"assistant","content":"Which x?"},
		{"role":"user","content":"The answer to everything."}
	]`, string(mustJSON(t, reqs[0].JSON["messages"])))
}

func TestCompleteJSONModeTemperatureAndMaxTokensOnTheWire(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.JSON(`{"answer":1}`), fakeopenai.JSON(`{"answer":2}`), fakeopenai.Text("t0"))
	llm := newLLM(t, srv)
	chat := newChat(t, llm, langchain.ChatConfig{})
	req := &agent.ChatRequest{
		Messages:       []agent.Message{agent.SystemText("Answer in JSON."), agent.UserText("x?")},
		ResponseFormat: &agent.ResponseFormat{Type: agent.JSONObject},
		Temperature:    ptr(0.2),
		MaxTokens:      100,
	}
	resp, err := chat.Complete(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, `{"answer":1}`, resp.Message.Text)

	// A server that reads only max_tokens: a backend option through Options.
	legacy := newChat(t, llm, langchain.ChatConfig{Options: []llms.CallOption{lcopenai.WithLegacyMaxTokensField()}})
	_, err = legacy.Complete(context.Background(), req)
	require.NoError(t, err)

	// An explicit zero temperature is sent as such.
	_, err = chat.Complete(context.Background(), &agent.ChatRequest{Messages: req.Messages, Temperature: ptr(0.0)})
	require.NoError(t, err)

	reqs := srv.ChatRequests()
	require.Len(t, reqs, 3)
	msgs := `[{"role":"system","content":"Answer in JSON."},{"role":"user","content":"x?"}]`
	assert.JSONEq(t, `{"model":"gpt-test","messages":`+msgs+`,
		"response_format":{"type":"json_object"},"temperature":0.2,"max_completion_tokens":100}`, string(reqs[0].Body))
	assert.JSONEq(t, `{"model":"gpt-test","messages":`+msgs+`,
		"response_format":{"type":"json_object"},"temperature":0.2,"max_tokens":100}`, string(reqs[1].Body))
	assert.JSONEq(t, `{"model":"gpt-test","messages":`+msgs+`,"temperature":0}`, string(reqs[2].Body))
}

func TestCompleteModelOverride(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("small answer"))
	mini := newChat(t, newLLM(t, srv), langchain.ChatConfig{Model: "gpt-test-mini"})
	assert.Equal(t, "gpt-test-mini", mini.Model())
	resp, err := mini.Complete(context.Background(), user("q"))
	require.NoError(t, err)
	assert.Equal(t, "gpt-test-mini", resp.Model)
	assert.Equal(t, "gpt-test-mini", srv.ChatRequests()[0].Chat.Model)
}

func TestCompleteOffersToolsAndParsesToolCalls(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.ToolCalls(
		fakeopenai.Call("call_1", "get_weather", `{ "city" : "Paris" }`),
		fakeopenai.Call("", "get_weather", `{"city":"Rome"}`),
		fakeopenai.Call("call_3", "get_weather", `city=Oslo`),
		fakeopenai.Call("call_4", "get_weather", `  `),
	).WithText("Let me look.").WithUsage(40, 9))
	chat := newChat(t, newLLM(t, srv), langchain.ChatConfig{})

	resp, err := chat.Complete(context.Background(), &agent.ChatRequest{
		Messages: []agent.Message{agent.UserText("Weather in Paris?")},
		Tools:    []agent.Tool{weatherTool(t, nil)},
	})
	require.NoError(t, err)
	assert.Equal(t, "tool_calls", resp.FinishReason)
	assert.Equal(t, "Let me look.", resp.Message.Text)
	assert.Equal(t, agent.Usage{PromptTokens: 40, CompletionTokens: 9, TotalTokens: 49}, resp.Usage)
	calls := resp.Message.ToolCalls
	require.Len(t, calls, 4)
	assert.Equal(t, agent.ToolCall{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}, calls[0])
	assert.Regexp(t, `^call_[0-9a-f]{12}_1$`, calls[1].ID, "a missing id is made up")
	assert.Equal(t, json.RawMessage(`"city=Oslo"`), calls[2].Arguments, "malformed arguments become a JSON string")
	assert.Equal(t, json.RawMessage(`{}`), calls[3].Arguments)
	_, err = json.Marshal(resp.Message)
	assert.NoError(t, err)

	reqs := srv.ChatRequests()
	require.Len(t, reqs, 1)
	assert.JSONEq(t, `[{"type":"function","function":{"name":"get_weather","description":"Gets the weather for a city.",
		"parameters":`+weatherSchema+`}}]`, string(mustJSON(t, reqs[0].JSON["tools"])))
}

// TestAgentToolRoundTrip runs agent.Agent on the adapter: the model calls
// the tool, the result goes back as a tool message, the model answers.
func TestAgentToolRoundTrip(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(
		fakeopenai.ToolCalls(fakeopenai.Call("call_1", "get_weather", `{"city":"Paris"}`)).WithUsage(50, 10),
		fakeopenai.Text("It is sunny in Paris.").WithUsage(70, 8),
	)
	var (
		mu   sync.Mutex
		seen []weatherArgs
	)
	tool := weatherTool(t, func(_ context.Context, in weatherArgs) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, in)
		return "sunny, 21C", nil
	})
	a := agent.New(newChat(t, newLLM(t, srv), langchain.ChatConfig{}), agent.Config{
		Instructions: "You are a helpful assistant.",
		Tools:        []agent.Tool{tool},
		Temperature:  ptr(0.3),
		MaxTokens:    200,
	})
	sess := a.NewSession()
	resp, err := a.Run(context.Background(), sess, agent.UserText("What's the weather in Paris?"))
	require.NoError(t, err)
	assert.Equal(t, "It is sunny in Paris.", resp.Text())
	assert.Equal(t, agent.Usage{PromptTokens: 120, CompletionTokens: 18, TotalTokens: 138}, resp.Usage)
	assert.Equal(t, []weatherArgs{{City: "Paris"}}, seen)
	require.Len(t, resp.Messages, 3)
	assert.Equal(t, agent.RoleTool, resp.Messages[1].Role)
	assert.Equal(t, "call_1", resp.Messages[1].ToolCallID)

	const (
		prefix = `{"role":"system","content":"You are a helpful assistant."},
			{"role":"user","content":"What's the weather in Paris?"}`
		rest = `"tools":[{"type":"function","function":{"name":"get_weather","description":"Gets the weather for a city.","parameters":` + weatherSchema + `}}],
			"temperature":0.3,"max_completion_tokens":200`
	)
	reqs := srv.ChatRequests()
	require.Len(t, reqs, 2)
	assert.JSONEq(t, `{"model":"gpt-test","messages":[`+prefix+`],`+rest+`}`, string(reqs[0].Body))
	assert.JSONEq(t, `{"model":"gpt-test","messages":[`+prefix+`,
		{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"sunny, 21C"}
	],`+rest+`}`, string(reqs[1].Body))
}

func TestCompleteServerErrorIsWrappedAndNotRetried(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueError(500, "overloaded")
	chat := newChat(t, newLLM(t, srv), langchain.ChatConfig{Model: "gpt-test"})
	_, err := chat.Complete(context.Background(), user("q"))
	require.Error(t, err)
	assert.Equal(t, "llm/langchain: chat completion (model gpt-test, *openai.LLM): API returned unexpected status code: 500: overloaded", err.Error())
	assert.Len(t, srv.ChatRequests(), 1, "langchaingo's openai client does not retry")
}

func TestCompleteCancelledOrExpiredContext(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("too late").WithDelay(time.Minute), fakeopenai.Text("too late").WithDelay(time.Minute))
	chat := newChat(t, newLLM(t, srv), langchain.ChatConfig{})

	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(50*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	_, err := chat.Complete(ctx, user("q"))
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "request cancelled", "langchaingo's own text is kept")
	assert.Less(t, time.Since(start), 10*time.Second)

	ctx, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	_, err = chat.Complete(ctx, user("q"))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestCompleteRejectsWhatCannotBeMappedBeforeCalling(t *testing.T) {
	schema := &jsonschema.Schema{Type: "object"}
	cases := []struct {
		name string
		req  *agent.ChatRequest
		want string
		is   error
	}{
		{"nil request", nil, "nil request", nil},
		{"no messages", &agent.ChatRequest{}, "request has no messages", nil},
		{"json schema", &agent.ChatRequest{Messages: user("q").Messages, ResponseFormat: &agent.ResponseFormat{Type: agent.JSONSchema, Schema: schema}},
			"response format json_schema", langchain.ErrUnsupported},
		{"unknown format", &agent.ChatRequest{Messages: user("q").Messages, ResponseFormat: &agent.ResponseFormat{Type: "xml"}}, `unknown response format type "xml"`, nil},
		{"unknown role", &agent.ChatRequest{Messages: []agent.Message{{Role: "developer", Text: "x"}}}, `message 0: unknown role "developer"`, nil},
		{"tool without call id", &agent.ChatRequest{Messages: []agent.Message{agent.UserText("q"), {Role: agent.RoleTool, Text: "r"}}}, "message 1: tool message without ToolCallID", nil},
		{"tool call without id", &agent.ChatRequest{Messages: []agent.Message{{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{Name: "f"}}}}}, "message 0: tool call 0: empty id or name", nil},
		{"nil tool", &agent.ChatRequest{Messages: user("q").Messages, Tools: []agent.Tool{nil}}, "tool 0: nil tool", nil},
		{"negative max tokens", &agent.ChatRequest{Messages: user("q").Messages, MaxTokens: -1}, "MaxTokens -1 is negative", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeopenai.New(t)
			chat := newChat(t, newLLM(t, srv), langchain.ChatConfig{})
			_, err := chat.Complete(context.Background(), tc.req)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "llm/langchain: "), err.Error())
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
				assert.ErrorIs(t, err, errors.ErrUnsupported)
			}
			assert.Empty(t, srv.Requests())
		})
	}
}

func TestCompleteRefusalIsAnEmptyAnswer(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.ToolCalls().WithRefusal("I can't help with that.").WithFinishReason("stop"))
	chat := newChat(t, newLLM(t, srv), langchain.ChatConfig{})
	_, err := chat.Complete(context.Background(), user("?"))
	require.ErrorIs(t, err, langchain.ErrEmptyAnswer)
	assert.Contains(t, err.Error(), `finish reason "stop"`)
	assert.Contains(t, err.Error(), "refusal")
}

func TestCompleteBadAnswers(t *testing.T) {
	cases := []struct {
		name  string
		reply fakeopenai.Reply
		want  string
		is    error
	}{
		{"no choices", fakeopenai.Raw(200, "application/json", `{"id":"x","object":"chat.completion","model":"m","choices":[]}`), "empty response", nil},
		{"malformed json", fakeopenai.Raw(200, "application/json", `{"choices":[`), "llm/langchain: chat completion (*openai.LLM)", nil},
		{"custom tool call", fakeopenai.Raw(200, "application/json",
			`{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[{"id":"c","type":"custom","custom":{"name":"x","input":"y"}}]}}]}`),
			`tool call 0 has type "custom"`, langchain.ErrUnsupported},
		{"nameless tool call", fakeopenai.ToolCalls(fakeopenai.Call("c", "", "{}")), "tool call 0 has no function name", nil},
		{"legacy function call", fakeopenai.Raw(200, "application/json",
			`{"choices":[{"index":0,"finish_reason":"function_call","message":{"role":"assistant","content":null,"function_call":{"name":"f","arguments":"{}"}}}]}`),
			`legacy function_call answer (function "f")`, langchain.ErrUnsupported},
		{"cut off", fakeopenai.Text("").WithFinishReason("length"), `empty answer (finish reason "length")`, langchain.ErrEmptyAnswer},
		// langchaingo v0.1.14 dereferences the missing function_call and panics.
		{"function_call finish without a call", fakeopenai.Text("x").WithFinishReason("function_call"),
			"llm/langchain: chat completion (*openai.LLM): langchaingo panicked: runtime error: invalid memory address or nil pointer dereference", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeopenai.New(t)
			srv.QueueChat(tc.reply)
			chat := newChat(t, newLLM(t, srv), langchain.ChatConfig{})
			_, err := chat.Complete(context.Background(), user("?"))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
		})
	}
}

func TestCompleteIsSafeForConcurrentUse(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Text("echo " + r.LastUserText()) })
	chat := newChat(t, newLLM(t, srv), langchain.ChatConfig{})
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			text := string(rune('a' + i))
			resp, err := chat.Complete(context.Background(), user(text))
			if err == nil && resp.Message.Text != "echo "+text {
				err = errors.New("wrong answer " + resp.Message.Text)
			}
			errs <- err
		}()
	}
	for range 8 {
		assert.NoError(t, <-errs)
	}
}

// anthropicStyle is an llms.Model answering as langchaingo's anthropic
// backend reports usage, for the usage mapping of non-OpenAI backends.
type anthropicStyle struct{}

func (anthropicStyle) GenerateContent(context.Context, []llms.MessageContent, ...llms.CallOption) (*llms.ContentResponse, error) {
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{
		Content: "hi", StopReason: "end_turn",
		GenerationInfo: map[string]any{"InputTokens": 7, "OutputTokens": int64(3)},
	}}}, nil
}

func (anthropicStyle) Call(context.Context, string, ...llms.CallOption) (string, error) {
	return "", errors.New("not used")
}

func TestCompleteUsageOfOtherBackends(t *testing.T) {
	chat := newChat(t, anthropicStyle{}, langchain.ChatConfig{Model: "claude-test"})
	resp, err := chat.Complete(context.Background(), user("q"))
	require.NoError(t, err)
	assert.Equal(t, agent.Usage{PromptTokens: 7, CompletionTokens: 3, TotalTokens: 10}, resp.Usage)
	assert.Equal(t, "end_turn", resp.FinishReason)
	assert.Equal(t, "claude-test", resp.Model)
}

func TestNewChatClientBadConfig(t *testing.T) {
	srv := fakeopenai.New(t)
	cases := []struct {
		name string
		llm  llms.Model
		cfg  langchain.ChatConfig
		want string
	}{
		{"nil model", nil, langchain.ChatConfig{}, "nil llms.Model"},
		{"nil typed model", (*lcopenai.LLM)(nil), langchain.ChatConfig{}, "nil llms.Model"},
		{"spaced model name", newLLM(t, srv), langchain.ChatConfig{Model: " gpt "}, `Model " gpt " has leading or trailing space`},
		{"nil option", newLLM(t, srv), langchain.ChatConfig{Options: []llms.CallOption{nil}}, "Options[0] is nil"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := langchain.NewChatClient(tc.llm, tc.cfg)
			require.ErrorIs(t, err, langchain.ErrConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err, fmt.Sprintf("%T", v))
	return b
}
