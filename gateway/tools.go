package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"

	"github.com/agentmemory/agentmemory/agent"
)

// toolLoop is the gateway's own tool loop: retrieve_user_facts offered to
// the model beside the client's tools and run by the gateway, unseen by
// the client. An answer whose calls are all the gateway's is answered and
// the model asked again; an answer that also calls the client's tools
// reaches the client without the gateway's calls.
type toolLoop struct {
	c        *chatRequest
	tool     agent.Tool // nil: not offered
	client   []json.RawMessage
	hadTools bool
	def      json.RawMessage
}

func newToolLoop(c *chatRequest, tool agent.Tool) *toolLoop {
	l := &toolLoop{c: c, tool: tool}
	if tool == nil {
		return l
	}
	if raw, ok := c.fields["tools"]; ok && string(raw) != "null" {
		l.hadTools = true
		if json.Unmarshal(raw, &l.client) != nil {
			l.tool = nil // not an array: the upstream says what is wrong
			return l
		}
	}
	for _, t := range l.client {
		if toolName(t) == tool.Name() {
			l.tool = nil // the client's own tool of that name wins
			return l
		}
	}
	l.def, _ = json.Marshal(map[string]any{"type": "function", "function": map[string]any{
		"name": tool.Name(), "description": tool.Description(), "parameters": tool.Schema()}})
	return l
}

func toolName(def json.RawMessage) string {
	var d struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	_ = json.Unmarshal(def, &d)
	return d.Function.Name
}

// offer sets the request's tools for the next round: the client's and,
// when on, the gateway's. It reports whether the gateway's is offered.
func (l *toolLoop) offer(on bool) bool {
	if l.tool == nil {
		return false
	}
	switch {
	case on:
		l.c.fields["tools"] = joinRaw(append(slices.Clone(l.client), l.def))
	case l.hadTools:
		l.c.fields["tools"] = joinRaw(l.client)
	default:
		delete(l.c.fields, "tools")
	}
	return on
}

// joinRaw writes a JSON array of raw values, byte for byte.
func joinRaw(vs []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(v)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// run answers the calls of a, when they are all the gateway's: the
// assistant message msg and the results are added to the request, and it
// reports that the model is to be asked again.
func (l *toolLoop) run(ctx context.Context, a *answer, msg json.RawMessage) bool {
	if len(a.calls) == 0 || msg == nil {
		return false
	}
	for _, call := range a.calls {
		if call.Function.Name != l.tool.Name() {
			return false
		}
	}
	var view messageView
	_ = json.Unmarshal(msg, &view)
	l.c.messages = append(l.c.messages, msg)
	l.c.views = append(l.c.views, view)
	for _, call := range a.calls {
		result, err := l.tool.Call(ctx, agent.ToolArguments(call.Function.Arguments))
		if err != nil {
			result = "error: " + err.Error()
		}
		m, _ := json.Marshal(map[string]string{"role": "tool", "tool_call_id": call.ID, "content": result})
		l.c.messages = append(l.c.messages, m)
		l.c.views = append(l.c.views, messageView{Role: "tool", ToolCallID: call.ID, Content: mustString(result)})
	}
	return true
}

func mustString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// strip removes the gateway's calls from an answer that also calls the
// client's tools, in body and in a.
func (l *toolLoop) strip(body []byte, a *answer) []byte {
	ours := func(c wireToolCall) bool { return c.Function.Name == l.tool.Name() }
	if !slices.ContainsFunc(a.calls, ours) {
		return body
	}
	a.calls = slices.DeleteFunc(a.calls, ours)
	var top map[string]json.RawMessage
	var choices []map[string]json.RawMessage
	var msg map[string]json.RawMessage
	var calls []json.RawMessage
	if json.Unmarshal(body, &top) != nil || json.Unmarshal(top["choices"], &choices) != nil || len(choices) == 0 ||
		json.Unmarshal(choices[0]["message"], &msg) != nil || json.Unmarshal(msg["tool_calls"], &calls) != nil {
		return body
	}
	calls = slices.DeleteFunc(calls, func(c json.RawMessage) bool { return toolName(c) == l.tool.Name() })
	msg["tool_calls"] = joinRaw(calls)
	choices[0]["message"], _ = json.Marshal(msg)
	top["choices"], _ = json.Marshal(choices)
	out, err := json.Marshal(top)
	if err != nil {
		return body
	}
	return out
}
