package responses_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agentmemory/agentmemory/agent"
	resp "github.com/agentmemory/agentmemory/gateway/responses"
)

// sameJSON fails the test unless got and want are the same JSON value.
func sameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v: %s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON differs\n got %s\nwant %s", got, want)
	}
}

// chatBody parses a request and returns its chat body.
func chatBody(t *testing.T, body string, prepend ...agent.Message) (*resp.Request, []byte) {
	t.Helper()
	r, err := resp.ParseRequest([]byte(body))
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	b, err := r.ChatBody(prepend...)
	if err != nil {
		t.Fatalf("ChatBody: %v", err)
	}
	return r, b
}

func TestRequestTranslatesEveryMappedField(t *testing.T) {
	r, got := chatBody(t, `{
		"model": "gpt-4.1",
		"instructions": "Be brief.",
		"input": "Weather in Oslo?",
		"tools": [{"type":"function","name":"get_weather","description":"Weather.","parameters":{"type":"object"},"strict":true}],
		"tool_choice": {"type":"function","name":"get_weather"},
		"parallel_tool_calls": false,
		"text": {"format":{"type":"json_schema","name":"w","schema":{"type":"object"},"strict":true},"verbosity":"low"},
		"max_output_tokens": 100,
		"temperature": 0.5,
		"top_p": 0.9,
		"user": "u-1",
		"metadata": {"k":"v"},
		"reasoning": {"effort":"low","summary":"auto"},
		"stream": true,
		"stream_options": {"include_obfuscation": false},
		"top_logprobs": 2,
		"seed": 7,
		"service_tier": "flex",
		"store": false,
		"previous_response_id": "resp_prev",
		"conversation": {"id":"conv_1"},
		"include": ["reasoning.encrypted_content"],
		"truncation": "auto",
		"max_tool_calls": 3,
		"background": false
	}`)
	sameJSON(t, got, `{
		"model": "gpt-4.1",
		"messages": [{"role":"system","content":"Be brief."},{"role":"user","content":"Weather in Oslo?"}],
		"tools": [{"type":"function","function":{"name":"get_weather","description":"Weather.","parameters":{"type":"object"},"strict":true}}],
		"tool_choice": {"type":"function","function":{"name":"get_weather"}},
		"parallel_tool_calls": false,
		"response_format": {"type":"json_schema","json_schema":{"name":"w","schema":{"type":"object"},"strict":true}},
		"verbosity": "low",
		"max_completion_tokens": 100,
		"temperature": 0.5,
		"top_p": 0.9,
		"user": "u-1",
		"reasoning_effort": "low",
		"stream": true,
		"stream_options": {"include_usage": true, "include_obfuscation": false},
		"logprobs": true,
		"top_logprobs": 2,
		"seed": 7,
		"service_tier": "flex"
	}`)
	if r.Model != "gpt-4.1" || !r.Stream || r.Instructions != "Be brief." || r.User != "u-1" || r.Metadata["k"] != "v" {
		t.Errorf("request fields %+v", r)
	}
	if r.Store || r.PreviousResponseID != "resp_prev" || r.Conversation != "conv_1" || r.Truncation != "auto" ||
		!reflect.DeepEqual(r.Include, []string{"reasoning.encrypted_content"}) {
		t.Errorf("Responses-only fields: store %v, previous %q, conversation %q, truncation %q, include %v",
			r.Store, r.PreviousResponseID, r.Conversation, r.Truncation, r.Include)
	}
	if len(r.Withheld) != 2 || string(r.Withheld["max_tool_calls"]) != "3" || string(r.Withheld["background"]) != "false" {
		t.Errorf("Withheld = %v", r.Withheld)
	}
	if len(r.Passthrough) != 2 || string(r.Passthrough["seed"]) != "7" {
		t.Errorf("Passthrough = %v", r.Passthrough)
	}
}

func TestRequestKeepsMetadataFromTheUpstream(t *testing.T) {
	// OpenAI's Chat Completions refuses metadata without store: true
	// ("The 'metadata' parameter is only allowed when 'store' is
	// enabled"), and storing the completion there is not what a Responses
	// client's metadata asks for. It is echoed in the response instead.
	r, got := chatBody(t, `{"model":"m","input":"hi","metadata":{"session":"s1"}}`)
	sameJSON(t, got, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if r.Metadata["session"] != "s1" {
		t.Errorf("Metadata = %v", r.Metadata)
	}
	res, err := resp.FromChat([]byte(`{"choices":[{"index":0,"message":{"content":"x"},"finish_reason":"stop"}]}`), resp.Meta{Request: r})
	if err != nil {
		t.Fatal(err)
	}
	if rawField(string(res.Body), "metadata") != `{"session":"s1"}` {
		t.Errorf("response metadata %s", rawField(string(res.Body), "metadata"))
	}
}

func TestRequestDefaults(t *testing.T) {
	r, got := chatBody(t, `{"model":"m","input":"hi","text":{"format":{"type":"text"}},"parallel_tool_calls":true,"tool_choice":"auto","stream":false}`)
	// Plain text, and parallel_tool_calls and tool_choice without tools,
	// are left out: some servers refuse response_format, and OpenAI
	// refuses parallel_tool_calls and tool_choice without tools.
	sameJSON(t, got, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if !r.Store || r.Stream || r.Truncation != "" || r.PreviousResponseID != "" {
		t.Errorf("defaults: %+v", r)
	}
}

func TestRequestTranslatesInputItems(t *testing.T) {
	r, got := chatBody(t, `{"model":"m","input":[
		{"role":"developer","content":"Use metric units."},
		{"type":"message","role":"user","content":[
			{"type":"input_text","text":"What is in this picture?"},
			{"type":"input_image","image_url":"https://example.com/a.png","detail":"low"},
			{"type":"input_file","file_data":"data:application/pdf;base64,AAAA","filename":"a.pdf"}]},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"A cat.","annotations":[]}]},
		{"type":"reasoning","id":"rs_1","summary":[]},
		{"type":"function_call","call_id":"c1","name":"lookup","arguments":"{\"q\":\"cat\"}"},
		{"type":"function_call","call_id":"c2","name":"lookup","arguments":""},
		{"type":"function_call_output","call_id":"c1","output":"felis"},
		{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]},
		{"type":"function_call","call_id":"c3","name":"more","arguments":"{}"},
		{"role":"user","content":[{"type":"input_text","text":"Thanks"}]}
	]}`)
	sameJSON(t, got, `{"model":"m","messages":[
		{"role":"system","content":"Use metric units."},
		{"role":"user","content":[
			{"type":"text","text":"What is in this picture?"},
			{"type":"image_url","image_url":{"url":"https://example.com/a.png","detail":"low"}},
			{"type":"file","file":{"file_data":"data:application/pdf;base64,AAAA","filename":"a.pdf"}}]},
		{"role":"assistant","content":"A cat.","tool_calls":[
			{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"cat\"}"}},
			{"id":"c2","type":"function","function":{"name":"lookup","arguments":""}}]},
		{"role":"tool","content":"felis","tool_call_id":"c1"},
		{"role":"tool","content":"a\nb","tool_call_id":"c2"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c3","type":"function","function":{"name":"more","arguments":"{}"}}]},
		{"role":"user","content":"Thanks"}
	]}`)
	want := []agent.Message{
		agent.SystemText("Use metric units."),
		agent.UserText("What is in this picture?"),
		{Role: agent.RoleAssistant, Text: "A cat.", ToolCalls: []agent.ToolCall{
			{ID: "c1", Name: "lookup", Arguments: json.RawMessage(`{"q":"cat"}`)},
			{ID: "c2", Name: "lookup", Arguments: json.RawMessage(`{}`)},
		}},
		agent.ToolResult("c1", "felis"),
		agent.ToolResult("c2", "a\nb"),
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "c3", Name: "more", Arguments: json.RawMessage(`{}`)}}},
		agent.UserText("Thanks"),
	}
	if !reflect.DeepEqual(r.Input, want) {
		t.Errorf("Input\n got %+v\nwant %+v", r.Input, want)
	}
}

func TestRequestTranslatesToolChoices(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`"required"`, `"required"`},
		{`"none"`, `"none"`},
		{`{"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"f"}]}`,
			`{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"f"}}]}}`},
	} {
		_, got := chatBody(t, `{"model":"m","input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":`+tc.in+`}`)
		var body map[string]json.RawMessage
		_ = json.Unmarshal(got, &body)
		sameJSON(t, body["tool_choice"], tc.want)
	}
}

func TestRequestAsksForLogprobsWhenIncluded(t *testing.T) {
	_, got := chatBody(t, `{"model":"m","input":"x","include":["message.output_text.logprobs"],"text":{"format":{"type":"json_object"}}}`)
	sameJSON(t, got, `{"model":"m","messages":[{"role":"user","content":"x"}],"logprobs":true,"response_format":{"type":"json_object"}}`)
}

func TestChatBodyPutsPrependedMessagesAfterTheInstructions(t *testing.T) {
	prepend := []agent.Message{
		agent.SystemText("Memory: the user lives in Oslo."),
		agent.UserText("Earlier question"),
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "c0", Name: "f", Arguments: json.RawMessage(`{"a":1}`)}}},
		agent.ToolResult("c0", "42"),
		agent.AssistantText("Earlier answer"),
	}
	_, got := chatBody(t, `{"model":"m","instructions":"Be kind.","input":"Now?"}`, prepend...)
	sameJSON(t, got, `{"model":"m","messages":[
		{"role":"system","content":"Be kind."},
		{"role":"system","content":"Memory: the user lives in Oslo."},
		{"role":"user","content":"Earlier question"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c0","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},
		{"role":"tool","content":"42","tool_call_id":"c0"},
		{"role":"assistant","content":"Earlier answer"},
		{"role":"user","content":"Now?"}
	]}`)
	// Without instructions, the prepended messages come first.
	_, got = chatBody(t, `{"model":"m","input":"Now?"}`, agent.SystemText("Memory."))
	sameJSON(t, got, `{"model":"m","messages":[{"role":"system","content":"Memory."},{"role":"user","content":"Now?"}]}`)

	r, _ := resp.ParseRequest([]byte(`{"model":"m","input":"x"}`))
	for _, bad := range []agent.Message{{Role: "robot", Text: "x"}, {Role: agent.RoleTool, Text: "x"}} {
		if _, err := r.ChatBody(bad); !errors.Is(err, resp.ErrInvalid) || !strings.Contains(err.Error(), "prepended message 0") {
			t.Errorf("ChatBody(%+v) = %v, want ErrInvalid naming the message", bad, err)
		}
	}
}

func TestChatBodyLeavesOutPassthroughKeysDeleted(t *testing.T) {
	r, err := resp.ParseRequest([]byte(`{"model":"m","input":"x","memory_config":{"enabled":false},"seed":1}`))
	if err != nil {
		t.Fatal(err)
	}
	delete(r.Passthrough, "memory_config")
	got, err := r.ChatBody()
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, got, `{"model":"m","messages":[{"role":"user","content":"x"}],"seed":1}`)
}

func TestRequestErrorsNameWhatWasWrong(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		is         error
		want       string
	}{
		{"not JSON", `{"model":`, resp.ErrInvalid, "not a JSON object"},
		{"null", `null`, resp.ErrInvalid, "null"},
		{"array", `[]`, resp.ErrInvalid, "not a JSON object"},
		{"no model", `{"input":"x"}`, resp.ErrInvalid, "model is required"},
		{"model not a string", `{"model":5}`, resp.ErrInvalid, "model must be a string"},
		{"input a number", `{"model":"m","input":5}`, resp.ErrInvalid, "input must be a string or an array"},
		{"item not an object", `{"model":"m","input":["x"]}`, resp.ErrInvalid, "input[0]"},
		{"item field of the wrong type", `{"model":"m","input":[{"type":"function_call","call_id":5,"name":"f"}]}`, resp.ErrInvalid, "input[0]: responses: invalid: call_id is a number, want a string"},
		{"part field of the wrong type", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":["a"]}]}]}`, resp.ErrInvalid, "content[0]: responses: invalid: text is an array, want a string"},
		{"tool field of the wrong type", `{"model":"m","tools":[{"type":"function","name":"f","strict":"yes"}]}`, resp.ErrInvalid, "tools[0]: responses: invalid: strict is a string, want a boolean"},
		{"no role", `{"model":"m","input":[{"content":"x"}]}`, resp.ErrInvalid, "input[0]: responses: invalid: message has no role"},
		{"bad role", `{"model":"m","input":[{"role":"tool","content":"x"}]}`, resp.ErrInvalid, `role "tool"`},
		{"no content", `{"model":"m","input":[{"role":"user"}]}`, resp.ErrInvalid, "no content"},
		{"part without type", `{"model":"m","input":[{"role":"user","content":[{"text":"x"}]}]}`, resp.ErrInvalid, "input[0]: content[0]"},
		{"text part without text", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text"}]}]}`, resp.ErrInvalid, "has no text"},
		{"image in assistant", `{"model":"m","input":[{"role":"assistant","content":[{"type":"input_image","image_url":"u"}]}]}`, resp.ErrInvalid, "input_image part in a assistant message"},
		{"image by file id", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"f"}]}]}`, resp.ErrUnsupported, "file_id"},
		{"file by url", `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_url":"https://x"}]}]}`, resp.ErrUnsupported, "file_url"},
		{"audio part", `{"model":"m","input":[{"role":"user","content":[{"type":"input_audio"}]}]}`, resp.ErrUnsupported, `"input_audio"`},
		{"call without call_id", `{"model":"m","input":[{"type":"function_call","name":"f"}]}`, resp.ErrInvalid, "function_call has no call_id"},
		{"call without name", `{"model":"m","input":[{"type":"function_call","call_id":"c"}]}`, resp.ErrInvalid, "function_call has no name"},
		{"output without call_id", `{"model":"m","input":[{"type":"function_call_output","output":"x"}]}`, resp.ErrInvalid, "function_call_output has no call_id"},
		{"output an image", `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_image","image_url":"u"}]}]}`, resp.ErrUnsupported, `output[0]: part type "input_image"`},
		{"item reference", `{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}`, resp.ErrUnsupported, "item_reference"},
		{"hosted item", `{"model":"m","input":[{"type":"web_search_call","id":"ws"}]}`, resp.ErrUnsupported, `"web_search_call"`},
		{"hosted tool", `{"model":"m","tools":[{"type":"function","name":"f"},{"type":"file_search","vector_store_ids":["v"]}]}`, resp.ErrUnsupported, `tools[1]: responses: not supported over Chat Completions: tool type "file_search"`},
		{"tool without name", `{"model":"m","tools":[{"type":"function"}]}`, resp.ErrInvalid, "tools[0]"},
		{"tools not an array", `{"model":"m","tools":{}}`, resp.ErrInvalid, "tools must be an array"},
		{"hosted tool choice", `{"model":"m","tool_choice":{"type":"web_search_preview"}}`, resp.ErrUnsupported, `tool_choice: tool type "web_search_preview"`},
		{"bad tool choice", `{"model":"m","tool_choice":"always"}`, resp.ErrInvalid, `tool_choice "always"`},
		{"allowed hosted tool", `{"model":"m","tool_choice":{"type":"allowed_tools","mode":"auto","tools":[{"type":"mcp","server_label":"x"}]}}`, resp.ErrUnsupported, "tool_choice.tools[0]"},
		{"schema without name", `{"model":"m","text":{"format":{"type":"json_schema","schema":{}}}}`, resp.ErrInvalid, "no name"},
		{"schema without schema", `{"model":"m","text":{"format":{"type":"json_schema","name":"n"}}}`, resp.ErrInvalid, "no schema"},
		{"format name a number", `{"model":"m","text":{"format":{"type":"json_schema","name":5,"schema":{}}}}`, resp.ErrInvalid, "text.format.name is a number, want a string"},
		{"unknown format", `{"model":"m","text":{"format":{"type":"yaml"}}}`, resp.ErrInvalid, `text.format type "yaml"`},
		{"zero max tokens", `{"model":"m","max_output_tokens":0}`, resp.ErrInvalid, "max_output_tokens must be positive"},
		{"stream not a bool", `{"model":"m","stream":"yes"}`, resp.ErrInvalid, "stream must be a boolean"},
		{"metadata numbers", `{"model":"m","metadata":{"a":1}}`, resp.ErrInvalid, "metadata must be an object of strings"},
		{"bad truncation", `{"model":"m","truncation":"half"}`, resp.ErrInvalid, `truncation "half"`},
		{"background", `{"model":"m","background":true}`, resp.ErrUnsupported, "background"},
		{"prompt", `{"model":"m","prompt":{"id":"pmpt_1"}}`, resp.ErrUnsupported, "prompt"},
		{"reasoning effort a number", `{"model":"m","reasoning":{"effort":3}}`, resp.ErrInvalid, "reasoning.effort must be a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := resp.ParseRequest([]byte(tc.body))
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseRequest = %v, %v; want %v saying %q", r, err, tc.is, tc.want)
			}
		})
	}
}
