package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/gateway/internal/toolcalls"
)

// Stream translates a streamed Chat Completions answer into the Responses
// API's server-sent events, as it arrives. Feed it each chunk's data with
// Chunk, then call Finish (or Fail). Each call writes whole events to w —
// a caller serving HTTP flushes after each — and the first (or Start)
// writes response.created and response.in_progress.
//
// A Stream is not safe for concurrent use.
type Stream struct {
	w    io.Writer
	meta Meta
	obj  *object
	seq  int64

	started  bool
	done     bool // [DONE] was read
	finished bool // the last event was written
	reason   string
	usage    *chatUsage

	items []*streamItem   // output items in order
	text  *streamItem     // the open message item, or nil
	acc   toolcalls.Calls // the upstream's tool call fragments
	calls []*streamItem   // function call items by position in acc
	err   error           // the first write error
}

// streamItem is one output item being streamed.
type streamItem struct {
	index int
	id    string
	call  bool            // a function call; a message otherwise
	final json.RawMessage // the item once done

	// A message's content parts.
	parts []*streamPart

	// A function call's fields: givenID is the id the upstream gave, and
	// callID that or one supplied.
	callID, givenID, name string
	args                  strings.Builder
}

// streamPart is a content part of a streamed message.
type streamPart struct {
	refusal  bool
	text     strings.Builder
	logprobs []json.RawMessage
}

// NewStream returns a Stream writing to w the events of the response meta
// describes.
func NewStream(w io.Writer, meta Meta) *Stream {
	meta = meta.resolve()
	return &Stream{w: w, meta: meta, obj: newObject(meta)}
}

// ID returns the response's id.
func (s *Stream) ID() string { return s.meta.ID }

// chatChunk is one chat.completion.chunk, as far as it is read.
type chatChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string              `json:"content"`
			Refusal   *string              `json:"refusal"`
			ToolCalls []toolcalls.Fragment `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
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

// Chunk translates one event of the upstream's stream: data is what
// follows "data: " — a chat.completion.chunk, or [DONE]. A chunk that is
// not JSON, or whose fields have the wrong types, is an error wrapping
// ErrInvalid; an error chunk ({"error": …}) wraps ErrUpstream. Nothing is
// written then: the caller ends the stream with Fail.
func (s *Stream) Chunk(data []byte) error {
	if s.finished {
		return ErrStreamDone
	}
	data = bytes.TrimSpace(data)
	if string(data) == "[DONE]" {
		s.done = true
		return nil
	}
	if s.done {
		return fmt.Errorf("%w: upstream chunk after [DONE]", ErrInvalid)
	}
	var c chatChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("%w: upstream chunk is not a chat completion chunk: %v", ErrInvalid, err)
	}
	if c.Error != nil {
		return fmt.Errorf("%w: %s", ErrUpstream, c.Error.Message)
	}
	if err := s.check(&c); err != nil {
		return err
	}
	// Set before the opening events, which name the model that answers.
	if c.Model != "" {
		s.obj.Model = c.Model
	}
	if c.ServiceTier != nil {
		s.obj.ServiceTier = c.ServiceTier
	}
	s.start()
	if c.Usage != nil {
		s.usage = c.Usage
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // Responses has one answer; n > 1 is not asked for
		}
		d := ch.Delta
		if d.Content != nil && *d.Content != "" {
			var lp []json.RawMessage
			if ch.Logprobs != nil {
				lp = ch.Logprobs.Content
			}
			s.textDelta(false, *d.Content, lp)
		}
		if d.Refusal != nil && *d.Refusal != "" {
			s.textDelta(true, *d.Refusal, nil)
		}
		for i, p := range s.acc.Add(d.ToolCalls) {
			tc := d.ToolCalls[i]
			s.callDelta(p, tc.ID, tc.Function.Name, tc.Function.Arguments)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.reason = *ch.FinishReason
		}
	}
	return s.err
}

// check rejects a chunk that cannot be translated, before anything of it
// is written.
func (s *Stream) check(c *chatChunk) error {
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		opens := s.acc.Opens(ch.Delta.ToolCalls)
		for i, tc := range ch.Delta.ToolCalls {
			idx := i
			if tc.Index != nil {
				idx = *tc.Index
			}
			if idx < 0 {
				return fmt.Errorf("%w: upstream chunk's tool call has index %d", ErrInvalid, idx)
			}
			if opens[i] && tc.Function.Name == "" {
				return fmt.Errorf("%w: upstream chunk starts tool call %d without a function name", ErrInvalid, idx)
			}
		}
	}
	return nil
}

// Start writes the opening events, response.created and
// response.in_progress, unless they were written. A gateway calls it once
// the upstream accepted the request, so the client hears back before the
// first token; otherwise the first Chunk writes them.
func (s *Stream) Start() error {
	if s.finished {
		return ErrStreamDone
	}
	s.start()
	return s.err
}

// start writes the opening events, once.
func (s *Stream) start() {
	if s.started {
		return
	}
	s.started = true
	s.emit(event{Type: "response.created", Response: s.obj})
	s.emit(event{Type: "response.in_progress", Response: s.obj})
}

// textDelta adds text (or refusal text) to the open message item, opening
// the item and the content part as needed.
func (s *Stream) textDelta(refusal bool, delta string, logprobs []json.RawMessage) {
	it := s.text
	if it == nil {
		it = &streamItem{index: len(s.items), id: newID("msg_", 24)}
		s.items = append(s.items, it)
		s.text = it
		s.emit(event{Type: "response.output_item.added", OutputIndex: ptr(it.index), Item: it.json("in_progress")})
	}
	var p *streamPart
	if n := len(it.parts); n > 0 && it.parts[n-1].refusal == refusal {
		p = it.parts[n-1]
	} else {
		p = &streamPart{refusal: refusal}
		it.parts = append(it.parts, p)
		s.emit(event{Type: "response.content_part.added", ItemID: it.id, OutputIndex: ptr(it.index), ContentIndex: ptr(len(it.parts) - 1), Part: p.json(true)})
	}
	p.text.WriteString(delta)
	p.logprobs = append(p.logprobs, logprobs...)
	ci := len(it.parts) - 1
	if refusal {
		s.emit(event{Type: "response.refusal.delta", ItemID: it.id, OutputIndex: ptr(it.index), ContentIndex: ptr(ci), Delta: &delta})
		return
	}
	s.emit(event{Type: "response.output_text.delta", ItemID: it.id, OutputIndex: ptr(it.index), ContentIndex: ptr(ci), Delta: &delta, Logprobs: list(logprobs)})
}

// callDelta adds a fragment to the function call at position p of s.acc,
// opening its item first when it is new. An open message item is closed then, as the
// Responses API finishes a message before the calls that follow it; text
// after a call opens a new message item.
func (s *Stream) callDelta(p int, id, name, args string) {
	if p < 0 {
		return
	}
	var it *streamItem
	if p < len(s.calls) {
		it = s.calls[p]
	} else {
		if s.text != nil {
			s.closeItem(s.text, "completed")
			s.text = nil
		}
		it = &streamItem{index: len(s.items), id: newID("fc_", 24), call: true, callID: id, givenID: id, name: name}
		if id == "" {
			it.callID = newID("call_", 12)
		}
		s.items = append(s.items, it)
		s.calls = append(s.calls, it)
		s.emit(event{Type: "response.output_item.added", OutputIndex: ptr(it.index), Item: it.json("in_progress")})
	}
	if args == "" {
		return
	}
	it.args.WriteString(args)
	s.emit(event{Type: "response.function_call_arguments.delta", ItemID: it.id, OutputIndex: ptr(it.index), Delta: &args})
}

// closeItem writes the closing events of an item.
func (s *Stream) closeItem(it *streamItem, status string) {
	if it.call {
		args := it.args.String()
		s.emit(event{Type: "response.function_call_arguments.done", ItemID: it.id, OutputIndex: ptr(it.index), Arguments: &args})
	} else {
		for ci, p := range it.parts {
			text := p.text.String()
			if p.refusal {
				s.emit(event{Type: "response.refusal.done", ItemID: it.id, OutputIndex: ptr(it.index), ContentIndex: ptr(ci), Refusal: &text})
			} else {
				s.emit(event{Type: "response.output_text.done", ItemID: it.id, OutputIndex: ptr(it.index), ContentIndex: ptr(ci), Text: &text, Logprobs: list(p.logprobs)})
			}
			s.emit(event{Type: "response.content_part.done", ItemID: it.id, OutputIndex: ptr(it.index), ContentIndex: ptr(ci), Part: p.json(false)})
		}
	}
	it.final = it.json(status)
	s.emit(event{Type: "response.output_item.done", OutputIndex: ptr(it.index), Item: it.final})
}

// Finish writes the closing events: every open item's done events, then
// response.completed — or response.incomplete when the answer was cut
// short (finish_reason length or content_filter) — with the whole response
// object. When the upstream's stream ended before a finish_reason, it
// writes response.failed and returns ErrStreamCut with the Result.
func (s *Stream) Finish() (*Result, error) {
	if s.finished {
		return nil, ErrStreamDone
	}
	s.start()
	if s.reason == "" {
		res, err := s.fail("server_error", "the upstream's stream ended before its answer finished")
		if err != nil {
			return nil, err
		}
		return res, ErrStreamCut
	}
	status, _ := finishStatus(s.reason)
	itemStatus := "completed"
	if status == "incomplete" {
		itemStatus = "incomplete"
	}
	if len(s.items) == 0 {
		// An empty answer is one message with empty text, as FromChat has it.
		s.textPartOnly()
	}
	s.closeAll(itemStatus)
	s.obj.complete(s.reason)
	u := chatUsage{}
	if s.usage != nil {
		u = *s.usage
	}
	s.obj.Usage = u.responses()
	typ := "response.completed"
	if s.obj.Status == "incomplete" {
		typ = "response.incomplete"
	}
	s.emit(event{Type: typ, Response: s.obj})
	s.finished = true
	if s.err != nil {
		return nil, s.err
	}
	return s.obj.result(s.message()), nil
}

// textPartOnly opens an empty message item with an empty text part.
func (s *Stream) textPartOnly() {
	it := &streamItem{index: 0, id: newID("msg_", 24), parts: []*streamPart{{}}}
	s.items = append(s.items, it)
	s.text = it
	s.emit(event{Type: "response.output_item.added", OutputIndex: ptr(0), Item: it.json("in_progress")})
	s.emit(event{Type: "response.content_part.added", ItemID: it.id, OutputIndex: ptr(0), ContentIndex: ptr(0), Part: it.parts[0].json(true)})
}

// closeAll closes the items still open and sets the response's output.
func (s *Stream) closeAll(status string) {
	s.obj.Output = make([]json.RawMessage, 0, len(s.items))
	for _, it := range s.items {
		if it.final == nil {
			s.closeItem(it, status)
		}
		s.obj.Output = append(s.obj.Output, it.final)
	}
	s.text = nil
}

// Fail ends the stream with response.failed carrying message, for an
// answer the upstream could not complete (an error chunk, a broken
// connection). The Result, with Status "failed", is not a turn to record.
func (s *Stream) Fail(message string) (*Result, error) {
	if s.finished {
		return nil, ErrStreamDone
	}
	s.start()
	return s.fail("server_error", message)
}

// fail writes response.failed.
func (s *Stream) fail(code, message string) (*Result, error) {
	s.closeAll("incomplete")
	s.obj.Status = "failed"
	s.obj.Error = &apiError{Code: code, Message: message}
	if s.usage != nil {
		s.obj.Usage = s.usage.responses()
	}
	s.emit(event{Type: "response.failed", Response: s.obj})
	s.finished = true
	if s.err != nil {
		return nil, s.err
	}
	return s.obj.result(s.message()), nil
}

// message returns the streamed answer as an agent message.
func (s *Stream) message() agent.Message {
	m := agent.Message{Role: agent.RoleAssistant}
	var text strings.Builder
	for _, it := range s.items {
		if it.call {
			m.ToolCalls = append(m.ToolCalls, agent.ToolCall{ID: it.callID, Name: it.name, Arguments: agent.ToolArguments(it.args.String())})
			continue
		}
		for _, p := range it.parts {
			if !p.refusal {
				text.WriteString(p.text.String())
			}
		}
	}
	m.Text = text.String()
	return m
}

// json returns the item's JSON with the given status.
func (it *streamItem) json(status string) json.RawMessage {
	if it.call {
		return mustJSON(functionCallItem{ID: it.id, Type: "function_call", Status: status, Arguments: it.args.String(), CallID: it.callID, Name: it.name})
	}
	content := []json.RawMessage{}
	if status != "in_progress" {
		for _, p := range it.parts {
			content = append(content, p.json(false))
		}
	}
	return mustJSON(messageItem{ID: it.id, Type: "message", Status: status, Role: "assistant", Content: content})
}

// json returns the part's JSON: empty when it was just added, whole when done.
func (p *streamPart) json(empty bool) json.RawMessage {
	text := ""
	if !empty {
		text = p.text.String()
	}
	if p.refusal {
		return mustJSON(refusalPart{Type: "refusal", Refusal: text})
	}
	if empty {
		return mustJSON(newTextPart("", nil))
	}
	return mustJSON(newTextPart(text, p.logprobs))
}

// list returns items as a JSON array, [] when there are none.
func list(items []json.RawMessage) json.RawMessage {
	if items == nil {
		return json.RawMessage("[]")
	}
	return mustJSON(items)
}

// event is one server-sent event of a Responses stream. Pointer fields
// are written when set, even to a zero value.
type event struct {
	Type           string          `json:"type"`
	SequenceNumber int64           `json:"sequence_number"`
	Response       *object         `json:"response,omitempty"`
	OutputIndex    *int            `json:"output_index,omitempty"`
	ItemID         string          `json:"item_id,omitempty"`
	ContentIndex   *int            `json:"content_index,omitempty"`
	Item           json.RawMessage `json:"item,omitempty"`
	Part           json.RawMessage `json:"part,omitempty"`
	Delta          *string         `json:"delta,omitempty"`
	Text           *string         `json:"text,omitempty"`
	Refusal        *string         `json:"refusal,omitempty"`
	Arguments      *string         `json:"arguments,omitempty"`
	Logprobs       json.RawMessage `json:"logprobs,omitempty"`
}

// emit writes e with the next sequence number, unless a write failed before.
func (s *Stream) emit(e event) {
	if s.err != nil {
		return
	}
	e.SequenceNumber = s.seq
	s.seq++
	b := mustJSON(e)
	var buf bytes.Buffer
	buf.Grow(len(e.Type) + len(b) + 16)
	buf.WriteString("event: ")
	buf.WriteString(e.Type)
	buf.WriteString("\ndata: ")
	buf.Write(b)
	buf.WriteString("\n\n")
	if _, err := s.w.Write(buf.Bytes()); err != nil {
		s.err = fmt.Errorf("responses: writing %s: %w", e.Type, err)
	}
}

func ptr[T any](v T) *T { return &v }
