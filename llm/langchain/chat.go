package langchain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/agentmemory/agentmemory/agent"
)

// ErrConfig reports an unusable configuration; the message names the field.
var ErrConfig = errors.New("llm/langchain: invalid config")

// ErrUnsupported reports a request or an answer that langchaingo cannot
// carry (see ChatClient.Complete). It wraps errors.ErrUnsupported.
var ErrUnsupported = fmt.Errorf("llm/langchain: %w", errors.ErrUnsupported)

// ErrEmptyAnswer reports an answer with neither text nor tool calls. Through
// langchaingo this is how a refusal arrives: its openai client does not
// read the refusal field, so the text is lost before it reaches this
// package.
var ErrEmptyAnswer = errors.New("llm/langchain: empty answer")

func configErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...)
}

// ChatConfig configures a ChatClient. The zero value is usable: the
// llms.Model's own default model, no extra call options.
type ChatConfig struct {
	// Model, when set, is sent with llms.WithModel on every call, overriding
	// the llms.Model's default (so one llms.Model can serve both the chat
	// and the mini client), and is reported as ChatResponse.Model and in
	// errors: langchaingo does not report which model answered. Empty means
	// the llms.Model's default, and ChatResponse.Model is empty.
	Model string
	// Options are appended to every call after the options the request
	// maps to, so they may override them. Use them for backend-specific
	// settings, such as openai.WithLegacyMaxTokensField() for servers that
	// read max_tokens only.
	Options []llms.CallOption
}

// ChatClient is an agent.ChatClient on a github.com/tmc/langchaingo
// llms.Model. It is safe for concurrent use when the llms.Model is
// (langchaingo's openai, anthropic, ollama… clients are; llms/fake is not).
type ChatClient struct {
	llm   llms.Model
	model string
	opts  []llms.CallOption
	what  string // "chat completion (model m, *openai.LLM)", for errors
}

var _ agent.ChatClient = (*ChatClient)(nil)

// NewChatClient returns a chat client on llm. It fails with an error
// wrapping ErrConfig when llm is nil, cfg.Model has surrounding space or
// cfg.Options holds a nil option.
func NewChatClient(llm llms.Model, cfg ChatConfig) (*ChatClient, error) {
	if isNil(llm) {
		return nil, configErr("nil llms.Model")
	}
	if cfg.Model != strings.TrimSpace(cfg.Model) {
		return nil, configErr("Model %q has leading or trailing space", cfg.Model)
	}
	for i, o := range cfg.Options {
		if o == nil {
			return nil, configErr("Options[%d] is nil", i)
		}
	}
	what := fmt.Sprintf("chat completion (%T)", llm)
	if cfg.Model != "" {
		what = fmt.Sprintf("chat completion (model %s, %T)", cfg.Model, llm)
	}
	return &ChatClient{llm: llm, model: cfg.Model, opts: append([]llms.CallOption(nil), cfg.Options...), what: what}, nil
}

// Model returns the configured model name, or "" for the llms.Model's
// default.
func (c *ChatClient) Model() string { return c.model }

// Complete implements agent.ChatClient with one llms.Model.GenerateContent
// call.
//
// Messages map to llms.MessageContent: system, user and assistant text
// become a text part of a system, human and ai message; an assistant's tool
// calls become llms.ToolCall parts (type "function", arguments replayed as
// sent, blank as {}); a tool message becomes one llms.ToolCallResponse with
// its ToolCallID, Name and text. Tools are offered with llms.WithTools as
// function tools whose parameters are the tool's JSON schema. ResponseFormat
// JSONObject is llms.WithJSONMode; Temperature and MaxTokens are
// llms.WithTemperature and llms.WithMaxTokens, sent only when set.
//
// What cannot be mapped, and what happens instead:
//
//   - Message.Name on system, user and assistant messages is not sent:
//     llms.MessageContent has no author name. (Tool messages keep theirs,
//     in the ToolCallResponse.) The name is optional metadata, so this is
//     the one silent omission; Text is always sent.
//   - ResponseFormat JSONSchema fails with ErrUnsupported before any call:
//     llms.CallOptions has JSON mode but no per-call schema. Use JSONObject
//     and describe the shape in the prompt.
//   - An answer with neither text nor tool calls fails with ErrEmptyAnswer
//     naming the finish reason: a refusal arrives that way (langchaingo's
//     openai client drops the refusal field), and so does an answer cut
//     off before any text.
//   - A legacy function_call answer (FuncCall without ToolCalls) and tool
//     calls of a type other than "function" fail with ErrUnsupported.
//   - Images and other non-text parts have no place in agent.Message, so
//     none are ever sent; reasoning content and further choices of the
//     answer are ignored.
//
// Usage comes from the choice's GenerationInfo: PromptTokens (or
// InputTokens), CompletionTokens (or OutputTokens) and TotalTokens (or
// their sum), as langchaingo's backends report them; missing counts are
// zero. FinishReason is the choice's StopReason.
//
// Tool-call arguments in the answer are made valid JSON as llm/openai does:
// valid JSON is compacted, blank arguments become {}, and malformed text
// becomes a JSON string holding it (the tool then reports "want a JSON
// object" to the model). A tool call without an id gets "call_<random>_<index>".
//
// Errors are wrapped with "llm/langchain: chat completion (model …, type)";
// when ctx is done, the error also wraps ctx.Err(), since langchaingo's
// openai client replaces context errors with plain text. A panic in the
// llms.Model becomes an error: langchaingo's openai client panics on an
// answer with finish_reason "function_call" and no function_call, and an
// answer is untrusted input that must not crash a background worker.
func (c *ChatClient) Complete(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	if req == nil {
		return nil, errors.New("llm/langchain: Complete: nil request")
	}
	msgs, opts, err := c.request(req)
	if err != nil {
		return nil, err
	}
	out, err := guard(func() (*llms.ContentResponse, error) { return c.llm.GenerateContent(ctx, msgs, opts...) })
	if err != nil {
		return nil, wrapCallError(ctx, c.what, err)
	}
	resp, err := c.response(out)
	if err != nil {
		return nil, fmt.Errorf("llm/langchain: %s: %w", c.what, err)
	}
	return resp, nil
}

func (c *ChatClient) request(req *agent.ChatRequest) ([]llms.MessageContent, []llms.CallOption, error) {
	if len(req.Messages) == 0 {
		return nil, nil, errors.New("llm/langchain: Complete: request has no messages")
	}
	msgs := make([]llms.MessageContent, 0, len(req.Messages))
	for i, m := range req.Messages {
		mc, err := messageContent(m)
		if err != nil {
			return nil, nil, fmt.Errorf("llm/langchain: Complete: message %d: %w", i, err)
		}
		msgs = append(msgs, mc)
	}
	var opts []llms.CallOption
	if c.model != "" {
		opts = append(opts, llms.WithModel(c.model))
	}
	if len(req.Tools) > 0 {
		tools := make([]llms.Tool, 0, len(req.Tools))
		for i, t := range req.Tools {
			lt, err := tool(t)
			if err != nil {
				return nil, nil, fmt.Errorf("llm/langchain: Complete: tool %d: %w", i, err)
			}
			tools = append(tools, lt)
		}
		opts = append(opts, llms.WithTools(tools))
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case agent.JSONObject:
			opts = append(opts, llms.WithJSONMode())
		case agent.JSONSchema:
			return nil, nil, fmt.Errorf("%w: response format json_schema: langchaingo's call options have JSON mode only; use json_object", ErrUnsupported)
		default:
			return nil, nil, fmt.Errorf("llm/langchain: Complete: unknown response format type %q", rf.Type)
		}
	}
	if req.Temperature != nil {
		opts = append(opts, llms.WithTemperature(*req.Temperature))
	}
	switch {
	case req.MaxTokens < 0:
		return nil, nil, fmt.Errorf("llm/langchain: Complete: MaxTokens %d is negative", req.MaxTokens)
	case req.MaxTokens > 0:
		opts = append(opts, llms.WithMaxTokens(req.MaxTokens))
	}
	return msgs, append(opts, c.opts...), nil
}

func messageContent(m agent.Message) (llms.MessageContent, error) {
	switch m.Role {
	case agent.RoleSystem:
		return llms.TextParts(llms.ChatMessageTypeSystem, m.Text), nil
	case agent.RoleUser:
		return llms.TextParts(llms.ChatMessageTypeHuman, m.Text), nil
	case agent.RoleAssistant:
		mc := llms.MessageContent{Role: llms.ChatMessageTypeAI}
		if m.Text != "" || len(m.ToolCalls) == 0 {
			mc.Parts = append(mc.Parts, llms.TextPart(m.Text))
		}
		for j, tc := range m.ToolCalls {
			if tc.ID == "" || tc.Name == "" {
				return mc, fmt.Errorf("tool call %d: empty id or name", j)
			}
			args := string(tc.Arguments)
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			mc.Parts = append(mc.Parts, llms.ToolCall{
				ID:           tc.ID,
				Type:         "function",
				FunctionCall: &llms.FunctionCall{Name: tc.Name, Arguments: args},
			})
		}
		return mc, nil
	case agent.RoleTool:
		if m.ToolCallID == "" {
			return llms.MessageContent{}, errors.New("tool message without ToolCallID")
		}
		return llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
			llms.ToolCallResponse{ToolCallID: m.ToolCallID, Name: m.Name, Content: m.Text},
		}}, nil
	}
	return llms.MessageContent{}, fmt.Errorf("unknown role %q", m.Role)
}

func tool(t agent.Tool) (llms.Tool, error) {
	if t == nil {
		return llms.Tool{}, errors.New("nil tool")
	}
	params := map[string]any{"type": "object", "properties": map[string]any{}}
	if s := t.Schema(); s != nil {
		b, err := json.Marshal(s)
		if err != nil {
			return llms.Tool{}, fmt.Errorf("tool %s: encode JSON schema: %w", t.Name(), err)
		}
		params = nil
		if err := json.Unmarshal(b, &params); err != nil || params == nil {
			return llms.Tool{}, fmt.Errorf("tool %s: JSON schema is not an object", t.Name())
		}
	}
	return llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
		Name:        t.Name(),
		Description: t.Description(),
		Parameters:  params,
	}}, nil
}

// response turns the model's answer into an agent response. Everything in
// it is untrusted.
func (c *ChatClient) response(out *llms.ContentResponse) (*agent.ChatResponse, error) {
	if out == nil || len(out.Choices) == 0 || out.Choices[0] == nil {
		return nil, errors.New("response has no choices")
	}
	ch := out.Choices[0]
	msg := agent.Message{Role: agent.RoleAssistant, Text: ch.Content}
	if len(ch.ToolCalls) == 0 && ch.FuncCall != nil {
		return nil, fmt.Errorf("%w: legacy function_call answer (function %q); offer tools instead", ErrUnsupported, ch.FuncCall.Name)
	}
	var idPrefix string
	for i, tc := range ch.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			return nil, fmt.Errorf("%w: tool call %d has type %q", ErrUnsupported, i, tc.Type)
		}
		if tc.FunctionCall == nil || tc.FunctionCall.Name == "" {
			return nil, fmt.Errorf("tool call %d has no function name", i)
		}
		id := tc.ID
		if id == "" {
			// Some backends omit ids; the tool result must carry one.
			if idPrefix == "" {
				idPrefix = "call_" + agent.NewID()[:12]
			}
			id = fmt.Sprintf("%s_%d", idPrefix, i)
		}
		msg.ToolCalls = append(msg.ToolCalls, agent.ToolCall{
			ID:        id,
			Name:      tc.FunctionCall.Name,
			Arguments: agent.ToolArguments(tc.FunctionCall.Arguments),
		})
	}
	if msg.Text == "" && len(msg.ToolCalls) == 0 {
		return nil, fmt.Errorf("%w (finish reason %q): no text and no tool calls; a refusal looks like this, as langchaingo does not pass it on", ErrEmptyAnswer, ch.StopReason)
	}
	return &agent.ChatResponse{
		Message:      msg,
		Usage:        usage(ch.GenerationInfo),
		FinishReason: ch.StopReason,
		Model:        c.model,
	}, nil
}

// usage reads the token counts langchaingo's backends put in
// GenerationInfo: PromptTokens/CompletionTokens/TotalTokens (openai,
// googleai, ollama…) or InputTokens/OutputTokens (anthropic).
func usage(info map[string]any) agent.Usage {
	u := agent.Usage{
		PromptTokens:     count(info, "PromptTokens", "InputTokens"),
		CompletionTokens: count(info, "CompletionTokens", "OutputTokens"),
		TotalTokens:      count(info, "TotalTokens"),
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u
}

// count returns the first of keys holding a non-negative int, int32, int64
// or float64, or 0.
func count(info map[string]any, keys ...string) int {
	for _, k := range keys {
		var n int64
		switch v := info[k].(type) {
		case int:
			n = int64(v)
		case int32:
			n = int64(v)
		case int64:
			n = v
		case float64:
			n = int64(v)
		default:
			continue
		}
		if n >= 0 {
			return int(n)
		}
	}
	return 0
}

// wrapCallError adds context to an error from langchaingo. Its openai client
// turns a cancelled or expired context into the plain errors "request
// cancelled" and "request timeout: …"; when ctx is done the result also
// wraps ctx.Err(), so errors.Is(err, context.Canceled) holds as with
// llm/openai.
func wrapCallError(ctx context.Context, what string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("llm/langchain: %s: %w (%w)", what, err, cerr)
	}
	return fmt.Errorf("llm/langchain: %s: %w", what, err)
}

// isNil reports whether v is nil or a nil pointer, map, slice, func or
// channel inside an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// guard calls f and turns a panic in it into an error.
func guard[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			v, err = zero, fmt.Errorf("langchaingo panicked: %v", r)
		}
	}()
	return f()
}
