package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// ChatStreamer is implemented by a ChatClient that can stream its answer
// as the model produces it. RunStream uses it when the agent's client has
// it, and falls back to Complete otherwise.
type ChatStreamer interface {
	ChatClient
	// CompleteStream sends req and yields the answer in pieces. A stream
	// that succeeds ends with a ChatDelta whose Response is the whole
	// answer, assembled and normalised as Complete would return it
	// (tool-call arguments made valid JSON, missing ids supplied). A
	// failure is yielded once, as the last item, with a zero ChatDelta.
	// The consumer may stop early; the request is then abandoned.
	CompleteStream(ctx context.Context, req *ChatRequest) iter.Seq2[ChatDelta, error]
}

// ChatDelta is one piece of a streamed model answer.
type ChatDelta struct {
	// Text is the next fragment of the answer's text.
	Text string
	// ToolCalls are fragments of the tool calls the model is making.
	ToolCalls []ToolCallDelta
	// Response is set on the last delta of a stream that succeeded: the
	// complete answer, with usage, finish reason and model.
	Response *ChatResponse
}

// ToolCallDelta is a fragment of a tool call being streamed. The first
// fragment of a call carries its ID and Name; Arguments fragments,
// concatenated in order, make the call's arguments text. Index tells the
// calls of one answer apart.
type ToolCallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// Delta is one item of a streamed run (see RunStream): fragments of the
// model's answer (Text, ToolCalls, or both when the model sent them in one
// piece), a complete Message, or the final Response.
type Delta struct {
	// Text is the next fragment of an assistant message's text.
	Text string
	// ToolCalls are fragments of the tool calls the model is making.
	ToolCalls []ToolCallDelta
	// Message is a message of the run, once complete: an assistant message
	// (stamped with its id; with its tool calls, if any), or the tool
	// message answering one of its calls, after the agent ran the tool.
	Message *Message
	// Response is set on the last item of a run that succeeded: what Run
	// would have returned. The turn is stored by then.
	Response *Response
}

// errStopped ends a streamed run whose consumer stopped reading.
var errStopped = errors.New("agent: stream consumer stopped")

// RunStream is Run, streamed: it yields the model's answer as it is
// produced, tool calls included, runs the tools the model asks for and
// streams the next model call, and ends with an item whose Response is
// what Run would have returned.
//
// Invoking hooks, the prompt, tools and the round limit are Run's. When
// the answer is complete, the providers' Invoked hooks run and the input
// and the produced messages are appended to the session, as Run does,
// before the last item is yielded.
//
// A turn is stored only once its answer completed. A consumer that stops
// reading before the item carrying the Response, or a ctx cancelled (or
// past its deadline) before then, abandons the run: no Invoked hook is
// called and the session is unchanged (a cancelled run yields its error; a
// stopped one yields nothing more). Any other failure (bad input, a model
// error mid-stream, ErrToolRounds) is yielded as the last item; the
// Invoked hooks see it as they do for Run (bad input: none is called), and
// the session is unchanged.
//
// When the agent's ChatClient does not implement ChatStreamer, each model
// answer arrives whole, as one Text (and ToolCalls) item. The session is
// locked against other runs until the stream ends.
func (a *Agent) RunStream(ctx context.Context, sess *Session, input ...Message) iter.Seq2[Delta, error] {
	return func(yield func(Delta, error) bool) {
		if err := a.checkInput("RunStream", sess, input); err != nil {
			yield(Delta{}, err)
			return
		}
		sess.runMu.Lock()
		defer sess.runMu.Unlock()
		t := a.begin(ctx, sess, input)
		emit := func(m Message) bool { return yield(Delta{Message: &m}, nil) }
		resp, err := a.loop(ctx, &t, a.streamCall(yield), emit)
		switch {
		case errors.Is(err, errStopped):
			return
		case err != nil && ctx.Err() != nil:
			yield(Delta{}, err)
			return
		}
		resp, err = a.finish(ctx, &t, resp, err)
		if err != nil {
			yield(Delta{}, err)
			return
		}
		yield(Delta{Response: resp}, nil)
	}
}

// streamCall returns the model call of RunStream: it streams the answer's
// fragments to yield and returns the complete answer.
func (a *Agent) streamCall(yield func(Delta, error) bool) modelCall {
	s, ok := a.client.(ChatStreamer)
	if !ok {
		return func(ctx context.Context, req *ChatRequest) (*ChatResponse, error) {
			out, err := a.client.Complete(ctx, req)
			if err != nil {
				return nil, err
			}
			if d := wholeDelta(out.Message); d.Text != "" || len(d.ToolCalls) > 0 {
				if !yield(d, nil) {
					return nil, errStopped
				}
			}
			return out, nil
		}
	}
	return func(ctx context.Context, req *ChatRequest) (*ChatResponse, error) {
		var out *ChatResponse
		for d, err := range s.CompleteStream(ctx, req) {
			if err != nil {
				return nil, err
			}
			if d.Response != nil {
				out = d.Response
			}
			if d.Text == "" && len(d.ToolCalls) == 0 {
				continue
			}
			if !yield(Delta{Text: d.Text, ToolCalls: d.ToolCalls}, nil) {
				return nil, errStopped
			}
		}
		if out == nil {
			return nil, fmt.Errorf("%T: stream ended without a complete response", s)
		}
		return out, nil
	}
}

// wholeDelta is a complete answer as one delta.
func wholeDelta(m Message) Delta {
	d := Delta{Text: m.Text}
	for i, tc := range m.ToolCalls {
		d.ToolCalls = append(d.ToolCalls, ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Name, Arguments: string(tc.Arguments)})
	}
	return d
}
