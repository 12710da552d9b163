package adk

import (
	"encoding/json"
	"fmt"

	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"

	amagent "github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/retrieval"
)

// Tool returns retrieve_user_facts as an ADK tool, for an agent's
// llmagent.Config.Tools: the memory mini-agent searches the memory of the
// invocation's user (tool.Context.UserID; no argument names a user) and
// answers with cited facts, fenced as data. The plugin offers the same tool
// by itself, per the provider's retrieval mode; listing it in the agent
// offers it whatever that mode. A failing memory answers that no memory is
// available; an empty query is an error the model sees.
func (m *Memory) Tool() (tool.Tool, error) {
	proto := m.p.Retriever().Tool("schema-only") // bound to no real user: used for its name, description and schema
	t, err := functiontool.New(functiontool.Config{
		Name:        proto.Name(),
		Description: proto.Description(),
		InputSchema: proto.Schema(),
	}, func(tc tool.Context, args map[string]any) (string, error) {
		if err := amagent.ValidateUserID(tc.UserID()); err != nil {
			return "", fmt.Errorf("%s: user id %q: %w", retrieval.ToolName, tc.UserID(), err)
		}
		return callTool(tc, m.p.Retriever().Tool(tc.UserID()), args)
	})
	if err != nil {
		return nil, fmt.Errorf("adk: tool %s: %w", retrieval.ToolName, err)
	}
	return t, nil
}

// adkTool wraps an agentmemory tool (already bound to its user) as an ADK
// function tool with the same name, description and argument schema. Its
// text result reaches the model as {"result": text}.
func adkTool(t amagent.Tool) (tool.Tool, error) {
	return functiontool.New(functiontool.Config{
		Name:        t.Name(),
		Description: t.Description(),
		InputSchema: t.Schema(),
	}, func(tc tool.Context, args map[string]any) (string, error) {
		return callTool(tc, t, args)
	})
}

// callTool calls an agentmemory tool with an ADK call's arguments.
func callTool(tc tool.Context, t amagent.Tool, args map[string]any) (string, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return "", fmt.Errorf("%s: arguments: %w", t.Name(), err)
	}
	return t.Call(tc, raw)
}
