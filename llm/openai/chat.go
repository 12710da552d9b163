package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"unicode"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agentmemory/agentmemory/agent"
)

// DefaultSchemaName names a JSON-schema response format whose Name is empty.
const DefaultSchemaName = "response"

// Chat is an agent.ChatClient on the Chat Completions API of OpenAI, Azure
// OpenAI or an OpenAI-compatible server. It is safe for concurrent use.
type Chat struct {
	svc        openai.ChatCompletionService
	model      string
	tokenLimit TokenLimit
	service    Service
	endpoint   string
	log        *slog.Logger
	refusals   refusals
}

var _ agent.ChatClient = (*Chat)(nil)

// NewChat returns a chat client for cfg.ChatModel. It fails with an error
// wrapping ErrConfig that names the missing or inconsistent field.
func NewChat(cfg Config) (*Chat, error) {
	if strings.TrimSpace(cfg.ChatModel) == "" {
		what := "model"
		if cfg.Service() == ServiceAzure {
			what = "deployment name"
		}
		return nil, configErr("ChatModel is empty; set the chat %s", what)
	}
	opts, err := cfg.options()
	if err != nil {
		return nil, err
	}
	return &Chat{
		svc:        openai.NewChatCompletionService(opts...),
		model:      cfg.ChatModel,
		tokenLimit: cfg.tokenLimit(),
		service:    cfg.Service(),
		endpoint:   cfg.Endpoint(),
		log:        cmp.Or(cfg.Logger, slog.Default()),
	}, nil
}

// Model returns the configured model (Azure: deployment) name.
func (c *Chat) Model() string { return c.model }

// Complete implements agent.ChatClient.
//
// A server that refuses the connection or whose host name does not
// resolve fails the call at once with an error wrapping ErrUnreachable
// that names the endpoint and the cause; other failures are retried as
// Config.MaxRetries says.
//
// Messages map to Chat Completions messages: Name becomes the "name" field
// on system, user and assistant messages (characters the API rejects —
// whitespace and <|\/> — become '_'); tool messages carry tool_call_id and
// no name; assistant tool calls are replayed with their ids. Tools become
// function tools whose parameters are the tool's JSON schema. A refusal is
// returned as the message text when the model gives no content.
//
// Tool-call arguments in the answer are made valid JSON: valid JSON is
// compacted, blank arguments become {}, and malformed text becomes a JSON
// string holding it (the tool then reports "want a JSON object" to the
// model). A tool call without an id gets "call_<completion id>_<index>".
//
// A server that refuses response_format or tools (see the package
// documentation, "Servers without JSON mode or tools") is remembered: the
// request is sent once more without response_format, and later requests
// leave it out; a request offering tools fails with an error wrapping
// agent.ErrToolsUnsupported, at once when the refusal is known.
func (c *Chat) Complete(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	if req == nil {
		return nil, errors.New("llm/openai: Complete: nil request")
	}
	if _, err := c.params(req); err != nil {
		return nil, err
	}
	what := fmt.Sprintf("chat completion (model %s)", c.model)
	var out *openai.ChatCompletion
	err := c.send(ctx, what, req, false, func(ctx context.Context, p openai.ChatCompletionNewParams, opts ...option.RequestOption) (err error) {
		out, err = c.svc.New(ctx, p, opts...)
		return err
	})
	if err != nil {
		return nil, err
	}
	resp, err := responseFromCompletion(out)
	if err != nil {
		return nil, fmt.Errorf("llm/openai: %s: %w", what, err)
	}
	return resp, nil
}

// attempt sends one request with the SDK, passing opts on.
type attempt func(ctx context.Context, p openai.ChatCompletionNewParams, opts ...option.RequestOption) error

// send sends req with do, under internal/reach's guard (see guarded),
// leaving out the features the server is known to refuse. When the server
// refuses a feature the request used (refusedFeature), the request is sent
// once more without it, and the refusal is remembered and logged when that
// succeeds; a refusal of tools is remembered at once and fails the call
// with agent.ErrToolsUnsupported, as does any later request offering
// tools, without being sent. stream adds stream_options.include_usage.
func (c *Chat) send(ctx context.Context, what string, req *agent.ChatRequest, stream bool, do attempt) error {
	used := usedFeatures(req, stream)
	if used&featureTools != 0 {
		if refusal := c.refusals.get(featureTools); refusal != nil {
			return fmt.Errorf("%w (known, request not sent): %w", agent.ErrToolsUnsupported, refusal)
		}
	}
	dropped := c.refusals.known(used)
	reasons := make(map[feature]error) // dropped on this call's own evidence
	for {
		params, err := c.params(without(req, dropped))
		if err != nil {
			return err
		}
		if stream && dropped&featureStreamUsage == 0 {
			params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		}
		var ans errorAnswer
		err = guarded(ctx, c.endpoint, func(ctx context.Context, report option.RequestOption) error {
			return do(ctx, params, report, ans.capture())
		})
		if err == nil {
			for f, why := range reasons {
				c.learnt(ctx, f, why)
			}
			return nil
		}
		err = refusalError(what, err, &ans)
		f, refused := refusedFeature(ans.status, ans.message(), used&^dropped)
		if !refused || ctx.Err() != nil {
			return err
		}
		if f == featureTools {
			for f, why := range reasons { // the server got past them
				c.learnt(ctx, f, why)
			}
			c.learnt(ctx, featureTools, err)
			return fmt.Errorf("%w: %w", agent.ErrToolsUnsupported, err)
		}
		dropped |= f
		reasons[f] = err
	}
}

// learnt records that the server refuses f, and logs it the first time.
func (c *Chat) learnt(ctx context.Context, f feature, why error) {
	if !c.refusals.learn(f, why) {
		return
	}
	then := "requests leave it out from now on"
	if f == featureTools {
		then = "requests offering tools fail with agent.ErrToolsUnsupported from now on"
	}
	c.log.WarnContext(ctx, "llm/openai: the server refuses a request field; "+then,
		"field", f.field(), "endpoint", c.endpoint, "model", c.model, "err", why)
}

func (c *Chat) params(req *agent.ChatRequest) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: c.model}
	if len(req.Messages) == 0 {
		return p, errors.New("llm/openai: Complete: request has no messages")
	}
	p.Messages = make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages))
	for i, m := range req.Messages {
		mp, err := messageParam(m)
		if err != nil {
			return p, fmt.Errorf("llm/openai: Complete: message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, mp)
	}
	for i, t := range req.Tools {
		tp, err := toolParam(t)
		if err != nil {
			return p, fmt.Errorf("llm/openai: Complete: tool %d: %w", i, err)
		}
		p.Tools = append(p.Tools, tp)
	}
	if req.ResponseFormat != nil {
		rf, err := responseFormatParam(req.ResponseFormat)
		if err != nil {
			return p, fmt.Errorf("llm/openai: Complete: %w", err)
		}
		p.ResponseFormat = rf
	}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	switch {
	case req.MaxTokens < 0:
		return p, fmt.Errorf("llm/openai: Complete: MaxTokens %d is negative", req.MaxTokens)
	case req.MaxTokens > 0 && c.tokenLimit == MaxTokens:
		p.MaxTokens = param.NewOpt(int64(req.MaxTokens))
	case req.MaxTokens > 0:
		p.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
	}
	return p, nil
}

func messageParam(m agent.Message) (openai.ChatCompletionMessageParamUnion, error) {
	name := participantName(m.Name)
	switch m.Role {
	case agent.RoleSystem:
		u := openai.SystemMessage(m.Text)
		if name != "" {
			u.OfSystem.Name = param.NewOpt(name)
		}
		return u, nil
	case agent.RoleUser:
		u := openai.UserMessage(m.Text)
		if name != "" {
			u.OfUser.Name = param.NewOpt(name)
		}
		return u, nil
	case agent.RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
		if m.Text != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = param.NewOpt(m.Text)
		}
		if name != "" {
			a.Name = param.NewOpt(name)
		}
		for j, tc := range m.ToolCalls {
			if tc.ID == "" || tc.Name == "" {
				return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("tool call %d: empty id or name", j)
			}
			args := string(tc.Arguments)
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	case agent.RoleTool:
		if m.ToolCallID == "" {
			return openai.ChatCompletionMessageParamUnion{}, errors.New("tool message without ToolCallID")
		}
		// The tool role has no name field; the call id links it to its call.
		return openai.ToolMessage(m.Text, m.ToolCallID), nil
	}
	return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
}

// participantName makes a message name acceptable to the API, which answers
// 400 to a name that does not match ^[^\s<|\\/>]+$: those characters become
// '_', and the name is cut to 64 characters.
func participantName(name string) string {
	if name == "" {
		return ""
	}
	var sb strings.Builder
	n := 0
	for _, r := range name {
		if n == 64 {
			break
		}
		switch {
		case r == '<' || r == '|' || r == '\\' || r == '/' || r == '>' || unicode.IsSpace(r):
			sb.WriteByte('_')
		default:
			sb.WriteRune(r)
		}
		n++
	}
	return sb.String()
}

func toolParam(t agent.Tool) (openai.ChatCompletionToolUnionParam, error) {
	if t == nil {
		return openai.ChatCompletionToolUnionParam{}, errors.New("nil tool")
	}
	params := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	if s := t.Schema(); s != nil {
		m, err := schemaMap(s)
		if err != nil {
			return openai.ChatCompletionToolUnionParam{}, fmt.Errorf("tool %s: %w", t.Name(), err)
		}
		params = m
	}
	def := shared.FunctionDefinitionParam{Name: t.Name(), Parameters: params}
	if d := t.Description(); d != "" {
		def.Description = param.NewOpt(d)
	}
	return openai.ChatCompletionFunctionTool(def), nil
}

// schemaMap turns a schema (any JSON-marshalable value) into the generic map
// the SDK sends as-is.
func schemaMap(s any) (map[string]any, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode JSON schema: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("JSON schema is not an object: %w", err)
	}
	return m, nil
}

func responseFormatParam(rf *agent.ResponseFormat) (openai.ChatCompletionNewParamsResponseFormatUnion, error) {
	var u openai.ChatCompletionNewParamsResponseFormatUnion
	switch rf.Type {
	case agent.JSONObject:
		u.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
	case agent.JSONSchema:
		if rf.Schema == nil {
			return u, errors.New("response format json_schema without a Schema")
		}
		m, err := schemaMap(rf.Schema)
		if err != nil {
			return u, fmt.Errorf("response format: %w", err)
		}
		name := rf.Name
		if name == "" {
			name = DefaultSchemaName
		}
		js := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: name, Schema: m}
		if rf.Strict {
			js.Strict = param.NewOpt(true)
		}
		u.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}
	default:
		return u, fmt.Errorf("unknown response format type %q", rf.Type)
	}
	return u, nil
}

// responseFromCompletion turns the server's answer into an agent response.
// Everything in it is untrusted.
func responseFromCompletion(cc *openai.ChatCompletion) (*agent.ChatResponse, error) {
	if cc == nil || len(cc.Choices) == 0 {
		return nil, errors.New("response has no choices")
	}
	ch := cc.Choices[0]
	msg := agent.Message{Role: agent.RoleAssistant, Text: ch.Message.Content}
	if msg.Text == "" && ch.Message.Refusal != "" {
		msg.Text = ch.Message.Refusal
	}
	for i, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			return nil, fmt.Errorf("tool call %d has unsupported type %q", i, tc.Type)
		}
		if tc.Function.Name == "" {
			return nil, fmt.Errorf("tool call %d has no function name", i)
		}
		id := tc.ID
		if id == "" {
			// Some compatible servers omit ids; the tool result must carry one.
			id = fmt.Sprintf("call_%s_%d", cc.ID, i)
		}
		msg.ToolCalls = append(msg.ToolCalls, agent.ToolCall{
			ID:        id,
			Name:      tc.Function.Name,
			Arguments: agent.ToolArguments(tc.Function.Arguments),
		})
	}
	return &agent.ChatResponse{
		Message: msg,
		Usage: agent.Usage{
			PromptTokens:     int(cc.Usage.PromptTokens),
			CompletionTokens: int(cc.Usage.CompletionTokens),
			TotalTokens:      int(cc.Usage.TotalTokens),
		},
		FinishReason: ch.FinishReason,
		Model:        cc.Model,
	}, nil
}

// wrapAPIError adds the server's error message to the SDK's error, whose
// text is only the status, except for 401 and 403 answers, whose message may
// echo part of a credential. errors.As still finds *openai.Error, and
// errors.Is finds context errors.
//
// A 404 answer also wraps ErrNotFound.
func wrapAPIError(what string, err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound {
		return fmt.Errorf("llm/openai: %s: %w: %w: %s", what, ErrNotFound, err, apiErr.Message)
	}
	if errors.As(err, &apiErr) && apiErr.Message != "" &&
		apiErr.StatusCode != http.StatusUnauthorized && apiErr.StatusCode != http.StatusForbidden {
		return fmt.Errorf("llm/openai: %s: %w: %s", what, err, apiErr.Message)
	}
	return fmt.Errorf("llm/openai: %s: %w", what, err)
}
