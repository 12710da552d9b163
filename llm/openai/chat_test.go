package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/openai"
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

// compatible returns a Config for the fake server as an OpenAI-compatible
// base URL, with fast retries.
func compatible(srv *fakeopenai.Server) openai.Config {
	return openai.Config{
		BaseURL:        srv.URL(),
		APIKey:         "sk-test",
		ChatModel:      "gpt-test",
		EmbeddingModel: "emb-test",
		MaxRetryDelay:  time.Millisecond,
	}
}

func newChat(t *testing.T, cfg openai.Config) *openai.Chat {
	t.Helper()
	c, err := openai.NewChat(cfg)
	require.NoError(t, err)
	return c
}

func ptr[T any](v T) *T { return &v }

func TestCompleteSendsExactRequest(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.JSON(`{"answer":"x is 1"}`).WithUsage(30, 5))
	chat := newChat(t, compatible(srv))

	schema := &jsonschema.Schema{
		Type:                 "object",
		Properties:           map[string]*jsonschema.Schema{"answer": {Type: "string"}},
		Required:             []string{"answer"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	req := &agent.ChatRequest{
		Messages: []agent.Message{
			{Role: agent.RoleSystem, Text: "You answer in JSON."},
			{Role: agent.RoleUser, Name: "Ann Lee", Text: "What is x?"},
			{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{
				{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)},
			}},
			{Role: agent.RoleTool, Name: "get_weather", ToolCallID: "call_1", Text: "sunny"},
			{Role: agent.RoleAssistant, Name: "bot", Text: "It is sunny."},
			{Role: agent.RoleUser, Text: "And x?", ID: "m1", Source: "ignored", CreatedAt: time.Unix(1, 0)},
		},
		Tools:          []agent.Tool{weatherTool(t, nil)},
		ResponseFormat: &agent.ResponseFormat{Type: agent.JSONSchema, Name: "answer", Schema: schema, Strict: true},
		Temperature:    ptr(0.2),
		MaxTokens:      100,
	}
	resp, err := chat.Complete(context.Background(), req)
	require.NoError(t, err)

	reqs := srv.ChatRequests()
	require.Len(t, reqs, 1)
	r := reqs[0]
	assert.Equal(t, "/v1/chat/completions", r.Path)
	assert.Equal(t, "Bearer sk-test", r.Header.Get("Authorization"))
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	assert.JSONEq(t, `{
		"model": "gpt-test",
		"messages": [
			{"role": "system", "content": "You answer in JSON."},
			{"role": "user", "name": "Ann_Lee", "content": "What is x?"},
			{"role": "assistant", "tool_calls": [
				{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}
			]},
			{"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
			{"role": "assistant", "name": "bot", "content": "It is sunny."},
			{"role": "user", "content": "And x?"}
		],
		"tools": [{"type": "function", "function": {
			"name": "get_weather",
			"description": "Gets the weather for a city.",
			"parameters": `+weatherSchema+`
		}}],
		"response_format": {"type": "json_schema", "json_schema": {
			"name": "answer",
			"strict": true,
			"schema": {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"], "additionalProperties": false}
		}},
		"temperature": 0.2,
		"max_tokens": 100
	}`, string(r.Body))

	assert.Equal(t, &agent.ChatResponse{
		Message:      agent.Message{Role: agent.RoleAssistant, Text: `{"answer":"x is 1"}`},
		Usage:        agent.Usage{PromptTokens: 30, CompletionTokens: 5, TotalTokens: 35},
		FinishReason: "stop",
		Model:        "gpt-test",
	}, resp)
}

func TestCompleteMinimalRequestAndJSONMode(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("hi"), fakeopenai.JSON(map[string]int{"n": 1}))
	cfg := compatible(srv)
	cfg.APIKey = "" // local servers need no key
	chat := newChat(t, cfg)

	_, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("hello")}})
	require.NoError(t, err)
	resp, err := chat.Complete(context.Background(), &agent.ChatRequest{
		Messages:       []agent.Message{agent.UserText("json please")},
		ResponseFormat: &agent.ResponseFormat{Type: agent.JSONObject},
	})
	require.NoError(t, err)
	assert.Equal(t, `{"n":1}`, resp.Message.Text)

	reqs := srv.ChatRequests()
	require.Len(t, reqs, 2)
	assert.JSONEq(t, `{"model":"gpt-test","messages":[{"role":"user","content":"hello"}]}`, string(reqs[0].Body))
	assert.Empty(t, reqs[0].Header.Values("Authorization"), "no key, no Authorization header")
	assert.JSONEq(t, `{"model":"gpt-test","messages":[{"role":"user","content":"json please"}],"response_format":{"type":"json_object"}}`, string(reqs[1].Body))
}

func TestCompleteSchemaDefaults(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("{}"), fakeopenai.Text("ok"))
	cfg := compatible(srv)
	cfg.TokenLimit = openai.MaxCompletionTokens
	chat := newChat(t, cfg)

	_, err := chat.Complete(context.Background(), &agent.ChatRequest{
		Messages:       []agent.Message{agent.UserText("q")},
		ResponseFormat: &agent.ResponseFormat{Type: agent.JSONSchema, Schema: &jsonschema.Schema{Type: "object"}},
		MaxTokens:      7,
		Temperature:    ptr(0.0),
	})
	require.NoError(t, err)
	// An assistant message with neither text nor tool calls still has content.
	_, err = chat.Complete(context.Background(), &agent.ChatRequest{
		Messages: []agent.Message{agent.UserText("q"), {Role: agent.RoleAssistant}},
	})
	require.NoError(t, err)

	reqs := srv.ChatRequests()
	require.Len(t, reqs, 2)
	assert.JSONEq(t, `{"model":"gpt-test","messages":[{"role":"user","content":"q"}],
		"response_format":{"type":"json_schema","json_schema":{"name":"response","schema":{"type":"object"}}},
		"max_completion_tokens":7,"temperature":0}`, string(reqs[0].Body))
	assert.JSONEq(t, `{"model":"gpt-test","messages":[{"role":"user","content":"q"},{"role":"assistant","content":""}]}`, string(reqs[1].Body))
}

func TestCompleteParsesToolCalls(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.ToolCalls(
		fakeopenai.Call("call_a", "get_weather", "{ \"city\" : \"Oslo\" }"),
		fakeopenai.Call("call_b", "get_weather", ""),
		fakeopenai.Call("", "get_weather", `{"city":"Rome"`),
	).WithText("Let me check.").WithUsage(11, 22).WithModel("gpt-test-2025"))
	chat := newChat(t, compatible(srv))

	resp, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("weather?")}})
	require.NoError(t, err)
	assert.Equal(t, &agent.ChatResponse{
		Message: agent.Message{Role: agent.RoleAssistant, Text: "Let me check.", ToolCalls: []agent.ToolCall{
			{ID: "call_a", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)},
			{ID: "call_b", Name: "get_weather", Arguments: json.RawMessage(`{}`)},
			// Malformed arguments are kept, as a JSON string, so the message
			// still marshals and the tool reports the problem to the model.
			{ID: "call_chatcmpl-fake-1_2", Name: "get_weather", Arguments: json.RawMessage(`"{\"city\":\"Rome\""`)},
		}},
		Usage:        agent.Usage{PromptTokens: 11, CompletionTokens: 22, TotalTokens: 33},
		FinishReason: "tool_calls",
		Model:        "gpt-test-2025",
	}, resp)
	_, err = json.Marshal(resp.Message)
	assert.NoError(t, err)
}

func TestCompleteRefusalBecomesText(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.ToolCalls().WithRefusal("I can't help with that.").WithFinishReason("stop"))
	chat := newChat(t, compatible(srv))
	resp, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("?")}})
	require.NoError(t, err)
	assert.Equal(t, "I can't help with that.", resp.Message.Text)
}

func TestCompleteBadResponses(t *testing.T) {
	cases := []struct {
		name  string
		reply fakeopenai.Reply
		want  string
	}{
		{"no choices", fakeopenai.Raw(200, "application/json", `{"id":"x","object":"chat.completion","model":"m","choices":[]}`), "no choices"},
		{"malformed json", fakeopenai.Raw(200, "application/json", `{"choices":[`), "llm/openai: chat completion (model gpt-test)"},
		{"custom tool call", fakeopenai.Raw(200, "application/json",
			`{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[{"id":"c","type":"custom","custom":{"name":"x","input":"y"}}]}}]}`),
			`unsupported type "custom"`},
		{"nameless tool call", fakeopenai.ToolCalls(fakeopenai.Call("c", "", "{}")), "no function name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeopenai.New(t)
			srv.QueueChat(tc.reply)
			chat := newChat(t, compatible(srv))
			_, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("?")}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestCompleteRejectsBadRequestsWithoutCallingServer(t *testing.T) {
	srv := fakeopenai.New(t)
	chat := newChat(t, compatible(srv))
	user := agent.UserText("q")
	cases := []struct {
		name string
		req  *agent.ChatRequest
		want string
	}{
		{"nil", nil, "nil request"},
		{"no messages", &agent.ChatRequest{}, "no messages"},
		{"unknown role", &agent.ChatRequest{Messages: []agent.Message{{Role: "developer", Text: "x"}}}, `message 0: unknown role "developer"`},
		{"tool without call id", &agent.ChatRequest{Messages: []agent.Message{user, {Role: agent.RoleTool, Text: "x"}}}, "message 1: tool message without ToolCallID"},
		{"tool call without id", &agent.ChatRequest{Messages: []agent.Message{user, {Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{Name: "f"}}}}}, "message 1: tool call 0: empty id or name"},
		{"schema missing", &agent.ChatRequest{Messages: []agent.Message{user}, ResponseFormat: &agent.ResponseFormat{Type: agent.JSONSchema}}, "without a Schema"},
		{"unknown format", &agent.ChatRequest{Messages: []agent.Message{user}, ResponseFormat: &agent.ResponseFormat{Type: "yaml"}}, `unknown response format type "yaml"`},
		{"negative max tokens", &agent.ChatRequest{Messages: []agent.Message{user}, MaxTokens: -1}, "MaxTokens -1 is negative"},
		{"nil tool", &agent.ChatRequest{Messages: []agent.Message{user}, Tools: []agent.Tool{nil}}, "tool 0: nil tool"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := chat.Complete(context.Background(), tc.req)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.Empty(t, srv.Requests())
}

func TestCompleteRetriesServerErrorOnce(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueError(http.StatusInternalServerError, "boom")
	srv.QueueChat(fakeopenai.Text("recovered"))
	chat := newChat(t, compatible(srv))

	resp, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("q")}})
	require.NoError(t, err)
	assert.Equal(t, "recovered", resp.Message.Text)

	reqs := srv.ChatRequests()
	require.Len(t, reqs, 2, "one retry")
	assert.Equal(t, string(reqs[0].Body), string(reqs[1].Body), "the retry replays the same body")
	assert.Equal(t, "0", reqs[0].Header.Get("X-Stainless-Retry-Count"))
	assert.Equal(t, "1", reqs[1].Header.Get("X-Stainless-Retry-Count"))
}

func TestCompleteRetriesRateLimitHonouringRetryAfter(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueAny(fakeopenai.Error(http.StatusTooManyRequests, "slow down").WithHeader("Retry-After", "0"))
	srv.QueueChat(fakeopenai.Text("ok"))
	cfg := compatible(srv)
	cfg.MaxRetryDelay = 0 // SDK default: a Retry-After of 0 means retry now
	chat := newChat(t, cfg)

	resp, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("q")}})
	require.NoError(t, err)
	assert.Equal(t, "ok", resp.Message.Text)
	assert.Len(t, srv.ChatRequests(), 2)
}

func TestCompleteDoesNotRetryWhenServerAsksForTooLong(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueAny(fakeopenai.Error(http.StatusTooManyRequests, "quota exceeded").WithHeader("Retry-After", "3600"))
	chat := newChat(t, compatible(srv)) // MaxRetryDelay 1ms

	_, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("q")}})
	require.Error(t, err)
	var apiErr *sdk.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusTooManyRequests, apiErr.StatusCode)
	assert.Contains(t, err.Error(), "quota exceeded")
	assert.Len(t, srv.ChatRequests(), 1)
}

func TestCompleteGivesUpAfterMaxRetries(t *testing.T) {
	srv := fakeopenai.New(t)
	for range 3 {
		srv.QueueError(http.StatusBadGateway, "bad gateway")
	}
	cfg := compatible(srv)
	cfg.MaxRetries = 2
	chat := newChat(t, cfg)
	_, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("q")}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "502")
	assert.Len(t, srv.ChatRequests(), 3)
}

func TestCompleteNoRetries(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueError(http.StatusInternalServerError, "boom")
	cfg := compatible(srv)
	cfg.MaxRetries = -1
	chat := newChat(t, cfg)
	_, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("q")}})
	require.Error(t, err)
	assert.Len(t, srv.ChatRequests(), 1)
}

func TestCompleteClientErrorsAreNotRetriedAndAuthMessagesHidden(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueError(http.StatusBadRequest, "Invalid value for 'temperature'")
	srv.QueueError(http.StatusUnauthorized, "Incorrect API key provided: sk-te***st")
	chat := newChat(t, compatible(srv))

	_, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("q")}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "400")
	assert.Contains(t, err.Error(), "Invalid value for 'temperature'")

	_, err = chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("q")}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "401")
	assert.NotContains(t, err.Error(), "sk-te")
	assert.Len(t, srv.ChatRequests(), 2)
}

func TestCompleteCancelledContextReturnsPromptly(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueChat(fakeopenai.Text("too late").WithDelay(time.Minute))
	chat := newChat(t, compatible(srv))

	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(50*time.Millisecond, cancel)
	defer timer.Stop()
	start := time.Now()
	_, err := chat.Complete(ctx, &agent.ChatRequest{Messages: []agent.Message{agent.UserText("q")}})
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled), "got %v", err)
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Len(t, srv.ChatRequests(), 1, "no retry after cancellation")
}

func TestCompleteAlreadyCancelledContext(t *testing.T) {
	srv := fakeopenai.New(t)
	chat := newChat(t, compatible(srv))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := chat.Complete(ctx, &agent.ChatRequest{Messages: []agent.Message{agent.UserText("q")}})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestCompleteIsSafeForConcurrentUse(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Text("echo " + r.LastUserText()) })
	chat := newChat(t, compatible(srv))
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			text := string(rune('a' + i))
			resp, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText(text)}})
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

func TestNewChatBadConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  openai.Config
		want string
	}{
		{"no model", openai.Config{APIKey: "k"}, "ChatModel is empty; set the chat model"},
		{"azure no deployment", openai.Config{Azure: openai.AzureConfig{Endpoint: "https://x.openai.azure.com", APIKey: "k"}}, "ChatModel is empty; set the chat deployment name"},
		{"openai without key", openai.Config{ChatModel: "m"}, "APIKey is required for OpenAI"},
		{"both servers", openai.Config{ChatModel: "m", BaseURL: "http://localhost:1/v1", Azure: openai.AzureConfig{Endpoint: "https://x", APIKey: "k"}}, "both BaseURL and Azure.Endpoint"},
		{"openai key with azure", openai.Config{ChatModel: "m", APIKey: "k", Azure: openai.AzureConfig{Endpoint: "https://x", APIKey: "k"}}, "set Azure.APIKey"},
		{"azure key and credential", openai.Config{ChatModel: "m", Azure: openai.AzureConfig{Endpoint: "https://x", APIKey: "k", Credential: &fakeCredential{}}}, "both Azure.APIKey and Azure.Credential"},
		{"relative base url", openai.Config{ChatModel: "m", BaseURL: "localhost:11434/v1"}, `BaseURL "localhost:11434/v1": want an absolute http or https URL`},
		{"bad azure endpoint", openai.Config{ChatModel: "m", Azure: openai.AzureConfig{Endpoint: "x.openai.azure.com", APIKey: "k"}}, "Azure.Endpoint"},
		{"bad token limit", openai.Config{ChatModel: "m", APIKey: "k", TokenLimit: "max"}, `TokenLimit "max"`},
		{"negative delay", openai.Config{ChatModel: "m", APIKey: "k", MaxRetryDelay: -1}, "MaxRetryDelay"},
		{"negative timeout", openai.Config{ChatModel: "m", APIKey: "k", RequestTimeout: -1}, "RequestTimeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := openai.NewChat(tc.cfg)
			require.Error(t, err)
			assert.Nil(t, c)
			assert.ErrorIs(t, err, openai.ErrConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestConfigService(t *testing.T) {
	assert.Equal(t, openai.ServiceOpenAI, openai.Config{}.Service())
	assert.Equal(t, openai.DefaultBaseURL, openai.Config{}.Endpoint())
	assert.Equal(t, openai.ServiceCompatible, openai.Config{BaseURL: "http://h/v1"}.Service())
	assert.Equal(t, openai.ServiceAzure, openai.Config{Azure: openai.AzureConfig{Endpoint: "https://a"}}.Service())
	c, err := openai.NewChat(openai.Config{APIKey: "k", ChatModel: "gpt-4.1"})
	require.NoError(t, err)
	assert.Equal(t, "gpt-4.1", c.Model())
}
