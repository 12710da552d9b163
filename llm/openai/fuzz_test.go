package openai

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
)

// FuzzResponseFromCompletion feeds arbitrary response bodies through the
// SDK's decoder and our conversion: no panic, and any accepted response
// yields tool calls with an id, a name and valid JSON arguments.
func FuzzResponseFromCompletion(f *testing.F) {
	for _, s := range []string{
		`{"id":"c1","model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
		`{"id":"c2","choices":[{"finish_reason":"tool_calls","message":{"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}}]}`,
		`{"choices":[{"message":{"tool_calls":[{"function":{"name":"f","arguments":"{bad"}}]}}]}`,
		`{"choices":[{"message":{"tool_calls":[{"type":"custom","custom":{"name":"x"}}]}}]}`,
		`{"choices":[]}`, `{}`, `null`, `[]`, `{"choices":[{"message":{"refusal":"no"}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var cc openai.ChatCompletion
		if err := json.Unmarshal(body, &cc); err != nil {
			return
		}
		resp, err := responseFromCompletion(&cc)
		if err != nil {
			return
		}
		for i, tc := range resp.Message.ToolCalls {
			if tc.ID == "" || tc.Name == "" {
				t.Fatalf("tool call %d without id or name: %+v", i, tc)
			}
			if !json.Valid(tc.Arguments) {
				t.Fatalf("tool call %d arguments %q: not valid JSON", i, tc.Arguments)
			}
		}
		if _, err := json.Marshal(resp.Message); err != nil {
			t.Fatalf("message does not marshal: %v", err)
		}
	})
}

// FuzzErrorAnswer feeds arbitrary error bodies, as any server may send,
// through the reading of their message and the decision whether they
// refuse a feature: no panic, a message of at most 500 bytes plus the
// ellipsis and valid UTF-8, and never a refusal of a feature the request
// did not use.
func FuzzErrorAnswer(f *testing.F) {
	for _, s := range []string{
		`{"error":{"message":"registry.ollama.ai/library/x does not support tools","type":"api_error"}}`,
		`{"error":"'response_format.type' must be 'json_schema' or 'text'"}`,
		`{"object":"error","message":"stream_options: Extra inputs are not permitted","code":400}`,
		`{"detail":[{"loc":["body","stream_options",0],"msg":"Extra inputs are not permitted"}]}`,
		`{"detail":{"loc":null,"msg":{"a":[]}}}`, `{"error":null}`, `[]`, ``, "\xff\xfe",
		`{"detail":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`,
	} {
		f.Add([]byte(s), 400, uint8(0xff))
	}
	f.Fuzz(func(t *testing.T, body []byte, status int, used uint8) {
		a := errorAnswer{status: status, body: body}
		msg := a.message()
		if len(msg) > 500+len("…") || !utf8.ValidString(msg) {
			t.Fatalf("message %q", msg)
		}
		f, ok := refusedFeature(status, msg, feature(used))
		if ok && (feature(used)&f == 0 || f == 0) {
			t.Fatalf("refused %v, not among the used %v", f, feature(used))
		}
	})
}
