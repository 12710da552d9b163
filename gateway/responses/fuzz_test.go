package responses_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	resp "github.com/agentmemory/agentmemory/gateway/responses"
)

// FuzzParseRequest checks that any request body is either translated into
// a chat body that is a JSON object with a model and messages, or refused
// with an error wrapping ErrInvalid or ErrUnsupported — never a panic.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","input":"hi"}`,
		`{"model":"m","instructions":"i","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"u"}]}]}`,
		`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"x"}]}]}`,
		`{"model":"m","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"allowed_tools","mode":"auto","tools":[{"type":"function","name":"f"}]}}`,
		`{"model":"m","text":{"format":{"type":"json_schema","name":"n","schema":{}}},"stream":true,"stream_options":{}}`,
		`{"model":"m","input":[{"role":"assistant","content":[{"type":"refusal","refusal":"no"}]},{"type":"reasoning"}]}`,
		`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":null}]}`,
		`null`, `[]`, `{"model":null}`, `{"model":"m","input":[null]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := resp.ParseRequest(body)
		if err != nil {
			if !errors.Is(err, resp.ErrInvalid) && !errors.Is(err, resp.ErrUnsupported) {
				t.Fatalf("error %v wraps neither ErrInvalid nor ErrUnsupported", err)
			}
			return
		}
		chat, err := r.ChatBody()
		if err != nil {
			t.Fatalf("ChatBody of a parsed request: %v", err)
		}
		var c struct {
			Model    *string           `json:"model"`
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(chat, &c); err != nil || c.Model == nil || c.Messages == nil {
			t.Fatalf("chat body %s: %v", chat, err)
		}
	})
}

// FuzzStream feeds lines of a fuzzed upstream stream, one chunk per line,
// and checks that every chunk is taken or refused with a named error, that
// the events written are well-formed with counting sequence numbers, and
// that Finish ends the stream — never a panic.
func FuzzStream(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}` + "\n" + `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n[DONE]",
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{\"a"}}]}}]}` + "\n" +
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\":1}"}}]}}]}` + "\n" +
			`{"choices":[{"index":0,"delta":{"content":"x","refusal":"y"},"finish_reason":"length"}],"usage":{"prompt_tokens":1}}`,
		`{"choices":[{"index":1,"delta":{"content":"other choice"}}]}`,
		`{"error":{"message":"boom"}}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"f"}},{"index":3,"function":{"name":"g"}}]}}]}`,
		`[DONE]` + "\n" + `{}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stream string) {
		var buf bytes.Buffer
		st := resp.NewStream(&buf, resp.Meta{})
		for _, line := range strings.Split(stream, "\n") {
			if err := st.Chunk([]byte(line)); err != nil {
				if !errors.Is(err, resp.ErrInvalid) && !errors.Is(err, resp.ErrUpstream) {
					t.Fatalf("Chunk(%q) = %v, wrapping neither ErrInvalid nor ErrUpstream", line, err)
				}
			}
		}
		res, err := st.Finish()
		if err != nil && !errors.Is(err, resp.ErrStreamCut) {
			t.Fatalf("Finish = %v", err)
		}
		if res == nil || json.Valid(res.Body) == false {
			t.Fatalf("Finish result %+v", res)
		}
		evs := parseSSE(t, buf.Bytes())
		last := evs[len(evs)-1].name
		if last != "response.completed" && last != "response.incomplete" && last != "response.failed" {
			t.Fatalf("stream ends with %s", last)
		}
	})
}

// FuzzFromChat checks that any upstream answer is translated or refused
// with a named error, never a panic.
func FuzzFromChat(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"index":0,"message":{"content":"hi","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"stop"}],"usage":{"prompt_tokens":1}}`,
		`{"choices":[{"index":0,"message":{"refusal":"no"},"finish_reason":"content_filter"}]}`,
		`{"error":{"message":"x"}}`, `{}`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, chat []byte) {
		res, err := resp.FromChat(chat, resp.Meta{})
		if err != nil {
			if !errors.Is(err, resp.ErrInvalid) && !errors.Is(err, resp.ErrUpstream) {
				t.Fatalf("FromChat = %v, wrapping neither ErrInvalid nor ErrUpstream", err)
			}
			return
		}
		if !json.Valid(res.Body) {
			t.Fatalf("body %s", res.Body)
		}
	})
}
