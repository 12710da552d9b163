package fakeopenai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Streaming
//
// A chat request with "stream": true gets its reply as server-sent events,
// as the OpenAI API sends them: "data: {chat.completion.chunk}" lines, each
// followed by a blank line. The first chunk carries the role; the content
// follows in several chunks (split after each space); each tool call
// follows as one chunk with its index, id, type and name and then chunks
// of at most ArgumentsFragment bytes of its arguments (never splitting a
// character); a last choice chunk
// carries the finish_reason. When the request sets
// stream_options.include_usage, a chunk without choices carries the usage
// (the reply's, or zeros without WithUsage). "data: [DONE]" ends the
// stream. Errors and raw replies are written as for any other request.
//
// With a Latency, the first chunk waits FirstToken (plus the reply's
// WithDelay), and every later chunk PerToken for each 4 bytes it carries.

// ArgumentsFragment is the most bytes of a tool call's arguments one
// streamed chunk carries.
const ArgumentsFragment = 8

// wantsStream reports whether a chat request asks for a streamed answer.
func wantsStream(req Request) bool {
	b, _ := req.JSON["stream"].(bool)
	return req.Kind == KindChat && b
}

// wantsUsage reports whether a streamed request asks for a usage chunk.
func wantsUsage(req Request) bool {
	so, _ := req.JSON["stream_options"].(map[string]any)
	b, _ := so["include_usage"].(bool)
	return b
}

// chunk is one chat.completion.chunk event with its pace: the time to wait
// before sending it.
type chunk struct {
	wait time.Duration
	body map[string]any
}

// stream writes reply r to a streamed chat request as server-sent events.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, req Request, r Reply, seq int) {
	model := r.model
	if model == "" {
		model = req.Chat.Model
	}
	for k, vs := range r.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for _, c := range s.chunks(req, r, model, seq) {
		if !sleep(ctx, c.wait) {
			return // the client went away
		}
		b, err := json.Marshal(c.body)
		if err != nil {
			s.t.Errorf("fakeopenai: request %d: encoding chunk: %v", seq, err)
			return
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return
		}
		_ = rc.Flush()
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	_ = rc.Flush()
}

// chunks splits r into the events that stream it.
func (s *Server) chunks(req Request, r Reply, model string, seq int) []chunk {
	lat := s.cfg.latency
	pace := func(text string) time.Duration {
		return time.Duration((len(text)+3)/4) * lat.PerToken
	}
	base := func(choices []any) map[string]any {
		return map[string]any{
			"id":      fmt.Sprintf("chatcmpl-fake-%d", seq),
			"object":  "chat.completion.chunk",
			"created": 1700000000,
			"model":   model,
			"choices": choices,
		}
	}
	choice := func(delta map[string]any, finish any) chunk {
		return chunk{body: base([]any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}})}
	}

	first := choice(map[string]any{"role": "assistant", "content": ""}, nil)
	first.wait = r.delay + lat.FirstToken
	out := []chunk{first}
	if r.content != nil {
		for _, piece := range strings.SplitAfter(*r.content, " ") {
			if piece == "" {
				continue
			}
			c := choice(map[string]any{"content": piece}, nil)
			c.wait = pace(piece)
			out = append(out, c)
		}
	}
	if r.refusal != nil {
		c := choice(map[string]any{"refusal": *r.refusal}, nil)
		c.wait = pace(*r.refusal)
		out = append(out, c)
	}
	for i, tc := range r.toolCalls {
		head := choice(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""},
		}}}, nil)
		head.wait = pace(tc.Name)
		out = append(out, head)
		for args := tc.Arguments; args != ""; {
			n := min(ArgumentsFragment, len(args))
			for n < len(args) && n > 1 && !utf8.RuneStart(args[n]) {
				n-- // never split a character
			}
			c := choice(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": args[:n]},
			}}}, nil)
			c.wait = pace(args[:n])
			out = append(out, c)
			args = args[n:]
		}
	}
	out = append(out, choice(map[string]any{}, r.finishReason))
	if wantsUsage(req) {
		u := Usage{}
		if r.usage != nil {
			u = *r.usage
		}
		last := base([]any{})
		last["usage"] = u
		out = append(out, chunk{body: last})
	}
	return out
}

// sleep waits d, or until ctx is done; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
