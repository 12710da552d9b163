package gateway

import (
	"encoding/json"
	"strings"

	"github.com/agentmemory/agentmemory/gateway/internal/toolcalls"
)

// answer is the assistant message of an upstream answer (its first
// choice), whole or accumulated from a stream's chunks.
type answer struct {
	text   strings.Builder
	calls  []wireToolCall
	finish string
	stream toolcalls.Calls // a stream's tool call fragments
}

// completionOf reads a chat.completion body.
func completionOf(body []byte) (*answer, json.RawMessage) {
	var c struct {
		Choices []struct {
			Message      json.RawMessage `json:"message"`
			FinishReason string          `json:"finish_reason"`
		} `json:"choices"`
	}
	a := &answer{}
	if json.Unmarshal(body, &c) != nil || len(c.Choices) == 0 {
		return a, nil
	}
	var m messageView
	_ = json.Unmarshal(c.Choices[0].Message, &m)
	a.text.WriteString(m.text())
	a.calls = m.ToolCalls
	a.finish = c.Choices[0].FinishReason
	return a, c.Choices[0].Message
}

// add accumulates one chat.completion.chunk: choice 0's content, its
// tool call fragments (assembled as package toolcalls tells calls apart)
// and its finish reason. It returns, for each tool call fragment of
// choice 0, the position in a.calls of the call it belongs to (-1: one
// dropped).
func (a *answer) add(data []byte) []int {
	var c struct {
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Content   *string              `json:"content"`
				ToolCalls []toolcalls.Fragment `json:"tool_calls"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &c) != nil {
		return nil
	}
	var pos []int
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.Delta.Content != nil {
			a.text.WriteString(*ch.Delta.Content)
		}
		if len(ch.Delta.ToolCalls) > 0 {
			pos = append(pos, a.stream.Add(ch.Delta.ToolCalls)...)
			a.calls = a.calls[:0]
			for _, tc := range a.stream.List() {
				call := wireToolCall{ID: tc.ID, Type: "function"}
				call.Function.Name, call.Function.Arguments = tc.Name, tc.Arguments
				a.calls = append(a.calls, call)
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finish = *ch.FinishReason
		}
	}
	return pos
}

// final reports whether the answer ends the turn: it calls no tool the
// client is to answer in its next request.
func (a *answer) final() bool { return len(a.calls) == 0 }

// message is the answer as an assistant message of a Chat Completions
// request.
func (a *answer) message() json.RawMessage {
	m := map[string]any{"role": "assistant", "content": nil}
	if t := a.text.String(); t != "" {
		m["content"] = t
	}
	if len(a.calls) > 0 {
		m["tool_calls"] = a.calls
	}
	b, _ := json.Marshal(m)
	return b
}
