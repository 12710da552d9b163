package responses

import (
	"encoding/json"
	"fmt"
	"slices"
)

// field is a handler for one known request field. It is called only when
// the field is present and not null.
type field struct {
	name  string
	parse func(r *Request, v json.RawMessage) error
}

// fields are the known request fields, in the order they are checked, so
// that the first error reported does not depend on map order.
var fields = []field{
	{"model", parseModel},
	{"instructions", parseInstructions},
	{"input", parseInput},
	{"tools", parseTools},
	{"tool_choice", parseToolChoice},
	{"parallel_tool_calls", parseParallelToolCalls},
	{"text", parseText},
	{"max_output_tokens", parseMaxOutputTokens},
	{"temperature", parseTemperature},
	{"top_p", parseTopP},
	{"user", parseUser},
	{"metadata", parseMetadata},
	{"reasoning", parseReasoning},
	{"stream", parseStream},
	{"stream_options", parseStreamOptions},
	{"top_logprobs", parseTopLogprobs},
	{"include", parseInclude},
	{"store", parseStore},
	{"previous_response_id", parsePreviousResponseID},
	{"conversation", parseConversation},
	{"truncation", parseTruncation},
	{"background", parseBackground},
	{"prompt", parsePrompt},
	{"max_tool_calls", withhold("max_tool_calls")},
	{"context_management", withhold("context_management")},
}

func parseModel(r *Request, v json.RawMessage) error {
	if err := decode("model", v, &r.Model, "a string"); err != nil {
		return err
	}
	r.chat["model"] = v
	return nil
}

func parseInstructions(r *Request, v json.RawMessage) error {
	if err := decode("instructions", v, &r.Instructions, "a string"); err != nil {
		return err
	}
	r.echo.Instructions = v
	if r.Instructions != "" { // parsed before input, so first
		r.messages = append(r.messages, chatMessage{Role: "system", Content: jsonString(r.Instructions)})
	}
	return nil
}

func parseTools(r *Request, v json.RawMessage) error {
	var tools []json.RawMessage
	if err := decode("tools", v, &tools, "an array"); err != nil {
		return err
	}
	chat := make([]json.RawMessage, 0, len(tools))
	for i, t := range tools {
		ct, err := chatTool(t)
		if err != nil {
			return fmt.Errorf("tools[%d]: %w", i, err)
		}
		chat = append(chat, ct)
	}
	r.echo.Tools = v
	if len(chat) > 0 {
		r.chat["tools"] = mustJSON(chat)
	}
	return nil
}

// responsesTool is a tool of a Responses request; function tools are
// flattened: their name, description and parameters sit beside the type.
type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description *string         `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// chatTool translates one Responses tool into a Chat Completions tool.
func chatTool(v json.RawMessage) (json.RawMessage, error) {
	var t responsesTool
	if err := json.Unmarshal(v, &t); err != nil {
		return nil, objectError("a tool", v, err)
	}
	switch t.Type {
	case "function":
	case "":
		return nil, fmt.Errorf("%w: tool has no type", ErrInvalid)
	default:
		return nil, fmt.Errorf("%w: tool type %q: a Chat Completions upstream runs only function tools", ErrUnsupported, t.Type)
	}
	if t.Name == "" {
		return nil, fmt.Errorf("%w: function tool has no name", ErrInvalid)
	}
	fn := struct {
		Name        string          `json:"name"`
		Description *string         `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
		Strict      *bool           `json:"strict,omitempty"`
	}{t.Name, t.Description, t.Parameters, t.Strict}
	if isNull(fn.Parameters) {
		fn.Parameters = nil
	}
	return mustJSON(map[string]any{"type": "function", "function": fn}), nil
}

// namedTool is a tool named in a tool_choice.
type namedTool struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// chatFunctionChoice returns the Chat Completions form of a named function.
func chatFunctionChoice(t namedTool, where string) (map[string]any, error) {
	switch t.Type {
	case "function":
	case "":
		return nil, fmt.Errorf("%w: %s has no type", ErrInvalid, where)
	default:
		return nil, fmt.Errorf("%w: %s: tool type %q: a Chat Completions upstream runs only function tools", ErrUnsupported, where, t.Type)
	}
	if t.Name == "" {
		return nil, fmt.Errorf("%w: %s names no function", ErrInvalid, where)
	}
	return map[string]any{"type": "function", "function": map[string]string{"name": t.Name}}, nil
}

func parseToolChoice(r *Request, v json.RawMessage) error {
	r.echo.ToolChoice = v
	var mode string
	if json.Unmarshal(v, &mode) == nil {
		switch mode {
		case "none", "auto", "required":
			r.chat["tool_choice"] = v
			return nil
		}
		return fmt.Errorf("%w: tool_choice %q, want none, auto, required or an object", ErrInvalid, mode)
	}
	var c struct {
		Type  string      `json:"type"`
		Name  string      `json:"name"`
		Mode  string      `json:"mode"`
		Tools []namedTool `json:"tools"`
	}
	if err := decode("tool_choice", v, &c, "a string or an object"); err != nil {
		return err
	}
	if c.Type == "allowed_tools" {
		tools := make([]map[string]any, 0, len(c.Tools))
		for i, t := range c.Tools {
			ct, err := chatFunctionChoice(t, fmt.Sprintf("tool_choice.tools[%d]", i))
			if err != nil {
				return err
			}
			tools = append(tools, ct)
		}
		r.chat["tool_choice"] = mustJSON(map[string]any{
			"type":          "allowed_tools",
			"allowed_tools": map[string]any{"mode": c.Mode, "tools": tools},
		})
		return nil
	}
	ct, err := chatFunctionChoice(namedTool{Type: c.Type, Name: c.Name}, "tool_choice")
	if err != nil {
		return err
	}
	r.chat["tool_choice"] = mustJSON(ct)
	return nil
}

func parseParallelToolCalls(r *Request, v json.RawMessage) error {
	var b bool
	if err := decode("parallel_tool_calls", v, &b, "a boolean"); err != nil {
		return err
	}
	r.echo.ParallelToolCalls = b
	r.chat["parallel_tool_calls"] = v
	return nil
}

func parseText(r *Request, v json.RawMessage) error {
	var t struct {
		Format    json.RawMessage `json:"format"`
		Verbosity json.RawMessage `json:"verbosity"`
	}
	if err := decode("text", v, &t, "an object"); err != nil {
		return err
	}
	r.echo.Text = v
	if len(t.Verbosity) > 0 && !isNull(t.Verbosity) {
		r.chat["verbosity"] = t.Verbosity
	}
	if len(t.Format) == 0 || isNull(t.Format) {
		return nil
	}
	var f struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Schema      json.RawMessage `json:"schema"`
		Description *string         `json:"description"`
		Strict      *bool           `json:"strict"`
	}
	if err := decode("text.format", t.Format, &f, "an object"); err != nil {
		return err
	}
	switch f.Type {
	case "text":
		// Plain text is the default; saying nothing suits the servers
		// that know no response_format.
	case "json_object":
		r.chat["response_format"] = json.RawMessage(`{"type":"json_object"}`)
	case "json_schema":
		if f.Name == "" {
			return fmt.Errorf("%w: text.format of type json_schema has no name", ErrInvalid)
		}
		if len(f.Schema) == 0 || isNull(f.Schema) {
			return fmt.Errorf("%w: text.format of type json_schema has no schema", ErrInvalid)
		}
		js := struct {
			Name        string          `json:"name"`
			Schema      json.RawMessage `json:"schema"`
			Description *string         `json:"description,omitempty"`
			Strict      *bool           `json:"strict,omitempty"`
		}{f.Name, f.Schema, f.Description, f.Strict}
		r.chat["response_format"] = mustJSON(map[string]any{"type": "json_schema", "json_schema": js})
	default:
		return fmt.Errorf("%w: text.format type %q, want text, json_object or json_schema", ErrInvalid, f.Type)
	}
	return nil
}

func parseMaxOutputTokens(r *Request, v json.RawMessage) error {
	var n int64
	if err := decode("max_output_tokens", v, &n, "an integer"); err != nil {
		return err
	}
	if n <= 0 {
		return fmt.Errorf("%w: max_output_tokens must be positive, got %d", ErrInvalid, n)
	}
	r.echo.MaxOutputTokens = v
	r.chat["max_completion_tokens"] = v
	return nil
}

func parseTemperature(r *Request, v json.RawMessage) error {
	if err := decode("temperature", v, &r.echo.Temperature, "a number"); err != nil {
		return err
	}
	r.chat["temperature"] = v
	return nil
}

func parseTopP(r *Request, v json.RawMessage) error {
	if err := decode("top_p", v, &r.echo.TopP, "a number"); err != nil {
		return err
	}
	r.chat["top_p"] = v
	return nil
}

func parseUser(r *Request, v json.RawMessage) error {
	if err := decode("user", v, &r.User, "a string"); err != nil {
		return err
	}
	r.echo.User = v
	r.chat["user"] = v
	return nil
}

func parseMetadata(r *Request, v json.RawMessage) error {
	if err := decode("metadata", v, &r.Metadata, "an object of strings"); err != nil {
		return err
	}
	// Not sent upstream: OpenAI's Chat Completions refuses metadata
	// without store: true, and storing the completion there is not what
	// the client asked for. The response object echoes it.
	r.echo.Metadata = v
	return nil
}

func parseReasoning(r *Request, v json.RawMessage) error {
	var re struct {
		Effort json.RawMessage `json:"effort"`
	}
	if err := decode("reasoning", v, &re, "an object"); err != nil {
		return err
	}
	r.echo.Reasoning = v
	if len(re.Effort) > 0 && !isNull(re.Effort) {
		var s string
		if err := decode("reasoning.effort", re.Effort, &s, "a string"); err != nil {
			return err
		}
		r.chat["reasoning_effort"] = re.Effort
	}
	return nil
}

func parseStream(r *Request, v json.RawMessage) error {
	if err := decode("stream", v, &r.Stream, "a boolean"); err != nil {
		return err
	}
	if r.Stream {
		r.chat["stream"] = v
		// The final event carries the usage: always ask for it.
		// parseStreamOptions, run next, adds the client's options.
		r.chat["stream_options"] = json.RawMessage(`{"include_usage":true}`)
	}
	return nil
}

func parseStreamOptions(r *Request, v json.RawMessage) error {
	var so struct {
		IncludeObfuscation *bool `json:"include_obfuscation"`
	}
	if err := decode("stream_options", v, &so, "an object"); err != nil {
		return err
	}
	if !r.Stream {
		return nil // Chat Completions refuses stream_options without stream.
	}
	m := map[string]any{"include_usage": true}
	if so.IncludeObfuscation != nil {
		m["include_obfuscation"] = *so.IncludeObfuscation
	}
	r.chat["stream_options"] = mustJSON(m)
	return nil
}

func parseTopLogprobs(r *Request, v json.RawMessage) error {
	var n int
	if err := decode("top_logprobs", v, &n, "an integer"); err != nil {
		return err
	}
	r.echo.TopLogprobs = n
	r.chat["logprobs"] = json.RawMessage("true")
	r.chat["top_logprobs"] = v
	return nil
}

// includeLogprobs is the include value that asks for output logprobs.
const includeLogprobs = "message.output_text.logprobs"

func parseInclude(r *Request, v json.RawMessage) error {
	if err := decode("include", v, &r.Include, "an array of strings"); err != nil {
		return err
	}
	if slices.Contains(r.Include, includeLogprobs) {
		r.chat["logprobs"] = json.RawMessage("true")
	}
	return nil
}

func parseStore(r *Request, v json.RawMessage) error {
	if err := decode("store", v, &r.Store, "a boolean"); err != nil {
		return err
	}
	r.echo.Store = r.Store
	return nil
}

func parsePreviousResponseID(r *Request, v json.RawMessage) error {
	if err := decode("previous_response_id", v, &r.PreviousResponseID, "a string"); err != nil {
		return err
	}
	r.echo.PreviousResponseID = v
	return nil
}

func parseConversation(r *Request, v json.RawMessage) error {
	if json.Unmarshal(v, &r.Conversation) == nil {
		return nil
	}
	var c struct {
		ID string `json:"id"`
	}
	if err := decode("conversation", v, &c, "a string or an object with an id"); err != nil {
		return err
	}
	r.Conversation = c.ID
	return nil
}

func parseTruncation(r *Request, v json.RawMessage) error {
	if err := decode("truncation", v, &r.Truncation, "a string"); err != nil {
		return err
	}
	if r.Truncation != "auto" && r.Truncation != "disabled" {
		return fmt.Errorf("%w: truncation %q, want auto or disabled", ErrInvalid, r.Truncation)
	}
	r.echo.Truncation = r.Truncation
	return nil
}

func parseBackground(r *Request, v json.RawMessage) error {
	var b bool
	if err := decode("background", v, &b, "a boolean"); err != nil {
		return err
	}
	if b {
		return fmt.Errorf("%w: background: true (a background response is polled from OpenAI's servers)", ErrUnsupported)
	}
	r.Withheld["background"] = v
	return nil
}

func parsePrompt(_ *Request, _ json.RawMessage) error {
	return fmt.Errorf("%w: prompt (a prompt template is stored on OpenAI's servers)", ErrUnsupported)
}

// withhold returns the handler of a Responses-only field that is kept
// from the upstream and has no effect.
func withhold(name string) func(*Request, json.RawMessage) error {
	return func(r *Request, v json.RawMessage) error {
		r.Withheld[name] = v
		return nil
	}
}
