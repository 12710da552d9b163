package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/gateway"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

func TestUnknownFieldsAndResponseFormatReachUpstreamByteIdentical(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	r.up.QueueChat(fakeopenai.JSON(`{"city":"Lisbon"}`))
	var sent []byte
	capture := func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		sent = b
		req.Body = io.NopCloser(bytes.NewReader(b))
		return next(req)
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}
	_, err := r.chat("alice", option.WithMiddleware(capture)).New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{userMessage("Where do I live?")},
		Seed:     openai.Int(42),
		Logprobs: openai.Bool(true),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "place", Schema: schema, Strict: openai.Bool(true)},
		}},
	}, option.WithJSONSet("x_vendor_extension", map[string]any{"routing": []any{"eu", 1, true, nil}}),
		option.WithJSONSet("memory_context", map[string]any{"user_id": "alice"}))
	require.NoError(t, err)

	var client, upstream map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(sent, &client))
	require.NoError(t, json.Unmarshal(r.up.ChatRequests()[0].Body, &upstream))
	require.Contains(t, client, "x_vendor_extension")
	for k, v := range client {
		switch k {
		case "messages":
		case "memory_context":
			assert.NotContains(t, upstream, k, "the extension is stripped")
		default:
			assert.Equal(t, string(v), string(upstream[k]), "field %s", k)
		}
	}
	assert.Len(t, upstream, len(client)-1)
}

func TestClientToolCallsRoundTrip(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	weather := openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
	})
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{userMessage("Will I need an umbrella in Paris today?")},
		Tools:    []openai.ChatCompletionToolUnionParam{weather},
	}
	r.up.QueueChat(fakeopenai.ToolCalls(fakeopenai.Call("call_1", "get_weather", `{"city":"Paris"}`)))
	first, err := r.chat("alice").New(context.Background(), params)
	require.NoError(t, err)
	calls := first.Choices[0].Message.ToolCalls
	require.Len(t, calls, 1, "the client's tool call reaches the client")
	assert.Equal(t, "get_weather", calls[0].Function.Name)
	assert.Equal(t, `{"city":"Paris"}`, calls[0].Function.Arguments)
	assert.Empty(t, r.turns("alice"), "a turn waiting for the client's tool results is not recorded yet")
	assert.Contains(t, string(r.up.ChatRequests()[0].Body), `"name":"get_weather"`)

	params.Messages = append(params.Messages, first.Choices[0].Message.ToParam(), openai.ToolMessage("rain, 14°C", "call_1"))
	r.up.QueueChat(fakeopenai.Text("Yes, take an umbrella: rain and 14°C."))
	second, err := r.chat("alice").New(context.Background(), params)
	require.NoError(t, err)
	assert.Equal(t, "Yes, take an umbrella: rain and 14°C.", second.Choices[0].Message.Content)

	up := r.up.ChatRequests()[1].Chat.Messages
	last := up[len(up)-1]
	assert.Equal(t, "tool", last.Role)
	assert.Equal(t, "call_1", last.ToolCallID)
	assert.Equal(t, "rain, 14°C", last.Content, "the tool result is forwarded")

	turns := r.storedTurns("alice")
	require.Len(t, turns, 1, "one turn, recorded with the answer")
	require.Len(t, turns[0].Messages, 2)
	assert.Equal(t, "Will I need an umbrella in Paris today?", turns[0].Messages[0].Content)
	assert.Equal(t, "Yes, take an umbrella: rain and 14°C.", turns[0].Messages[1].Content)
	assert.Contains(t, turns[0].Metadata["tools"], "get_weather")
	assert.Contains(t, turns[0].Metadata["tools"], "rain, 14°C")
}

func TestUpstreamErrorsAreReturnedWithTheirStatus(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	r.up.QueueError(http.StatusTooManyRequests, "slow down")
	_, err := r.chat("alice").New(context.Background(), openai.ChatCompletionNewParams{
		Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{userMessage("Hello there, how are you?")},
	})
	var apiErr *openai.Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	assert.Equal(t, http.StatusTooManyRequests, apiErr.StatusCode)
	assert.Equal(t, "slow down", apiErr.Message)
	assert.Empty(t, r.turns("alice"), "a failed answer records nothing")

	// An answer that is not in OpenAI's shape is wrapped in it.
	r.up.QueueAny(fakeopenai.Raw(http.StatusBadGateway, "text/html", "<html>bad gateway</html>"))
	status, _, b := r.do(http.MethodPost, "/v1/chat/completions", map[string]string{gateway.UserHeader: "alice"},
		map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	assert.Equal(t, http.StatusBadGateway, status)
	assert.JSONEq(t, `{"error":{"message":"upstream answered 502 Bad Gateway: <html>bad gateway</html>","type":"upstream_error","param":null,"code":"upstream_error"}}`, string(b))
}

func TestAnUpstreamThatCannotBeReachedIsABadGateway(t *testing.T) {
	t.Parallel()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	r := newRig(t, func(c *gateway.Config) { c.Upstream.BaseURL = dead.URL + "/v1" })
	status, h, b := r.do(http.MethodPost, "/v1/chat/completions", map[string]string{gateway.UserHeader: "alice"},
		map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	assert.Equal(t, http.StatusBadGateway, status, string(b))
	assert.Contains(t, string(b), `"type":"upstream_error"`)
	assert.NotEmpty(t, h.Get(gateway.Header))
}

func TestModelsArePassedThrough(t *testing.T) {
	t.Parallel()
	var auth string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet || req.URL.Path != "/v1/models" {
			http.NotFound(w, req)
			return
		}
		auth = req.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"llama3.2","object":"model","created":1,"owned_by":"local"}]}`)
	}))
	t.Cleanup(up.Close)
	r := newRig(t, func(c *gateway.Config) { c.Upstream.BaseURL = up.URL + "/v1" })
	c := r.client("")
	page, err := c.Models.List(context.Background())
	require.NoError(t, err)
	require.Len(t, page.Data, 1)
	assert.Equal(t, "llama3.2", page.Data[0].ID)
	assert.Equal(t, "Bearer upstream-key", auth)
}

func TestAzureUpstreamPathsNameTheDeployment(t *testing.T) {
	t.Parallel()
	up := fakeopenai.New(t)
	r := newRig(t, func(c *gateway.Config) {
		c.Upstream = gateway.Upstream{Azure: gateway.AzureUpstream{Endpoint: up.AzureEndpoint(), APIKey: "azure-key", APIVersion: "2024-10-21"}, Model: "chat-deployment"}
	})
	up.QueueChat(fakeopenai.Text("ok"))
	status, _, b := r.do(http.MethodPost, "/v1/chat/completions", nil,
		map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	require.Equal(t, http.StatusOK, status, string(b))
	reqs := up.ChatRequests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "chat-deployment", reqs[0].Deployment, "a request without a model goes to the default deployment")
	assert.Equal(t, "2024-10-21", reqs[0].Query.Get("api-version"))
	assert.Equal(t, "azure-key", reqs[0].Header.Get("api-key"))
}
