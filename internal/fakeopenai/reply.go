package fakeopenai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// replyKind says which endpoints a Reply may answer.
type replyKind int

const (
	kindNone  replyKind = iota // zero Reply: not an answer
	kindChat                   // chat completions only
	kindEmbed                  // embeddings only
	kindAny                    // errors and raw bodies: any endpoint
)

// Reply is one scripted answer. Build one with Text, JSON, ToolCalls,
// Embeddings, EmbeddingItems, Error or Raw, then refine it with the With
// methods, which return a modified copy.
type Reply struct {
	kind   replyKind
	status int
	header http.Header
	delay  time.Duration

	// raw, when set, is written verbatim (Error, Raw).
	raw         []byte
	contentType string

	// chat
	content      *string
	refusal      *string
	toolCalls    []ToolCall
	finishReason string

	// embeddings
	items []EmbeddingItem

	// both
	model string
	usage *Usage
}

// Usage is the token count a reply reports.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// ToolCall is a function call in an assistant message, both in a scripted
// reply and in a recorded request. Arguments is the raw JSON text the model
// "produced"; it need not be valid JSON.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// MarshalJSON writes the OpenAI wire form
// {"id":…,"type":"function","function":{"name":…,"arguments":…}}.
func (c ToolCall) MarshalJSON() ([]byte, error) {
	var w wireToolCall
	w.ID, w.Type = c.ID, "function"
	w.Function.Name, w.Function.Arguments = c.Name, c.Arguments
	return json.Marshal(w)
}

// UnmarshalJSON reads the OpenAI wire form.
func (c *ToolCall) UnmarshalJSON(b []byte) error {
	var w wireToolCall
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = ToolCall{ID: w.ID, Name: w.Function.Name, Arguments: w.Function.Arguments}
	return nil
}

// Call returns a tool call. args is used verbatim when it is a string,
// []byte or json.RawMessage, and encoded as JSON otherwise.
func Call(id, name string, args any) ToolCall {
	return ToolCall{ID: id, Name: name, Arguments: rawJSON(args)}
}

// EmbeddingItem is one vector of an embeddings reply with its index.
type EmbeddingItem struct {
	Index  int
	Vector []float32
}

// Text returns a chat reply whose assistant message has the given content
// and finish_reason "stop".
func Text(content string) Reply {
	return Reply{kind: kindChat, content: &content, finishReason: "stop"}
}

// JSON returns a chat reply whose content is v as JSON text (v is used
// verbatim when it is a string, []byte or json.RawMessage), as a model in
// JSON mode or with structured output answers.
func JSON(v any) Reply {
	return Text(rawJSON(v))
}

// ToolCalls returns a chat reply whose assistant message asks for the given
// tool calls, with null content and finish_reason "tool_calls".
func ToolCalls(calls ...ToolCall) Reply {
	return Reply{kind: kindChat, toolCalls: append([]ToolCall(nil), calls...), finishReason: "tool_calls"}
}

// Embeddings returns an embeddings reply with one item per vector, index i
// for the i-th vector, in order.
func Embeddings(vectors ...[]float32) Reply {
	items := make([]EmbeddingItem, len(vectors))
	for i, v := range vectors {
		items[i] = EmbeddingItem{Index: i, Vector: v}
	}
	return Reply{kind: kindEmbed, items: items}
}

// EmbeddingItems returns an embeddings reply listing items exactly as given,
// for tests of out-of-order or missing indexes.
func EmbeddingItems(items ...EmbeddingItem) Reply {
	return Reply{kind: kindEmbed, items: append([]EmbeddingItem(nil), items...)}
}

// Error returns a reply with the given HTTP status and an OpenAI-style error
// body {"error":{"message":…,"type":…,"code":…}}. It may answer any
// endpoint.
func Error(status int, message string) Reply {
	typ := "server_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_exceeded"
	case status == http.StatusUnauthorized:
		typ = "authentication_error"
	case status >= 400 && status < 500:
		typ = "invalid_request_error"
	}
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": typ, "code": fmt.Sprint(status), "param": nil,
	}})
	return Reply{kind: kindAny, status: status, raw: body, contentType: "application/json"}
}

// Raw returns a reply with the given status, content type and body, written
// verbatim: for malformed or unusual responses. It may answer any endpoint.
func Raw(status int, contentType, body string) Reply {
	return Reply{kind: kindAny, status: status, raw: []byte(body), contentType: contentType}
}

// WithText sets the content of a chat reply (a tool-call reply may carry
// text too).
func (r Reply) WithText(content string) Reply {
	r.content = &content
	return r
}

// WithRefusal sets the refusal field of a chat reply's message.
func (r Reply) WithRefusal(refusal string) Reply {
	r.refusal = &refusal
	return r
}

// WithFinishReason overrides the finish_reason of a chat reply.
func (r Reply) WithFinishReason(reason string) Reply {
	r.finishReason = reason
	return r
}

// WithModel sets the model the reply reports; by default it echoes the
// request's model.
func (r Reply) WithModel(model string) Reply {
	r.model = model
	return r
}

// WithUsage sets the reported usage; total is prompt+completion. Without it
// the reply has no usage object.
func (r Reply) WithUsage(prompt, completion int) Reply {
	r.usage = &Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	return r
}

// WithHeader adds a response header, such as Retry-After or x-should-retry.
func (r Reply) WithHeader(key, value string) Reply {
	h := r.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Add(key, value)
	r.header = h
	return r
}

// WithDelay makes the server wait d before answering, or until the client
// goes away, whichever comes first: for timeout and cancellation tests.
func (r Reply) WithDelay(d time.Duration) Reply {
	r.delay = d
	return r
}

func rawJSON(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case json.RawMessage:
		return string(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fakeopenai: cannot encode %T as JSON: %v", v, err))
	}
	return string(b)
}
