package fakeopenai

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// Kind is the endpoint a request was sent to.
type Kind string

// The endpoints the server answers.
const (
	KindChat       Kind = "chat.completions"
	KindEmbeddings Kind = "embeddings"
)

// Request is one request the server received, recorded before it was
// answered.
type Request struct {
	// Method, Path and Query are the request line; Header its headers.
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	// Body is the raw body; JSON is the body decoded into a generic value
	// (nil when the body is not valid JSON).
	Body []byte
	JSON map[string]any
	// Kind is the endpoint, or "" for a path the server does not know.
	Kind Kind
	// Deployment is the Azure deployment named in the path, or "" for an
	// OpenAI-style path.
	Deployment string
	// Chat is the decoded chat request, for KindChat.
	Chat *ChatBody
	// Embeddings is the decoded embeddings request, for KindEmbeddings.
	Embeddings *EmbeddingsBody
}

// ChatBody is the part of a chat completions request tests usually look at.
// The full body is in Request.JSON and Request.Body.
type ChatBody struct {
	Model               string          `json:"model"`
	Messages            []Message       `json:"messages"`
	Tools               []Tool          `json:"tools"`
	ResponseFormat      json.RawMessage `json:"response_format"`
	Temperature         *float64        `json:"temperature"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
}

// Message is one message of a chat request. Content holds the text of a
// string content or the concatenated text parts of an array content.
type Message struct {
	Role       string     `json:"role"`
	Name       string     `json:"name,omitempty"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// UnmarshalJSON accepts content as a string, null or an array of parts.
func (m *Message) UnmarshalJSON(b []byte) error {
	var w struct {
		Role       string          `json:"role"`
		Name       string          `json:"name"`
		Content    json.RawMessage `json:"content"`
		ToolCalls  []ToolCall      `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = Message{Role: w.Role, Name: w.Name, ToolCalls: w.ToolCalls, ToolCallID: w.ToolCallID}
	if len(w.Content) == 0 || string(w.Content) == "null" {
		return nil
	}
	if err := json.Unmarshal(w.Content, &m.Content); err == nil {
		return nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(w.Content, &parts); err != nil {
		return err
	}
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.Text)
	}
	m.Content = sb.String()
	return nil
}

// Tool is a function tool offered in a chat request.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
	} `json:"function"`
}

// EmbeddingsBody is a decoded embeddings request. Input is always a list:
// a single string input becomes a one-element list.
type EmbeddingsBody struct {
	Model          string
	Input          []string
	Dimensions     int
	EncodingFormat string
}

func (e *EmbeddingsBody) UnmarshalJSON(b []byte) error {
	var w struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		Dimensions     int             `json:"dimensions"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = EmbeddingsBody{Model: w.Model, Dimensions: w.Dimensions, EncodingFormat: w.EncodingFormat}
	var one string
	if err := json.Unmarshal(w.Input, &one); err == nil {
		e.Input = []string{one}
		return nil
	}
	return json.Unmarshal(w.Input, &e.Input)
}

// Text returns the content of every message of a chat request, joined by
// newlines, or the inputs of an embeddings request: handy for handlers that
// answer by a marker in the prompt.
func (r Request) Text() string {
	var parts []string
	switch {
	case r.Chat != nil:
		for _, m := range r.Chat.Messages {
			parts = append(parts, m.Content)
		}
	case r.Embeddings != nil:
		parts = r.Embeddings.Input
	}
	return strings.Join(parts, "\n")
}

// LastUserText returns the content of the last user message of a chat
// request, or "".
func (r Request) LastUserText() string {
	if r.Chat == nil {
		return ""
	}
	for i := len(r.Chat.Messages) - 1; i >= 0; i-- {
		if r.Chat.Messages[i].Role == "user" {
			return r.Chat.Messages[i].Content
		}
	}
	return ""
}

// SystemText returns the content of the first system message of a chat
// request, or "".
func (r Request) SystemText() string {
	if r.Chat == nil {
		return ""
	}
	for _, m := range r.Chat.Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	return ""
}

func (r Request) clone() Request {
	c := r
	c.Query = cloneValues(r.Query)
	c.Header = r.Header.Clone()
	c.Body = append([]byte(nil), r.Body...)
	// JSON, Chat and Embeddings are decoded afresh per request and never
	// mutated by the server; sharing them is safe as long as callers do not
	// mutate them either.
	return c
}

func cloneValues(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	c := make(url.Values, len(v))
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}
