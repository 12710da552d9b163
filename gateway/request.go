package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/agentmemory/agentmemory/store"
)

// chatRequest is a Chat Completions request as the gateway reads it. Every
// field is kept as the client sent it (fields) and forwarded so, except
// the extensions memory_config and memory_context, which are removed, and
// messages, into which the memory block goes.
type chatRequest struct {
	fields   map[string]json.RawMessage
	messages []json.RawMessage
	views    []messageView
	stream   bool
	user     string // the "user" field
	session  string // metadata.session_id
	memCfg   memoryConfig
	memCtx   memoryContext
	// chain is set by the Responses door: the client sends no history,
	// the gateway keeps it.
	chain *chain
}

// memoryConfig is the memory_config extension.
type memoryConfig struct {
	Enabled             *bool    `json:"enabled"`
	RetrievalLimit      *int     `json:"retrieval_limit"`
	AutoStore           *bool    `json:"auto_store"`
	MemoryTypes         []string `json:"memory_types"`
	SimilarityThreshold *float64 `json:"similarity_threshold"`
}

// memoryContext is the memory_context extension. ProjectID is accepted
// and not used: one gateway serves one memory store.
type memoryContext struct {
	UserID    string `json:"user_id"`
	ProjectID string `json:"project_id"`
}

// messageView is what the gateway reads of a message; the message itself
// is forwarded as the client sent it.
type messageView struct {
	Role       string          `json:"role"`
	Name       string          `json:"name"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []wireToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

// wireToolCall is a tool call as Chat Completions carries it.
type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// text is the message's text: a string content, or the text parts of an
// array content joined by newlines.
func (m messageView) text() string {
	return contentText(m.Content)
}

func contentText(c json.RawMessage) string {
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(c, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// memoryTypes are the values of memory_config.memory_types: the kinds of
// document retrieval searches.
var memoryTypes = map[string]store.Kind{
	"interaction":     store.KindInteraction,
	"insight":         store.KindInsight,
	"session_summary": store.KindSessionSummary,
}

// readChatRequest reads and checks a Chat Completions body of at most
// limit bytes; its errors are *apiError naming the field.
func readChatRequest(w http.ResponseWriter, r *http.Request, limit int64) (*chatRequest, error) {
	body, err := readBody(w, r, limit)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, badRequest("body", "a JSON object is required")
	}
	return newChatRequest(fields)
}

// readBody reads a request body of at most limit bytes; its errors are
// *apiError.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			e := badRequest("body", "larger than the gateway's limit of %d bytes", tooBig.Limit)
			e.Status = http.StatusRequestEntityTooLarge
			return nil, e
		}
		return nil, badRequest("body", "could not be read: %v", err)
	}
	return body, nil
}

// newChatRequest reads the fields of a Chat Completions request: the
// client's, or those another door (the Responses API) translated its
// request into.
func newChatRequest(fields map[string]json.RawMessage) (*chatRequest, error) {
	req := &chatRequest{fields: fields}
	if err := req.parse(); err != nil {
		return nil, err
	}
	return req, nil
}

// parse reads the fields the gateway interprets and removes the
// extensions from what is forwarded.
func (c *chatRequest) parse() error {
	f := c.fields
	raw, ok := f["messages"]
	if !ok {
		return badRequest("messages", "required")
	}
	if err := json.Unmarshal(raw, &c.messages); err != nil {
		return badRequest("messages", "want an array of messages: %v", err)
	}
	c.views = make([]messageView, len(c.messages))
	for i, m := range c.messages {
		if err := json.Unmarshal(m, &c.views[i]); err != nil {
			return badRequest("messages", "message %d: %v", i, err)
		}
	}
	if v, ok := f["stream"]; ok && string(v) != "null" {
		if err := json.Unmarshal(v, &c.stream); err != nil {
			return badRequest("stream", "want true or false")
		}
	}
	if v, ok := f["user"]; ok && string(v) != "null" {
		if err := json.Unmarshal(v, &c.user); err != nil {
			return badRequest("user", "want a string")
		}
	}
	if v, ok := f["metadata"]; ok && string(v) != "null" {
		var md map[string]any
		if err := json.Unmarshal(v, &md); err != nil {
			return badRequest("metadata", "want an object of strings")
		}
		if s, ok := md["session_id"]; ok {
			str, isStr := s.(string)
			if !isStr {
				return badRequest("metadata.session_id", "want a string")
			}
			c.session = str
		}
	}
	if err := strict(f["memory_config"], "memory_config", &c.memCfg); err != nil {
		return err
	}
	if err := strict(f["memory_context"], "memory_context", &c.memCtx); err != nil {
		return err
	}
	delete(f, "memory_config")
	delete(f, "memory_context")

	mc := c.memCfg
	if n := mc.RetrievalLimit; n != nil && (*n < 0 || *n > store.MaxTopK) {
		return badRequest("memory_config.retrieval_limit", "%d: want 0 (no search) to %d", *n, store.MaxTopK)
	}
	if t := mc.SimilarityThreshold; t != nil && (*t < 0 || *t > 1) {
		return badRequest("memory_config.similarity_threshold", "%v: want 0 to 1", *t)
	}
	for _, t := range mc.MemoryTypes {
		if _, ok := memoryTypes[t]; !ok {
			return badRequest("memory_config.memory_types", "%q: want interaction, insight or session_summary", t)
		}
	}
	return nil
}

// strict decodes an extension object, refusing fields it does not know.
func strict(raw json.RawMessage, param string, v any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest(param, "%v", err)
	}
	return nil
}

// kinds are the document kinds memory_config.memory_types asks for; nil
// means all.
func (mc memoryConfig) kinds() []store.Kind {
	var ks []store.Kind
	for _, t := range mc.MemoryTypes {
		if k := memoryTypes[t]; !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	return ks
}

// lastUser is the index of the last user message, or -1.
func (c *chatRequest) lastUser() int {
	for i := len(c.views) - 1; i >= 0; i-- {
		if c.views[i].Role == "user" {
			return i
		}
	}
	return -1
}

// body is the request as forwarded: every field as the client sent it,
// the messages as set, keys sorted. Values are written byte for byte.
func (c *chatRequest) body() []byte {
	keys := make([]string, 0, len(c.fields))
	for k := range c.fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(k)
		b.Write(name)
		b.WriteByte(':')
		if k == "messages" {
			b.WriteByte('[')
			for j, m := range c.messages {
				if j > 0 {
					b.WriteByte(',')
				}
				b.Write(m)
			}
			b.WriteByte(']')
		} else {
			b.Write(c.fields[k])
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}
