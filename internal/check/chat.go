package check

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/prompts"
)

// What the chat checks ask for and expect.
const (
	checkSystem  = "You are taking part in an automated compatibility check. Follow the instructions exactly and keep answers short."
	pingPrompt   = "Reply with the single word: pong"
	toolName     = "lookup_code_word"
	toolSubject  = "heron"
	toolResult   = "MAGENTA-17"
	toolPrompt   = `Use the lookup_code_word tool to look up the code word for "heron", then reply with the code word alone.`
	jsonPrompt   = `Answer with a JSON object with two keys: "city" set to the string "Lisbon" and "year" set to the number 1755.`
	schemaPrompt = `Fill in the answer: "code" is the string "ORCHID" and "count" is the number 12.`
)

// codeWordArgs are the arguments of the check's tool.
type codeWordArgs struct {
	Name string `json:"name" jsonschema:"the word whose code word to look up"`
}

// schemaAnswer is the structured output the check asks for.
type schemaAnswer struct {
	Code  string `json:"code"`
	Count int    `json:"count"`
}

// chat checks one chat model.
func (c *checker) chat(ctx context.Context, section, name string, m agent.ChatClient) Section {
	sec := Section{Name: section, Target: name}
	if sec.Target == "" {
		sec.Target = "(unnamed)"
	}
	var lat []time.Duration
	var first string
	for i := range c.cfg.Calls {
		var resp *agent.ChatResponse
		d, err := c.call(ctx, func(ctx context.Context) error {
			var err error
			resp, err = m.Complete(ctx, &agent.ChatRequest{Messages: []agent.Message{agent.SystemText(checkSystem), agent.UserText(pingPrompt)}, MaxTokens: 16})
			return err
		})
		if err != nil {
			if i == 0 {
				sec.Items = append(sec.Items, unreachable(err, "the model", "latency", "tool calling", "JSON mode", "structured output")...)
				return sec
			}
			sec.Items = append(sec.Items, Item{Name: "latency", Status: Warn, Detail: fmt.Sprintf("call %d of %d failed: %s", i+1, c.cfg.Calls, errText(err))})
			break
		}
		if i == 0 {
			first = strings.TrimSpace(resp.Message.Text)
		}
		lat = append(lat, d)
	}
	switch {
	case first == "":
		sec.Items = append([]Item{{Name: "reachable", Status: Warn, Detail: "answered, but with no text"}}, sec.Items...)
	default:
		sec.Items = append([]Item{{Name: "reachable", Status: OK, Detail: fmt.Sprintf("answered %q", clip(first, 40))}}, sec.Items...)
	}
	if len(lat) == c.cfg.Calls { // else the failed call's item says so
		sec.Items = append(sec.Items, c.latency(&sec, lat, "calls"))
	}
	sec.Items = append(sec.Items, c.tools(ctx, m), c.jsonMode(ctx, m), c.structured(ctx, m))
	return sec
}

// tools checks that the model calls a tool it is told to call and uses the
// tool's result.
func (c *checker) tools(ctx context.Context, m agent.ChatClient) Item {
	const name = "tool calling"
	tool, err := agent.NewFuncTool(toolName, "Looks up the code word for a word.", func(ctx context.Context, a codeWordArgs) (string, error) {
		return toolResult, nil
	})
	if err != nil {
		return Item{Name: name, Status: Fail, Detail: err.Error()}
	}
	msgs := []agent.Message{agent.SystemText(checkSystem), agent.UserText(toolPrompt)}
	var resp *agent.ChatResponse
	if _, err := c.call(ctx, func(ctx context.Context) error {
		resp, err = m.Complete(ctx, &agent.ChatRequest{Messages: msgs, Tools: []agent.Tool{tool}})
		return err
	}); err != nil {
		return Item{Name: name, Status: Fail, Detail: "a request offering a tool failed: " + errText(err)}
	}
	var call *agent.ToolCall
	for i := range resp.Message.ToolCalls {
		if resp.Message.ToolCalls[i].Name == toolName {
			call = &resp.Message.ToolCalls[i]
			break
		}
	}
	if call == nil {
		return Item{Name: name, Status: Fail, Detail: fmt.Sprintf("answered without calling the tool it was told to call: %q", clip(strings.TrimSpace(resp.Message.Text), 80))}
	}
	args, argErr := tool.Decode(call.Arguments)
	result, _ := tool.Call(ctx, call.Arguments)
	if argErr != nil {
		result = "error: " + argErr.Error()
	}
	msgs = append(msgs, resp.Message, agent.ToolResult(call.ID, result))
	var final *agent.ChatResponse
	if _, err := c.call(ctx, func(ctx context.Context) error {
		final, err = m.Complete(ctx, &agent.ChatRequest{Messages: msgs, Tools: []agent.Tool{tool}})
		return err
	}); err != nil {
		return Item{Name: name, Status: Fail, Detail: "called the tool, but the request carrying its result failed: " + errText(err)}
	}
	answer := strings.TrimSpace(final.Message.Text)
	switch {
	case argErr != nil:
		return Item{Name: name, Status: Warn, Detail: fmt.Sprintf("called the tool with arguments that do not fit its schema (%s)", clip(string(call.Arguments), 80))}
	case !strings.Contains(strings.ToUpper(answer), toolResult):
		return Item{Name: name, Status: Warn, Detail: fmt.Sprintf("called the tool, but the answer did not use its result: %q", clip(answer, 80))}
	case !strings.EqualFold(strings.TrimSpace(args.Name), toolSubject):
		return Item{Name: name, Status: Warn, Detail: fmt.Sprintf("called the tool with name %q, not %q", clip(args.Name, 40), toolSubject)}
	}
	return Item{Name: name, Status: OK, Detail: "called " + toolName + " and answered with its result"}
}

// jsonMode checks JSON mode (response_format json_object), which memory's
// own prompts use.
func (c *checker) jsonMode(ctx context.Context, m agent.ChatClient) Item {
	const name = "JSON mode"
	req := &agent.ChatRequest{
		Messages:       []agent.Message{agent.SystemText(checkSystem + " Answer with a JSON object only."), agent.UserText(jsonPrompt)},
		ResponseFormat: &agent.ResponseFormat{Type: agent.JSONObject},
	}
	var resp *agent.ChatResponse
	if _, err := c.call(ctx, func(ctx context.Context) error {
		var err error
		resp, err = m.Complete(ctx, req)
		return err
	}); err != nil {
		return Item{Name: name, Status: Fail, Detail: "a json_object request failed: " + errText(err)}
	}
	var got struct {
		City string  `json:"city"`
		Year float64 `json:"year"`
	}
	text := strings.TrimSpace(resp.Message.Text)
	if reason := formatRefusal(m, "json_object"); reason != "" {
		return withoutFormat(name, reason, text, "city", "year")
	}
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		return Item{Name: name, Status: Fail, Detail: fmt.Sprintf("the answer is not a JSON object: %q", clip(text, 80))}
	}
	if got.City != "Lisbon" || got.Year != 1755 {
		return Item{Name: name, Status: Warn, Detail: fmt.Sprintf("a JSON object, but not the values asked for: %s", clip(text, 80))}
	}
	return Item{Name: name, Status: OK, Detail: "json_object: a JSON object with the values asked for"}
}

// structured checks structured output (response_format json_schema).
func (c *checker) structured(ctx context.Context, m agent.ChatClient) Item {
	const name = "structured output"
	schema, err := jsonschema.For[schemaAnswer](nil)
	if err != nil {
		return Item{Name: name, Status: Fail, Detail: err.Error()}
	}
	req := &agent.ChatRequest{
		Messages:       []agent.Message{agent.SystemText(checkSystem), agent.UserText(schemaPrompt)},
		ResponseFormat: &agent.ResponseFormat{Type: agent.JSONSchema, Name: "check_answer", Schema: schema, Strict: true},
	}
	var resp *agent.ChatResponse
	if _, err := c.call(ctx, func(ctx context.Context) error {
		resp, err = m.Complete(ctx, req)
		return err
	}); err != nil {
		return Item{Name: name, Status: Fail, Detail: "a json_schema request failed: " + errText(err)}
	}
	text := strings.TrimSpace(resp.Message.Text)
	if reason := formatRefusal(m, "json_schema"); reason != "" {
		return withoutFormat(name, reason, text, "code", "count")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &obj); err != nil {
		return Item{Name: name, Status: Fail, Detail: fmt.Sprintf("the answer is not a JSON object: %q", clip(text, 80))}
	}
	var got schemaAnswer
	if json.Unmarshal([]byte(text), &got) != nil || len(obj) != 2 || obj["code"] == nil || obj["count"] == nil {
		return Item{Name: name, Status: Fail, Detail: fmt.Sprintf("the answer does not follow the schema: %s", clip(text, 80))}
	}
	if got.Code != "ORCHID" || got.Count != 12 {
		return Item{Name: name, Status: Warn, Detail: fmt.Sprintf("follows the schema, but not with the values asked for: %s", clip(text, 80))}
	}
	return Item{Name: name, Status: OK, Detail: "json_schema: the schema's fields with the values asked for"}
}

// refuser is a chat client that reports the request fields its server
// refused and that it now leaves out (llm/openai's Chat).
type refuser interface {
	Refused() map[string]string
}

// formatRefusal returns the server's refusal of response_format of the
// type typ (json_object, json_schema) when m reports one: m then answered
// the check's request of that type without it.
func formatRefusal(m agent.ChatClient, typ string) string {
	if r, ok := m.(refuser); ok {
		return r.Refused()["response_format:"+typ]
	}
	return ""
}

// withoutFormat judges an answer to a JSON request that went without
// response_format, which the server refuses: memory goes on without it
// (its prompts ask for JSON in words and its parsers read answers
// leniently), so a JSON object with the wanted keys anywhere in the answer
// is a warning, and no such object a failure.
func withoutFormat(name, reason, text string, keys ...string) Item {
	refused := fmt.Sprintf("the server refuses response_format (%s)", clip(reason, 160))
	if _, err := prompts.FindObject([]byte(text), keys...); err != nil {
		return Item{Name: name, Status: Fail, Detail: fmt.Sprintf("%s, and without it the model did not answer the JSON object asked for: %q", refused, clip(text, 80))}
	}
	return Item{Name: name, Status: Warn, Detail: refused + "; memory sends its prompts without it and reads the JSON in the answers leniently, which this model's answer allows"}
}
