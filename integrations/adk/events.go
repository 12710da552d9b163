package adk

import (
	"encoding/json"
	"strings"

	"google.golang.org/adk/session"
	"google.golang.org/genai"

	amagent "github.com/agentmemory/agentmemory/agent"
)

// invocation is one ADK invocation read as an agentmemory run: the user's
// input, and what the agents produced (assistant messages with their tool
// calls, and the tools' results).
type invocation struct {
	id       string
	request  []amagent.Message
	response []amagent.Message
	// answered is set when an agent gave a final text answer: only such
	// an invocation is a turn (one still running, or that failed, is not).
	answered bool
}

// invoked is the InvokedContext provider.MemoryProvider.Invoked stores as
// the turn.
func (v invocation) invoked(sess *amagent.Session) *amagent.InvokedContext {
	return &amagent.InvokedContext{Session: sess, Request: v.request, Response: v.response}
}

// kept returns the messages a turn keeps as text (the others, tool calls
// and results, go to its metadata).
func (v invocation) kept() []amagent.Message {
	var out []amagent.Message
	for _, m := range append(append([]amagent.Message(nil), v.request...), v.response...) {
		if (m.Role == amagent.RoleUser || m.Role == amagent.RoleAssistant) && strings.TrimSpace(m.Text) != "" {
			out = append(out, m)
		}
	}
	return out
}

// storedIn reports whether memory holds the invocation already: every
// message it keeps has its id among ids. An invocation that keeps nothing
// counts as stored.
func (v invocation) storedIn(ids map[string]bool) bool {
	for _, m := range v.kept() {
		if !ids[m.ID] {
			return false
		}
	}
	return true
}

// invocations reads a session's events as runs, in the order their first
// events appear, and returns those that were answered; with only set, the
// run of that invocation id alone. A message takes its event's id and
// time, so the same events always make the same turn.
func invocations(events session.Events, only string) []invocation {
	if events == nil {
		return nil
	}
	var order []string
	byID := map[string]*invocation{}
	for ev := range events.All() {
		if ev == nil || ev.Content == nil || ev.Partial {
			continue
		}
		key := ev.InvocationID
		if only != "" && key != only {
			continue
		}
		if key == "" {
			key = "event:" + ev.ID
		}
		v := byID[key]
		if v == nil {
			v = &invocation{id: key}
			byID[key] = v
			order = append(order, key)
		}
		v.add(ev)
	}
	var out []invocation
	for _, k := range order {
		if v := byID[k]; v.answered {
			out = append(out, *v)
		}
	}
	return out
}

// add reads one event into the invocation.
func (v *invocation) add(ev *session.Event) {
	text := eventText(ev.Content)
	var calls []amagent.ToolCall
	for _, p := range ev.Content.Parts {
		switch {
		case p == nil:
		case p.FunctionCall != nil:
			calls = append(calls, amagent.ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Arguments: jsonArguments(p.FunctionCall.Args)})
		case p.FunctionResponse != nil:
			b, err := json.Marshal(p.FunctionResponse.Response)
			if err != nil {
				b = []byte(`{"error":"result not representable as JSON"}`)
			}
			v.response = append(v.response, amagent.Message{ID: ev.ID + ":" + p.FunctionResponse.ID, Role: amagent.RoleTool,
				ToolCallID: p.FunctionResponse.ID, Text: string(b), CreatedAt: ev.Timestamp})
		}
	}
	if ev.Author == "user" {
		if text != "" {
			v.request = append(v.request, amagent.Message{ID: ev.ID, Role: amagent.RoleUser, Text: text, CreatedAt: ev.Timestamp})
		}
		return
	}
	if text != "" || len(calls) > 0 {
		v.response = append(v.response, amagent.Message{ID: ev.ID, Role: amagent.RoleAssistant, Text: text, ToolCalls: calls, CreatedAt: ev.Timestamp})
	}
	if text != "" && ev.IsFinalResponse() {
		v.answered = true
	}
}

// eventText joins the text parts of a content, thoughts left out.
func eventText(c *genai.Content) string {
	var parts []string
	for _, p := range c.Parts {
		if p != nil && !p.Thought && strings.TrimSpace(p.Text) != "" {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// jsonArguments renders a function call's arguments as the JSON object a
// ToolCall carries.
func jsonArguments(args map[string]any) json.RawMessage {
	if len(args) == 0 {
		return json.RawMessage(`{}`)
	}
	b, err := json.Marshal(args)
	if err != nil {
		return amagent.ToolArguments("")
	}
	return amagent.ToolArguments(string(b))
}
