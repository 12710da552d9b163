package openai

import (
	"encoding/json"
	"testing"

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
