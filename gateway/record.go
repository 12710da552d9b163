package gateway

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentmemory/agentmemory/agent"
)

// record stores the request's turn once its answer is complete: the last
// user message (with the user messages right before it), what followed it
// in the request (the assistant's tool calls and the client's results, when
// the client answers tool calls) and the answer, tool calls included.
// An answer that calls the client's tools records nothing: the turn goes on in
// the client's next request, which carries the results, and is recorded
// with its answer. A Responses request's turn is its input and the
// answer, whatever the answer (see chain.turn).
func (h *Handler) record(ctx context.Context, plan *memoryPlan, c *chatRequest, a *answer) error {
	if plan.sess == nil || !plan.record {
		return nil
	}
	var req, resp []agent.Message
	if c.chain != nil {
		req, resp = c.chain.turn(a)
		return h.invoked(ctx, plan, req, resp)
	}
	if !a.final() {
		return nil
	}
	last := c.lastUser()
	if last < 0 {
		return nil
	}
	first := last
	for first > 0 && c.views[first-1].Role == "user" {
		first--
	}
	for _, v := range c.views[first : last+1] {
		req = append(req, agent.Message{ID: agent.NewID(), Role: agent.RoleUser, Name: v.Name, Text: v.text()})
	}
	for _, v := range c.views[last+1:] {
		switch v.Role {
		case "assistant":
			resp = append(resp, agent.Message{ID: agent.NewID(), Role: agent.RoleAssistant, Text: v.text(), ToolCalls: toolCalls(v.ToolCalls)})
		case "tool":
			m := agent.ToolResult(v.ToolCallID, v.text())
			m.ID = agent.NewID()
			resp = append(resp, m)
		}
	}
	resp = append(resp, agent.Message{ID: agent.NewID(), Role: agent.RoleAssistant, Text: a.text.String(), ToolCalls: toolCalls(a.calls)})
	return h.invoked(ctx, plan, req, resp)
}

// invoked stores a turn in the plan's session, noting the user's scope in
// the memory store first.
func (h *Handler) invoked(ctx context.Context, plan *memoryPlan, req, resp []agent.Message) error {
	if h.sessions.note(plan.sess.UserID()) {
		if err := h.mem.NoteScope(ctx, plan.scope); err != nil {
			h.sessions.unnote(plan.sess.UserID())
			return fmt.Errorf("note scope: %w", err)
		}
	}
	return h.p.Invoked(ctx, &agent.InvokedContext{Session: plan.sess, Request: req, Response: resp})
}

// toolCalls converts wire tool calls, normalising their arguments.
func toolCalls(calls []wireToolCall) []agent.ToolCall {
	var out []agent.ToolCall
	for _, c := range calls {
		if strings.TrimSpace(c.Function.Name) == "" {
			continue
		}
		out = append(out, agent.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: agent.ToolArguments(c.Function.Arguments)})
	}
	return out
}
