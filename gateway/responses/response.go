package responses

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentmemory/agentmemory/agent"
)

// Meta is what a response object takes from the gateway rather than from
// the upstream's answer.
type Meta struct {
	// ID is the response's id. Empty gets a new one ("resp_" and 48 hex
	// digits), which Result.ID reports.
	ID string
	// CreatedAt is when the request arrived; zero means now.
	CreatedAt time.Time
	// Request is the translated request, whose fields the response object
	// echoes (instructions, tools, tool_choice, text, temperature…, and
	// previous_response_id); nil echoes the API's defaults.
	Request *Request
}

// Result is a translated answer.
type Result struct {
	// ID is the response's id.
	ID string
	// Status is "completed", "incomplete" (the answer was cut short: see
	// IncompleteReason) or "failed" (a stream that broke off).
	Status string
	// IncompleteReason is "max_output_tokens" or "content_filter" when
	// Status is "incomplete".
	IncompleteReason string
	// Model is the model that answered, as the upstream reported it.
	Model string
	// Message is the answer as an agent message: its text (refusals
	// excluded) and tool calls. With the Request's Input it is the turn
	// to record.
	Message agent.Message
	// Usage is the upstream's token count; zero when it reported none.
	Usage agent.Usage
	// Body is the response object as JSON: the body of a non-streamed
	// answer, and the response of a stream's last event.
	Body []byte
}

// NewResponseID returns a new response id: "resp_" and 48 random hex digits.
func NewResponseID() string { return newID("resp_", 24) }

// newID returns prefix followed by n random bytes in hex.
func newID(prefix string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+).
	return prefix + hex.EncodeToString(b)
}

// echo holds the request fields a response object repeats, with the API's
// defaults for those the request left out.
type echo struct {
	Instructions       json.RawMessage
	Tools              json.RawMessage
	ToolChoice         json.RawMessage
	ParallelToolCalls  bool
	Text               json.RawMessage
	MaxOutputTokens    json.RawMessage
	Temperature        float64
	TopP               float64
	TopLogprobs        int
	User               json.RawMessage
	Metadata           json.RawMessage
	Reasoning          json.RawMessage
	Store              bool
	PreviousResponseID json.RawMessage
	Truncation         string
}

// defaultEcho returns what a response object says of a request that set
// nothing.
func defaultEcho() echo {
	return echo{
		Instructions:       jsonNull,
		Tools:              json.RawMessage("[]"),
		ToolChoice:         json.RawMessage(`"auto"`),
		ParallelToolCalls:  true,
		Text:               json.RawMessage(`{"format":{"type":"text"}}`),
		MaxOutputTokens:    jsonNull,
		Temperature:        1,
		TopP:               1,
		User:               jsonNull,
		Metadata:           json.RawMessage("{}"),
		Reasoning:          json.RawMessage(`{"effort":null,"summary":null}`),
		Store:              true,
		PreviousResponseID: jsonNull,
		Truncation:         "disabled",
	}
}

// object is a Responses API response object, field for field as the API
// sends it: fields without a value are null, not absent.
type object struct {
	ID                 string             `json:"id"`
	Object             string             `json:"object"`
	CreatedAt          int64              `json:"created_at"`
	Status             string             `json:"status"`
	Background         bool               `json:"background"`
	CompletedAt        *int64             `json:"completed_at"`
	Error              *apiError          `json:"error"`
	IncompleteDetails  *incompleteDetails `json:"incomplete_details"`
	Instructions       json.RawMessage    `json:"instructions"`
	MaxOutputTokens    json.RawMessage    `json:"max_output_tokens"`
	Metadata           json.RawMessage    `json:"metadata"`
	Model              string             `json:"model"`
	Output             []json.RawMessage  `json:"output"`
	ParallelToolCalls  bool               `json:"parallel_tool_calls"`
	PreviousResponseID json.RawMessage    `json:"previous_response_id"`
	Reasoning          json.RawMessage    `json:"reasoning"`
	ServiceTier        *string            `json:"service_tier"`
	Store              bool               `json:"store"`
	Temperature        float64            `json:"temperature"`
	Text               json.RawMessage    `json:"text"`
	ToolChoice         json.RawMessage    `json:"tool_choice"`
	Tools              json.RawMessage    `json:"tools"`
	TopLogprobs        int                `json:"top_logprobs"`
	TopP               float64            `json:"top_p"`
	Truncation         string             `json:"truncation"`
	Usage              *usage             `json:"usage"`
	User               json.RawMessage    `json:"user"`
}

// apiError is a failed response's error.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// incompleteDetails says why a response is incomplete.
type incompleteDetails struct {
	Reason string `json:"reason"`
}

// usage is a response's token count.
type usage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

// chatUsage is a Chat Completions token count.
type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// responses returns u in the Responses form.
func (u chatUsage) responses() *usage {
	r := &usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	if r.TotalTokens == 0 {
		r.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	r.InputTokensDetails.CachedTokens = u.PromptTokensDetails.CachedTokens
	r.OutputTokensDetails.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	return r
}

// agent returns u as an agent.Usage.
func (u *usage) agent() agent.Usage {
	if u == nil {
		return agent.Usage{}
	}
	return agent.Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.TotalTokens}
}

// newObject returns the response object for meta, in progress and empty.
func newObject(meta Meta) *object {
	e := defaultEcho()
	if meta.Request != nil {
		e = meta.Request.echo
	}
	o := &object{
		ID:                 meta.ID,
		Object:             "response",
		CreatedAt:          meta.CreatedAt.Unix(),
		Status:             "in_progress",
		Instructions:       e.Instructions,
		MaxOutputTokens:    e.MaxOutputTokens,
		Metadata:           e.Metadata,
		Output:             []json.RawMessage{},
		ParallelToolCalls:  e.ParallelToolCalls,
		PreviousResponseID: e.PreviousResponseID,
		Reasoning:          e.Reasoning,
		Store:              e.Store,
		Temperature:        e.Temperature,
		Text:               e.Text,
		ToolChoice:         e.ToolChoice,
		Tools:              e.Tools,
		TopLogprobs:        e.TopLogprobs,
		TopP:               e.TopP,
		Truncation:         e.Truncation,
		User:               e.User,
	}
	if meta.Request != nil {
		o.Model = meta.Request.Model
	}
	return o
}

// resolve fills the defaults of meta.
func (m Meta) resolve() Meta {
	if m.ID == "" {
		m.ID = NewResponseID()
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Now()
	}
	return m
}

// finishStatus maps a chat finish reason to a response status and the
// reason it is incomplete.
func finishStatus(reason string) (status, incomplete string) {
	switch reason {
	case "length":
		return "incomplete", "max_output_tokens"
	case "content_filter":
		return "incomplete", "content_filter"
	}
	return "completed", ""
}

// complete sets o's status from a chat finish reason.
func (o *object) complete(finishReason string) {
	status, reason := finishStatus(finishReason)
	o.Status = status
	if reason != "" {
		o.IncompleteDetails = &incompleteDetails{Reason: reason}
		return
	}
	now := time.Now().Unix()
	o.CompletedAt = &now
}

// The output items of a response object.

// messageItem is an assistant message output item.
type messageItem struct {
	ID      string            `json:"id"`
	Type    string            `json:"type"`
	Status  string            `json:"status"`
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
}

// textPart is an output_text content part.
type textPart struct {
	Type        string            `json:"type"`
	Text        string            `json:"text"`
	Annotations []json.RawMessage `json:"annotations"`
	Logprobs    []json.RawMessage `json:"logprobs"`
}

// refusalPart is a refusal content part.
type refusalPart struct {
	Type    string `json:"type"`
	Refusal string `json:"refusal"`
}

// functionCallItem is a function call output item.
type functionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

func newTextPart(text string, logprobs []json.RawMessage) textPart {
	if logprobs == nil {
		logprobs = []json.RawMessage{}
	}
	return textPart{Type: "output_text", Text: text, Annotations: []json.RawMessage{}, Logprobs: logprobs}
}

// chatCompletion is a Chat Completions answer, as far as it is read.
type chatCompletion struct {
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Content   *string        `json:"content"`
			Refusal   *string        `json:"refusal"`
			ToolCalls []chatToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
		Logprobs     *struct {
			Content []json.RawMessage `json:"content"`
		} `json:"logprobs"`
	} `json:"choices"`
	Usage       *chatUsage `json:"usage"`
	ServiceTier *string    `json:"service_tier"`
	Error       *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// FromChat translates a non-streamed Chat Completions answer into a
// Responses object (Result.Body). Errors wrap ErrInvalid and say what the
// answer lacked; an error body ({"error": …}) wraps ErrUpstream.
func FromChat(chatJSON []byte, meta Meta) (*Result, error) {
	var c chatCompletion
	if err := json.Unmarshal(chatJSON, &c); err != nil {
		return nil, fmt.Errorf("%w: upstream answer is not a chat completion: %v", ErrInvalid, err)
	}
	if c.Error != nil {
		return nil, fmt.Errorf("%w: %s", ErrUpstream, c.Error.Message)
	}
	if len(c.Choices) == 0 {
		return nil, fmt.Errorf("%w: upstream answer has no choices", ErrInvalid)
	}
	choice := c.Choices[0]
	for _, ch := range c.Choices[1:] {
		if ch.Index == 0 {
			choice = ch
		}
	}
	meta = meta.resolve()
	o := newObject(meta)
	if c.Model != "" {
		o.Model = c.Model
	}
	o.ServiceTier = c.ServiceTier
	o.complete(choice.FinishReason)
	itemStatus := "completed"
	if o.Status == "incomplete" {
		itemStatus = "incomplete"
	}
	msg := choice.Message
	out := agent.Message{Role: agent.RoleAssistant}
	var content []json.RawMessage
	if msg.Content != nil && *msg.Content != "" {
		var lp []json.RawMessage
		if choice.Logprobs != nil {
			lp = choice.Logprobs.Content
		}
		content = append(content, mustJSON(newTextPart(*msg.Content, lp)))
		out.Text = *msg.Content
	}
	if msg.Refusal != nil && *msg.Refusal != "" {
		content = append(content, mustJSON(refusalPart{Type: "refusal", Refusal: *msg.Refusal}))
	}
	if content == nil && len(msg.ToolCalls) == 0 {
		// An empty answer is one message with empty text.
		content = append(content, mustJSON(newTextPart("", nil)))
	}
	if content != nil {
		o.Output = append(o.Output, mustJSON(messageItem{
			ID: newID("msg_", 24), Type: "message", Status: itemStatus, Role: "assistant", Content: content,
		}))
	}
	for i, tc := range msg.ToolCalls {
		if tc.Function.Name == "" {
			return nil, fmt.Errorf("%w: upstream answer's tool call %d has no function name", ErrInvalid, i)
		}
		id := tc.ID
		if id == "" {
			id = newID("call_", 12)
		}
		o.Output = append(o.Output, mustJSON(functionCallItem{
			ID: newID("fc_", 24), Type: "function_call", Status: itemStatus,
			Arguments: tc.Function.Arguments, CallID: id, Name: tc.Function.Name,
		}))
		out.ToolCalls = append(out.ToolCalls, agent.ToolCall{ID: id, Name: tc.Function.Name, Arguments: agent.ToolArguments(tc.Function.Arguments)})
	}
	u := chatUsage{}
	if c.Usage != nil {
		u = *c.Usage
	}
	o.Usage = u.responses()
	return o.result(out), nil
}

// result returns the Result of a finished object.
func (o *object) result(m agent.Message) *Result {
	r := &Result{ID: o.ID, Status: o.Status, Model: o.Model, Message: m, Usage: o.Usage.agent(), Body: mustJSON(o)}
	if o.IncompleteDetails != nil {
		r.IncompleteReason = o.IncompleteDetails.Reason
	}
	return r
}
