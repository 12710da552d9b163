package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
)

// Request is a Responses create request, parsed and translated.
//
// The fields below are what a gateway acts on; the Chat Completions body
// itself is built by ChatBody.
type Request struct {
	// Model is the model the request names.
	Model string
	// Stream is true when the client asked for server-sent events.
	Stream bool
	// Instructions is the request's system instructions, or empty.
	Instructions string
	// Input is the request's input as agent messages, in order: the turn
	// to record. Function calls become an assistant message's ToolCalls
	// and their outputs tool messages; images and files are not carried.
	Input []agent.Message
	// User is the request's user field, or empty.
	User string
	// Metadata is the request's metadata, or nil. It is echoed in the
	// response but not sent upstream: OpenAI's Chat Completions accepts
	// metadata only with store: true.
	Metadata map[string]string

	// The Responses-only fields, which never reach the upstream.

	// PreviousResponseID names the response this one continues, or is
	// empty. The upstream keeps no chain: the gateway supplies the earlier
	// turns, through ChatBody's prepend argument.
	PreviousResponseID string
	// Store is false when the client asked the response not to be stored
	// ("store": false); true otherwise, as in the Responses API.
	Store bool
	// Conversation is the id of the conversation the request names
	// (a string or an object with an id), or empty.
	Conversation string
	// Include lists the extra output the client asked for.
	// "message.output_text.logprobs" is honoured; the others name output
	// of hosted tools and reasoning, which a Chat Completions upstream
	// does not produce.
	Include []string
	// Truncation is "auto" or "disabled" (the default) as the client sent it.
	Truncation string
	// Withheld holds the other Responses-only fields the request carried
	// (max_tool_calls, context_management, background when false), which
	// are not sent upstream and have no effect.
	Withheld map[string]json.RawMessage

	// Passthrough holds the fields this package does not know, which
	// ChatBody sends upstream verbatim (service_tier, prompt_cache_key,
	// seed…). A gateway deletes the keys that are its own (an API
	// extension such as memory_config) before calling ChatBody.
	Passthrough map[string]json.RawMessage

	chat     map[string]json.RawMessage // the translated fields, without messages
	messages []chatMessage              // instructions, then the translated input
	echo     echo                       // what the response object echoes
}

// ParseRequest parses the body of a POST /v1/responses request and
// translates it for a Chat Completions upstream. Errors wrap ErrInvalid
// (malformed request) or ErrUnsupported (a feature Chat Completions lacks)
// and name the field, input item or tool at fault.
func ParseRequest(body []byte) (*Request, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("%w: request body is not a JSON object: %v", ErrInvalid, err)
	}
	if raw == nil {
		return nil, fmt.Errorf("%w: request body is null, want a JSON object", ErrInvalid)
	}
	r := &Request{
		Store:       true,
		Passthrough: make(map[string]json.RawMessage),
		Withheld:    make(map[string]json.RawMessage),
		chat:        make(map[string]json.RawMessage),
		echo:        defaultEcho(),
	}
	known := make(map[string]bool, len(fields))
	for _, f := range fields {
		known[f.name] = true
		v, ok := raw[f.name]
		if !ok || isNull(v) {
			continue
		}
		if err := f.parse(r, v); err != nil {
			return nil, err
		}
	}
	if r.Model == "" {
		return nil, fmt.Errorf("%w: model is required", ErrInvalid)
	}
	if _, ok := r.chat["tools"]; !ok {
		// OpenAI's Chat Completions refuses these without tools; without
		// tools they mean nothing.
		delete(r.chat, "tool_choice")
		delete(r.chat, "parallel_tool_calls")
	}
	for k, v := range raw {
		if !known[k] {
			r.Passthrough[k] = v
		}
	}
	return r, nil
}

// ChatBody returns the Chat Completions request body: the translated
// fields, the Passthrough fields, and the messages — the instructions as a
// system message, then prepend (a gateway's memory block and the earlier
// turns of the conversation), then the request's input. A prepended
// message must have a valid role, and a tool message a ToolCallID.
func (r *Request) ChatBody(prepend ...agent.Message) ([]byte, error) {
	msgs := make([]chatMessage, 0, len(r.messages)+len(prepend))
	n := 0
	if r.Instructions != "" {
		msgs, n = append(msgs, r.messages[0]), 1
	}
	for i, m := range prepend {
		cm, err := fromAgent(m)
		if err != nil {
			return nil, fmt.Errorf("prepended message %d: %w", i, err)
		}
		msgs = append(msgs, cm)
	}
	msgs = append(msgs, r.messages[n:]...)
	body := make(map[string]json.RawMessage, len(r.chat)+len(r.Passthrough)+1)
	for k, v := range r.Passthrough {
		body[k] = v
	}
	for k, v := range r.chat {
		body[k] = v
	}
	m, err := json.Marshal(msgs)
	if err != nil {
		return nil, fmt.Errorf("responses: encoding messages: %w", err)
	}
	body["messages"] = m
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("responses: encoding chat body: %w", err)
	}
	return b, nil
}

// fromAgent turns an agent message into a Chat Completions message.
func fromAgent(m agent.Message) (chatMessage, error) {
	if !m.Role.Valid() {
		return chatMessage{}, fmt.Errorf("%w: role %q", ErrInvalid, m.Role)
	}
	if m.Role == agent.RoleTool && m.ToolCallID == "" {
		return chatMessage{}, fmt.Errorf("%w: tool message without a tool call id", ErrInvalid)
	}
	cm := chatMessage{Role: string(m.Role), Name: m.Name, ToolCallID: m.ToolCallID, Content: jsonString(m.Text)}
	for _, tc := range m.ToolCalls {
		args := string(tc.Arguments)
		if args == "" {
			args = "{}"
		}
		cm.ToolCalls = append(cm.ToolCalls, chatToolCall{ID: tc.ID, Type: "function", Function: chatFunction{Name: tc.Name, Arguments: args}})
	}
	if m.Text == "" && len(m.ToolCalls) > 0 {
		cm.Content = jsonNull
	}
	return cm, nil
}

// chatMessage is one message of a Chat Completions request.
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name,omitempty"`
	ToolCalls  []chatToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// chatToolCall is a function call of a Chat Completions assistant message.
type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

// chatFunction is the function a chatToolCall names, with its arguments text.
type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

var jsonNull = json.RawMessage("null")

// isNull reports whether v is JSON null.
func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), jsonNull) }

// jsonString returns s as a JSON string.
func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a string always marshals
	return b
}

// mustJSON marshals v, which is built by this package and always marshals.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("responses: marshalling %T: %v", v, err))
	}
	return b
}

// decode unmarshals a field's value, naming the field in the error.
func decode(name string, v json.RawMessage, dst any, want string) error {
	if err := json.Unmarshal(v, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("%w: %s.%s is %s, want %s", ErrInvalid, name, te.Field, article(te.Value), article(kind(te.Type)))
		}
		return fmt.Errorf("%w: %s must be %s, got %s", ErrInvalid, name, want, abbrev(v))
	}
	return nil
}

// objectError describes why v did not decode into an object of kind what:
// the field of the wrong type, when that was it, or v itself.
func objectError(what string, v json.RawMessage, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("%w: %s is %s, want %s", ErrInvalid, te.Field, article(te.Value), article(kind(te.Type)))
	}
	return fmt.Errorf("%w: want %s object, got %s", ErrInvalid, what, abbrev(v))
}

// kind names the JSON kind a Go type decodes from.
func kind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	}
	return t.String()
}

// article prefixes a JSON kind with "a" or "an".
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// abbrev returns v shortened for an error message.
func abbrev(v json.RawMessage) string {
	const max = 40
	s := string(bytes.TrimSpace(v))
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
