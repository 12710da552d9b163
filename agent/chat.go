package agent

import (
	"context"
	"errors"

	"github.com/google/jsonschema-go/jsonschema"
)

// ErrToolsUnsupported reports a chat request that offered tools to a model
// or server that refuses tools (Ollama answers "… does not support tools",
// for one). A ChatClient returns an error wrapping it rather than an
// answer written without the tools, which the caller did not ask for: the
// caller decides what to do without them (retrieval, for one, falls back
// to its direct search). The same request without Tools may succeed.
var ErrToolsUnsupported = errors.New("agent: the model or server does not support tools")

// ChatClient sends one chat request to a model and returns its answer.
//
// Implementations live in llm/openai (OpenAI, Azure OpenAI and any
// OpenAI-compatible server), llm/langchain and llm/offline. A ChatClient must
// be safe for concurrent use and must honour ctx cancellation.
type ChatClient interface {
	Complete(ctx context.Context, req *ChatRequest) (*ChatResponse, error)
}

// ChatRequest is one request to a model.
type ChatRequest struct {
	// Messages is the whole prompt, system message first.
	Messages []Message
	// Tools the model may call; empty means none.
	Tools []Tool
	// ResponseFormat asks for JSON output; nil means plain text.
	ResponseFormat *ResponseFormat
	// Temperature, when non-nil, overrides the model's default.
	Temperature *float64
	// MaxTokens caps the answer's length; zero means the model's default.
	MaxTokens int
}

// ResponseFormatType selects the kind of structured output.
type ResponseFormatType string

const (
	// JSONObject asks for any valid JSON object (JSON mode).
	JSONObject ResponseFormatType = "json_object"
	// JSONSchema asks for a JSON object conforming to Schema (structured output).
	JSONSchema ResponseFormatType = "json_schema"
)

// ResponseFormat asks the model for JSON output.
type ResponseFormat struct {
	Type ResponseFormatType
	// Name names the schema; some servers require one for JSONSchema, and
	// a ChatClient supplies its own default when Name is empty.
	Name string
	// Schema is the expected shape, for JSONSchema.
	Schema *jsonschema.Schema
	// Strict asks the server to enforce Schema exactly, where supported.
	Strict bool
}

// ChatResponse is a model's answer to one ChatRequest.
type ChatResponse struct {
	// Message is the assistant message: text, tool calls or both.
	Message Message
	// Usage is the token count reported by the server.
	Usage Usage
	// FinishReason is the server's reason for stopping ("stop", "tool_calls", "length"…).
	FinishReason string
	// Model is the model that answered, as reported by the server.
	Model string
}
