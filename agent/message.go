package agent

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Role is the author of a message.
type Role string

// The roles a Message can have.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Valid reports whether r is one of the four known roles.
func (r Role) Valid() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// Message is one message of a conversation.
//
// ID and CreatedAt are assigned by Agent.Run when empty, so a message keeps
// the same id from the moment it enters a session, through storage, to every
// later reload.
type Message struct {
	// ID is a stable identifier, unique within a session.
	ID string `json:"id,omitempty"`
	// Role is who wrote the message.
	Role Role `json:"role"`
	// Name optionally names the author (a speaker's name, say).
	Name string `json:"name,omitempty"`
	// Text is the message's text content.
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Source is the id of the ContextProvider that injected the message, or
	// empty for conversation messages. Providers use it to avoid storing
	// what another provider injected.
	Source string `json:"source,omitempty"`
	// CreatedAt is when the message entered the conversation.
	CreatedAt time.Time `json:"created_at,omitzero"`
}

// ToolCall is one function call requested by the model.
type ToolCall struct {
	// ID identifies the call; the tool message answering it carries the same id.
	ID string `json:"id"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Arguments is the JSON object the model produced. Its content is
	// untrusted, but it is always valid JSON: a ChatClient normalises the
	// model's text with ToolArguments, so a Message always marshals and the
	// tool reports bad arguments.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ToolArguments turns a model's tool-call arguments text into the valid
// JSON a ToolCall carries, so that the call survives json.Marshal (a
// session is persisted as JSON): valid JSON is compacted; blank text
// becomes {}; anything else becomes a JSON string holding the text, which
// a tool then rejects as not an object, so the model learns its arguments
// were malformed. ChatClient implementations use it.
func ToolArguments(text string) json.RawMessage {
	t := bytes.TrimSpace([]byte(text))
	if len(t) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(t) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, t); err == nil {
			return buf.Bytes()
		}
	}
	b, _ := json.Marshal(text) // marshalling a string cannot fail
	return b
}

// Usage counts the tokens of one or more model calls.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Add returns the sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		TotalTokens:      u.TotalTokens + o.TotalTokens,
	}
}

// UserText returns a user message with the given text.
func UserText(text string) Message { return Message{Role: RoleUser, Text: text} }

// AssistantText returns an assistant message with the given text.
func AssistantText(text string) Message { return Message{Role: RoleAssistant, Text: text} }

// SystemText returns a system message with the given text.
func SystemText(text string) Message { return Message{Role: RoleSystem, Text: text} }

// ToolResult returns the tool message answering the call with id callID.
func ToolResult(callID, text string) Message {
	return Message{Role: RoleTool, ToolCallID: callID, Text: text}
}

// NewID returns a random 128-bit identifier in hex, suitable for message and
// session ids.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	return hex.EncodeToString(b[:])
}
