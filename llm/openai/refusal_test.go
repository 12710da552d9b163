package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/llm/openai"
)

// loggedChat returns a chat client on srv whose log is returned.
func loggedChat(t *testing.T, srv *fakeopenai.Server) (*openai.Chat, *syncBuffer) {
	t.Helper()
	var buf syncBuffer
	cfg := compatible(srv)
	cfg.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	return newChat(t, cfg), &buf
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func jsonRequest() *agent.ChatRequest {
	return &agent.ChatRequest{
		Messages:       []agent.Message{agent.SystemText("Answer in JSON."), agent.UserText("Facts?")},
		ResponseFormat: &agent.ResponseFormat{Type: agent.JSONObject},
	}
}

func TestServerWithoutJSONModeIsRetriedOnceThenNotAskedAgain(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithoutJSONMode())
	srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Text("```json\n{\"a\":1}\n```") })
	chat, log := loggedChat(t, srv)

	resp, err := chat.Complete(context.Background(), jsonRequest())
	require.NoError(t, err)
	assert.Equal(t, "```json\n{\"a\":1}\n```", resp.Message.Text, "the answer is passed on as it is")
	reqs := srv.ChatRequests()
	require.Len(t, reqs, 2, "the refused request, then the retry")
	assert.JSONEq(t, `{"type":"json_object"}`, string(reqs[0].Chat.ResponseFormat))
	assert.Empty(t, reqs[1].Chat.ResponseFormat, "the retry goes without response_format")
	assert.Equal(t, reqs[0].Chat.Messages, reqs[1].Chat.Messages, "JSON mode needs no note: the prompt asks for JSON")

	_, err = chat.Complete(context.Background(), jsonRequest())
	require.NoError(t, err)
	reqs = srv.ChatRequests()
	require.Len(t, reqs, 3, "the second call skips response_format at once")
	assert.Empty(t, reqs[2].Chat.ResponseFormat)

	assert.Equal(t, 1, strings.Count(log.String(), "refuses a request field"), "logged once: %s", log)
	assert.Contains(t, log.String(), "field=response_format:json_object")
	assert.Contains(t, log.String(), fakeopenai.NoJSONMessage, "the server's reason is logged")
	assert.Contains(t, chat.Refused()["response_format:json_object"], fakeopenai.NoJSONMessage)
	assert.NotContains(t, chat.Refused(), "tools")
}

func TestStructuredOutputWithoutJSONModeGivesTheSchemaInWords(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithoutJSONMode())
	srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.JSON(`{"code":"X"}`) })
	chat := newChat(t, compatible(srv))
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"code": {Type: "string"}}}

	for _, msgs := range [][]agent.Message{
		{agent.SystemText("Be brief."), agent.UserText("Code?")},
		{agent.UserText("Code?")},
	} {
		_, err := chat.Complete(context.Background(), &agent.ChatRequest{
			Messages:       msgs,
			ResponseFormat: &agent.ResponseFormat{Type: agent.JSONSchema, Schema: schema},
		})
		require.NoError(t, err)
	}
	reqs := srv.ChatRequests()
	require.Len(t, reqs, 3, "one refusal, then two requests without response_format")
	withSystem, bare := reqs[1].Chat.Messages, reqs[2].Chat.Messages
	require.Len(t, withSystem, 2)
	assert.Equal(t, "system", withSystem[0].Role)
	assert.True(t, strings.HasPrefix(withSystem[0].Content, "Be brief.\n\n"), withSystem[0].Content)
	assert.Contains(t, withSystem[0].Content, `JSON schema: {"type":"object","properties":{"code":{"type":"string"}}}`)
	require.Len(t, bare, 2, "a request without a system message gets one, first")
	assert.Equal(t, "system", bare[0].Role)
	assert.Contains(t, bare[0].Content, `"code"`)
	assert.Equal(t, "user", bare[1].Role)
}

func TestServerWithoutToolsFailsWithErrToolsUnsupportedOnce(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithoutToolCalling())
	srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Text("plain") })
	chat, log := loggedChat(t, srv)
	req := &agent.ChatRequest{Messages: []agent.Message{agent.UserText("Weather?")}, Tools: []agent.Tool{weatherTool(t, nil)}}

	_, err := chat.Complete(context.Background(), req)
	require.ErrorIs(t, err, agent.ErrToolsUnsupported)
	assert.Contains(t, err.Error(), "registry.ollama.ai/library/gpt-test "+fakeopenai.NoToolsMessage, "the server's reason")
	require.Len(t, srv.ChatRequests(), 1, "tools are not dropped behind the caller's back")

	_, err = chat.Complete(context.Background(), req)
	require.ErrorIs(t, err, agent.ErrToolsUnsupported)
	assert.Contains(t, err.Error(), fakeopenai.NoToolsMessage)
	assert.Len(t, srv.ChatRequests(), 1, "a known refusal is not sent again")

	_, _, err = collect(t, chat.CompleteStream(context.Background(), req))
	require.ErrorIs(t, err, agent.ErrToolsUnsupported, "streaming too")
	assert.Len(t, srv.ChatRequests(), 1)

	resp, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: req.Messages})
	require.NoError(t, err, "a request without tools is sent as usual")
	assert.Equal(t, "plain", resp.Message.Text)
	assert.Equal(t, 1, strings.Count(log.String(), "refuses a request field"), "logged once: %s", log)
	assert.Contains(t, log.String(), "field=tools")
}

func TestCompleteStreamWithoutJSONModeOrStreamUsage(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithoutJSONMode(), fakeopenai.WithoutStreamUsage())
	srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.JSON(`{"a":1}`).WithUsage(5, 2) })
	chat, log := loggedChat(t, srv)

	_, resp, err := collect(t, chat.CompleteStream(context.Background(), jsonRequest()))
	require.NoError(t, err)
	require.NotNil(t, resp)
	assert.Equal(t, `{"a":1}`, resp.Message.Text)
	reqs := srv.ChatRequests()
	require.Len(t, reqs, 3, "refused for stream_options, then for response_format, then answered")
	assert.NotNil(t, reqs[0].JSON["stream_options"])
	assert.Nil(t, reqs[1].JSON["stream_options"])
	assert.NotEmpty(t, reqs[1].Chat.ResponseFormat)
	assert.Nil(t, reqs[2].JSON["stream_options"])
	assert.Empty(t, reqs[2].Chat.ResponseFormat)

	_, _, err = collect(t, chat.CompleteStream(context.Background(), jsonRequest()))
	require.NoError(t, err)
	require.Len(t, srv.ChatRequests(), 4, "the second stream skips both at once")
	assert.Equal(t, 2, strings.Count(log.String(), "refuses a request field"), "each field logged once: %s", log)
	assert.Contains(t, chat.Refused()["stream_options"], fakeopenai.NoStreamUsageMessage, "read from vLLM's top-level error shape")

	_, err = chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("hi")}})
	require.NoError(t, err)
	assert.Len(t, srv.ChatRequests(), 5)
}

func TestRefusalsAreLearntOnceUnderConcurrentUse(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithoutJSONMode())
	srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.JSON(`{"a":1}`) })
	chat, log := loggedChat(t, srv)

	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, err := chat.Complete(context.Background(), jsonRequest())
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, len(srv.ChatRequests()), 2*n)
	assert.Equal(t, 1, strings.Count(log.String(), "refuses a request field"), "logged once: %s", log)

	before := len(srv.ChatRequests())
	_, err := chat.Complete(context.Background(), jsonRequest())
	require.NoError(t, err)
	assert.Len(t, srv.ChatRequests(), before+1)
}

// TestRefusalsOfRealServers replays the error answers real servers give
// to a feature they lack, and answers that only look like one.
func TestRefusalsOfRealServers(t *testing.T) {
	const (
		useJSON = iota
		useSchema
		useTools
		useStream
	)
	cases := []struct {
		name   string
		use    int
		status int
		body   string
		want   string // "retried", "tools", or "failed" (no retry, nothing learnt)
	}{
		{"LM Studio refuses json_object with a string error", useJSON, 400,
			`{"error":"'response_format.type' must be 'json_schema' or 'text'"}`, "retried"},
		{"TGI refuses json_object", useJSON, 422,
			`{"error":"Failed to deserialize the JSON body: response_format: unknown variant json_object","error_type":"validation"}`, "retried"},
		{"a bodiless 400 to a JSON request", useJSON, 400, ``, "retried"},
		{"Ollama refuses tools", useTools, 400,
			`{"error":{"message":"registry.ollama.ai/library/gemma3:4b does not support tools","type":"api_error","param":null,"code":null}}`, "tools"},
		{"vLLM without auto tool choice", useTools, 400,
			`{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}`, "tools"},
		{"llama.cpp server without --jinja", useTools, 500,
			`{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}`, "tools"},
		{"OpenAI-style unknown stream_options", useStream, 400,
			`{"error":{"message":"Unknown parameter: 'stream_options'.","type":"invalid_request_error","param":"stream_options","code":"unknown_parameter"}}`, "retried"},
		{"FastAPI validation of stream_options", useStream, 422,
			`{"detail":[{"type":"extra_forbidden","loc":["body","stream_options","include_usage"],"msg":"Extra inputs are not permitted","input":true}]}`, "retried"},
		{"a bad tool name is no refusal of tools", useTools, 400,
			`{"error":{"message":"Invalid 'tools[0].function.name': string does not match pattern.","type":"invalid_request_error","param":"tools[0].function.name","code":"invalid_value"}}`, "failed"},
		{"a long prompt is no refusal of JSON mode", useJSON, 400,
			`{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, "failed"},
		{"a bad schema is no refusal of structured output", useSchema, 400,
			`{"error":{"message":"Invalid schema for response_format 'r': schema must be a JSON Schema of 'type: \"object\"', got 'type: \"array\"'.","type":"invalid_request_error","param":"response_format","code":null}}`, "failed"},
		{"an old Azure API version refuses json_schema", useSchema, 400,
			`{"error":{"code":"BadRequest","message":"response_format value as json_schema is enabled only for api versions 2024-08-01-preview and later"}}`, "retried"},
		{"a server error naming JSON without refusing it", useJSON, 500,
			`{"error":{"message":"json_object grammar compilation crashed","type":"server_error"}}`, "failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeopenai.New(t)
			srv.QueueAny(fakeopenai.Raw(tc.status, "application/json", tc.body))
			srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Text(`{"ok":true}`) })
			cfg := compatible(srv)
			cfg.MaxRetries = -1 // the SDK would retry a 500 first
			cfg.Logger = slog.New(slog.DiscardHandler)
			chat := newChat(t, cfg)

			req := jsonRequest()
			field := "response_format:json_object"
			switch tc.use {
			case useTools:
				req = &agent.ChatRequest{Messages: req.Messages, Tools: []agent.Tool{weatherTool(t, nil)}}
				field = "tools"
			case useStream:
				req = &agent.ChatRequest{Messages: req.Messages}
				field = "stream_options"
			case useSchema:
				req.ResponseFormat = &agent.ResponseFormat{Type: agent.JSONSchema, Name: "r", Schema: &jsonschema.Schema{Type: "object"}}
				field = "response_format:json_schema"
			}
			var err error
			if tc.use == useStream {
				_, _, err = collect(t, chat.CompleteStream(context.Background(), req))
			} else {
				_, err = chat.Complete(context.Background(), req)
			}

			switch tc.want {
			case "retried":
				require.NoError(t, err)
				assert.Len(t, srv.ChatRequests(), 2)
				assert.Contains(t, chat.Refused(), field)
			case "tools":
				require.ErrorIs(t, err, agent.ErrToolsUnsupported)
				assert.Len(t, srv.ChatRequests(), 1)
				assert.Contains(t, chat.Refused(), "tools")
			case "failed":
				require.Error(t, err)
				assert.False(t, errors.Is(err, agent.ErrToolsUnsupported), "%v", err)
				assert.Len(t, srv.ChatRequests(), 1, "not retried")
				assert.Empty(t, chat.Refused())
			}
			if tc.want != "retried" && tc.body != "" {
				assert.Contains(t, err.Error(), strconv.Itoa(tc.status), "the status is named")
			}
		})
	}
}

func TestARetryThatFailsTooLearnsNothing(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueAny(fakeopenai.Raw(400, "application/json", ``), fakeopenai.Raw(400, "application/json", ``))
	chat := newChat(t, compatible(srv))

	_, err := chat.Complete(context.Background(), jsonRequest())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "400")
	assert.Len(t, srv.ChatRequests(), 2, "one retry without response_format")
	assert.Empty(t, chat.Refused(), "the retry failed as well: the server was not refusing JSON mode")

	srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.JSON(`{}`) })
	_, err = chat.Complete(context.Background(), jsonRequest())
	require.NoError(t, err)
	reqs := srv.ChatRequests()
	assert.NotEmpty(t, reqs[len(reqs)-1].Chat.ResponseFormat, "JSON mode is still asked for")
}

func TestAStringErrorBodyKeepsItsStatusAndMessage(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueAny(fakeopenai.Raw(http.StatusBadRequest, "application/json", `{"error":"model is still loading"}`))
	chat := newChat(t, compatible(srv))
	_, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.UserText("hi")}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "400 Bad Request")
	assert.Contains(t, err.Error(), "model is still loading")
}

// A server may refuse structured output and take JSON mode (an Azure API
// version that predates json_schema), or the reverse (LM Studio): the two
// refusals are kept apart.
func TestJSONSchemaAndJSONModeAreRefusedApart(t *testing.T) {
	srv := fakeopenai.New(t)
	srv.QueueAny(fakeopenai.Raw(400, "application/json",
		`{"error":{"code":"BadRequest","message":"response_format value as json_schema is enabled only for api versions 2024-08-01-preview and later"}}`))
	srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.JSON(`{"a":1}`) })
	chat := newChat(t, compatible(srv))
	schema := &agent.ResponseFormat{Type: agent.JSONSchema, Schema: &jsonschema.Schema{Type: "object"}}
	msgs := []agent.Message{agent.UserText("JSON, please.")}

	for _, rf := range []*agent.ResponseFormat{schema, {Type: agent.JSONObject}, schema} {
		_, err := chat.Complete(context.Background(), &agent.ChatRequest{Messages: msgs, ResponseFormat: rf})
		require.NoError(t, err)
	}
	var formats []string
	for _, r := range srv.ChatRequests() {
		var f struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(r.Chat.ResponseFormat, &f)
		formats = append(formats, f.Type)
	}
	assert.Equal(t, []string{"json_schema", "", "json_object", ""}, formats,
		"json_schema refused and retried; JSON mode still asked for; json_schema left out at once")
	assert.Equal(t, []string{"response_format:json_schema"}, slices.Collect(maps.Keys(chat.Refused())))
}
