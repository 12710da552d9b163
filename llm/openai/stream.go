package openai

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentmemory/agentmemory/agent"
)

var _ agent.ChatStreamer = (*Chat)(nil)

// ErrStreamCut reports a streamed answer that ended before the server said
// why it finished: the connection closed mid-answer.
var ErrStreamCut = errors.New("stream ended before the answer finished")

// CompleteStream implements agent.ChatStreamer: it sends req as Complete
// does, with "stream": true and stream_options.include_usage, and yields
// the answer's text and tool-call fragments as they arrive. The last delta
// of a stream that succeeded carries the whole answer, assembled with the
// SDK's accumulator and normalised as Complete normalises it (refusal as
// text, tool-call arguments made valid JSON, missing call ids supplied),
// with the usage the server reported.
//
// A server that refuses response_format, tools or stream_options is
// handled as Complete handles it; nothing has been yielded then. Without
// stream_options the usage is what the server reports unasked, often
// none.
//
// Failures are Complete's, yielded once: an unreachable server wraps
// ErrUnreachable, a 404 ErrNotFound, and the SDK retries a failed request
// before its first chunk as Config.MaxRetries says. An error event or a
// broken connection mid-stream ends the stream with an error (a stream
// cut before its finish reason wraps ErrStreamCut); nothing is
// retried once a chunk has been yielded. A consumer that stops early
// closes the connection.
func (c *Chat) CompleteStream(ctx context.Context, req *agent.ChatRequest) iter.Seq2[agent.ChatDelta, error] {
	return func(yield func(agent.ChatDelta, error) bool) {
		if req == nil {
			yield(agent.ChatDelta{}, errors.New("llm/openai: CompleteStream: nil request"))
			return
		}
		if _, err := c.params(req); err != nil {
			yield(agent.ChatDelta{}, err)
			return
		}
		var (
			acc     openai.ChatCompletionAccumulator
			stopped bool
			what    = fmt.Sprintf("chat completion stream (model %s)", c.model)
		)
		err := c.send(ctx, what, req, true, func(ctx context.Context, p openai.ChatCompletionNewParams, opts ...option.RequestOption) error {
			stream := c.svc.NewStreaming(ctx, p, opts...)
			defer stream.Close()
			for stream.Next() {
				chunk := stream.Current()
				if !acc.AddChunk(chunk) {
					return fmt.Errorf("chunk %q does not continue completion %q", chunk.ID, acc.ID)
				}
				d, ok := chunkDelta(chunk)
				if !ok {
					continue
				}
				if !yield(d, nil) {
					stopped = true
					return nil
				}
			}
			return stream.Err()
		})
		switch {
		case stopped:
			return
		case err != nil:
			yield(agent.ChatDelta{}, err)
			return
		}
		if len(acc.Choices) > 0 && acc.Choices[0].FinishReason == "" {
			// The SDK ends a stream cut before [DONE] without an error.
			yield(agent.ChatDelta{}, fmt.Errorf("llm/openai: %s: %w", what, ErrStreamCut))
			return
		}
		resp, err := responseFromCompletion(&acc.ChatCompletion)
		if err != nil {
			yield(agent.ChatDelta{}, fmt.Errorf("llm/openai: %s: %w", what, err))
			return
		}
		yield(agent.ChatDelta{Response: resp}, nil)
	}
}

// chunkDelta returns the text and tool-call fragments of the first choice
// of chunk; ok is false when it has none (the role chunk, the finish
// chunk, the usage chunk).
func chunkDelta(chunk openai.ChatCompletionChunk) (d agent.ChatDelta, ok bool) {
	if len(chunk.Choices) == 0 {
		return d, false
	}
	delta := chunk.Choices[0].Delta
	d.Text = delta.Content
	if d.Text == "" {
		d.Text = delta.Refusal
	}
	for _, tc := range delta.ToolCalls {
		d.ToolCalls = append(d.ToolCalls, agent.ToolCallDelta{
			Index:     int(tc.Index),
			ID:        tc.ID,
			Name:      tc.Function.Name,
			Arguments: tc.Function.Arguments,
		})
	}
	return d, d.Text != "" || len(d.ToolCalls) > 0
}
