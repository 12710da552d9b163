package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
)

// stream runs a streamed request: upstream's server-sent events go to the
// client as they arrive, each event flushed, while the answer is
// accumulated. The turn is recorded when upstream ends the stream
// ("data: [DONE]"), before that event is passed on, so a client that has
// read [DONE] finds the turn stored. A client that goes away mid-stream
// does not stop it: upstream is read to its end and the turn recorded if
// the answer completed. A stream that upstream cuts short records
// nothing.
//
// With the gateway's own tool offered, its calls are kept from the client
// (the client's calls are renumbered to close the gap); an answer whose
// calls are all the gateway's ends without its finish, usage and [DONE]
// events, the calls are answered, and the next answer streams on in the
// same response.
func (h *Handler) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, c *chatRequest, plan *memoryPlan, model string, out emitter) {
	loop := newToolLoop(c, plan.tool)
	s := &sseWriter{w: w, out: out, rc: http.NewResponseController(w)}
	started, completed := false, false
	defer func() {
		if started {
			s.end(completed)
		}
	}()
	for round := 0; ; round++ {
		offer := loop.offer(round < h.cfg.MaxToolRounds)
		resp, err := h.up.do(ctx, http.MethodPost, "chat/completions", model, c.body())
		if err != nil {
			if round == 0 {
				w.Header().Set(Header, plan.state.String())
				h.unreachable(w, r, err)
			} else { // the answer has begun: it ends without [DONE]
				h.log.WarnContext(ctx, "gateway: upstream unreachable in the gateway's tool loop; the stream ends", "err", err)
			}
			return
		}
		if resp.StatusCode >= 400 {
			if round == 0 {
				w.Header().Set(Header, plan.state.String())
				relayError(w, resp)
			} else {
				h.log.WarnContext(ctx, "gateway: upstream failed in the gateway's tool loop; the stream ends", "status", resp.Status)
			}
			resp.Body.Close()
			return
		}
		if round == 0 {
			w.Header().Set(Header, plan.state.String())
			out.streamHeader(w.Header())
			w.WriteHeader(resp.StatusCode)
			started = true
		}
		var f *callFilter
		if offer {
			f = &callFilter{ours: loop.tool.Name(), index: map[int]int{}}
		}
		a, done := h.relay(ctx, resp.Body, s, f, func(a *answer) { h.recordStream(ctx, plan, c, a) })
		resp.Body.Close()
		if !done {
			if plan.sess != nil {
				h.log.InfoContext(ctx, "gateway: stream did not complete; the turn is not recorded", "user", plan.scope)
			}
			return
		}
		if f == nil || !f.held {
			completed = true
			return
		}
		if !loop.run(ctx, a, a.message()) {
			return
		}
	}
}

// sseWriter writes events to a client that may go away: from then on
// nothing is written, and upstream is read on.
type sseWriter struct {
	w    http.ResponseWriter
	out  emitter
	rc   *http.ResponseController
	gone bool
	// id is the id of the first answer's chunks, which the chunks of the
	// answers after the gateway's tool calls take, so that the client
	// reads one answer.
	id json.RawMessage
}

// sameID returns line with the chunk data's id replaced by the first
// answer's.
func (s *sseWriter) sameID(data, line []byte) []byte {
	var top chunkJSON
	if json.Unmarshal(data, &top) != nil || len(top["id"]) == 0 {
		return line
	}
	if s.id == nil {
		s.id = top["id"]
		return line
	}
	if bytes.Equal(s.id, top["id"]) {
		return line
	}
	top["id"] = s.id
	b, err := json.Marshal(top)
	if err != nil {
		return line
	}
	return append(append([]byte("data: "), b...), '\n')
}

func (s *sseWriter) send(line []byte) {
	if !s.gone && s.out.event(s.w, line) != nil {
		s.gone = true
	}
}

// end closes the door's answer and flushes it.
func (s *sseWriter) end(completed bool) {
	if s.gone {
		return
	}
	s.out.end(s.w, completed)
	s.flush()
}

func (s *sseWriter) flush() {
	if !s.gone && s.rc.Flush() != nil {
		s.gone = true
	}
}

// relay passes one upstream stream on to s, through f when the gateway's
// tool is offered, accumulating the answer, and calls record when the
// answer completes and is the last (not held by f). done reports that
// upstream completed the answer.
func (h *Handler) relay(ctx context.Context, body io.Reader, s *sseWriter, f *callFilter, record func(*answer)) (a *answer, done bool) {
	a = &answer{}
	rd := bufio.NewReader(body)
	for {
		line, err := rd.ReadBytes('\n')
		if len(line) > 0 {
			trimmed := bytes.TrimRight(line, "\r\n")
			if data, ok := bytes.CutPrefix(trimmed, []byte("data:")); ok {
				data = bytes.TrimSpace(data)
				if string(data) == "[DONE]" {
					done = true
					if f == nil || !f.held {
						record(a)
					}
				} else {
					pos := a.add(data)
					if f != nil {
						if line = f.filter(a, pos, data, line); line != nil {
							line = s.sameID(bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), []byte("data:"))), line)
						}
					}
				}
			}
			if line != nil && !(f != nil && f.held && done) {
				s.send(line)
			}
			if len(trimmed) == 0 {
				s.flush()
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				h.log.WarnContext(ctx, "gateway: upstream stream broken; the turn is not recorded", "err", err)
			} else if !done && a.finish != "" {
				// A server that ends its stream without [DONE] after the
				// last choice chunk has completed the answer.
				done = true
				if f == nil || !f.held {
					record(a)
				}
			}
			break
		}
	}
	s.flush()
	return a, done
}

// callFilter keeps the gateway's tool calls out of a stream: their
// fragments are dropped, the client's renumbered from 0, and the finish
// of an answer whose calls are all the gateway's is held back (with the
// events after it), for the gateway to answer them and ask again.
type callFilter struct {
	ours  string
	index map[int]int // position in the answer's calls -> the client's index, for the client's calls
	held  bool
}

// chunkJSON is what the filter rewrites of a chunk: the rest is kept.
type chunkJSON map[string]json.RawMessage

// filter returns the line to send for the chunk data (line is its
// event line) of a, which has accumulated it (pos: the position in
// a.calls of each of its tool call fragments): the line itself, one
// rewritten, or nil to send nothing.
func (f *callFilter) filter(a *answer, pos []int, data, line []byte) []byte {
	if f.held {
		return nil // the usage chunk after a held finish
	}
	var c struct {
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				ToolCalls []json.RawMessage `json:"tool_calls"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &c) != nil || len(c.Choices) == 0 || c.Choices[0].Index != 0 {
		return line
	}
	ch := c.Choices[0]
	if ch.FinishReason != nil && *ch.FinishReason != "" && len(a.calls) > 0 && f.allOurs(a) {
		f.held = true
		return nil
	}
	if len(ch.Delta.ToolCalls) == 0 {
		return line
	}
	// Rewrite the tool calls: drop the gateway's, renumber the client's.
	var top chunkJSON
	var choices []chunkJSON
	var delta chunkJSON
	var calls []chunkJSON
	if json.Unmarshal(data, &top) != nil || json.Unmarshal(top["choices"], &choices) != nil ||
		json.Unmarshal(choices[0]["delta"], &delta) != nil || json.Unmarshal(delta["tool_calls"], &calls) != nil ||
		len(calls) != len(pos) {
		return line
	}
	kept := calls[:0]
	for i, call := range calls {
		p := pos[i]
		if p < 0 || p >= len(a.calls) || a.calls[p].Function.Name == f.ours {
			continue
		}
		n, ok := f.index[p]
		if !ok {
			n = len(f.index)
			f.index[p] = n
		}
		call["index"], _ = json.Marshal(n)
		kept = append(kept, call)
	}
	if len(kept) == 0 {
		delete(delta, "tool_calls")
		if len(delta) == 0 && (ch.FinishReason == nil || *ch.FinishReason == "") {
			return nil
		}
	} else {
		delta["tool_calls"], _ = json.Marshal(kept)
	}
	choices[0]["delta"], _ = json.Marshal(delta)
	top["choices"], _ = json.Marshal(choices)
	b, err := json.Marshal(top)
	if err != nil {
		return line
	}
	return append(append([]byte("data: "), b...), '\n')
}

func (f *callFilter) allOurs(a *answer) bool {
	for _, c := range a.calls {
		if c.Function.Name != f.ours {
			return false
		}
	}
	return true
}

// recordStream records a completed stream's turn; a failure is logged
// (the headers have gone).
func (h *Handler) recordStream(ctx context.Context, plan *memoryPlan, c *chatRequest, a *answer) {
	if err := h.record(ctx, plan, c, a); err != nil {
		h.log.WarnContext(ctx, "gateway: the turn could not be recorded", "user", plan.scope, "err", err)
	}
}
