package gateway

import (
	"encoding/json"
	"strings"
)

// answer is the assistant message of an upstream answer (its first
// choice), whole or accumulated from a stream's chunks.
type answer struct {
	text   strings.Builder
	calls  []wireToolCall
	finish string
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

// add accumulates one chat.completion.chunk: choice 0's content and tool
// call fragments (by index: the first fragment of a call carries its id
// and name, the others pieces of its arguments), and its finish reason.
func (a *answer) add(data []byte) {
	var c struct {
		Choices []struct {
			Index int `json:"index"`
			Delta struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					Index    int    `json:"index"`
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &c) != nil {
		return
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.Delta.Content != nil {
			a.text.WriteString(*ch.Delta.Content)
		}
		for _, tc := range ch.Delta.ToolCalls {
			if tc.Index < 0 || tc.Index > 1024 {
				continue
			}
			for len(a.calls) <= tc.Index {
				a.calls = append(a.calls, wireToolCall{Type: "function"})
			}
			call := &a.calls[tc.Index]
			if tc.ID != "" {
				call.ID = tc.ID
			}
			if tc.Function.Name != "" {
				call.Function.Name += tc.Function.Name
			}
			call.Function.Arguments += tc.Function.Arguments
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finish = *ch.FinishReason
		}
	}
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
