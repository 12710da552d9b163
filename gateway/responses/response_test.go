package responses_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/responses"

	resp "github.com/agentmemory/agentmemory/gateway/responses"
)

// rawField returns a top-level field of a JSON object, as JSON.
func rawField(obj, name string) string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal([]byte(obj), &m)
	return string(m[name])
}

// fromChat translates a chat answer and decodes the object with openai-go.
func fromChat(t *testing.T, chat string, meta resp.Meta) (*resp.Result, responses.Response) {
	t.Helper()
	res, err := resp.FromChat([]byte(chat), meta)
	if err != nil {
		t.Fatalf("FromChat: %v", err)
	}
	var r responses.Response
	if err := json.Unmarshal(res.Body, &r); err != nil {
		t.Fatalf("SDK decode: %v: %s", err, res.Body)
	}
	return res, r
}

func TestFromChatEchoesTheRequest(t *testing.T) {
	req, err := resp.ParseRequest([]byte(`{"model":"m","input":"x","store":false,"previous_response_id":"resp_prev",
		"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"tool_choice":"required",
		"text":{"format":{"type":"json_object"}},"top_p":0.5,"user":"u","reasoning":{"effort":"high"},"truncation":"auto"}`))
	if err != nil {
		t.Fatal(err)
	}
	created := time.Unix(1700000000, 0)
	res, r := fromChat(t, `{"model":"m-2","choices":[{"index":0,"message":{"role":"assistant","content":"{}"},"finish_reason":"stop"}]}`,
		resp.Meta{ID: "resp_1", CreatedAt: created, Request: req})
	if r.ID != "resp_1" || res.ID != "resp_1" || r.CreatedAt != 1700000000 || r.Model != "m-2" {
		t.Errorf("id %q, created_at %v, model %q", r.ID, r.CreatedAt, r.Model)
	}
	if r.PreviousResponseID != "resp_prev" || rawField(r.RawJSON(), "store") != "false" || r.TopP != 0.5 || r.User != "u" || r.Reasoning.Effort != "high" || r.Truncation != "auto" {
		t.Errorf("echo: %s", r.RawJSON())
	}
	if r.ToolChoice.OfToolChoiceMode != "required" || len(r.Tools) != 1 || r.Tools[0].AsFunction().Name != "f" || r.Text.Format.Type != "json_object" {
		t.Errorf("echo of tools: %s", r.RawJSON())
	}
	// Defaults, when the request set nothing.
	_, d := fromChat(t, `{"choices":[{"index":0,"message":{"content":"hi"},"finish_reason":"stop"}]}`, resp.Meta{})
	if !strings.HasPrefix(d.ID, "resp_") || len(d.ID) != len("resp_")+48 || rawField(d.RawJSON(), "store") != "true" || d.Temperature != 1 || d.TopP != 1 ||
		!d.ParallelToolCalls || d.ToolChoice.OfToolChoiceMode != "auto" || d.Text.Format.Type != "text" || d.Truncation != "disabled" {
		t.Errorf("defaults: %s", d.RawJSON())
	}
	if d.JSON.PreviousResponseID.Raw() != "null" || d.JSON.Error.Raw() != "null" || d.JSON.IncompleteDetails.Raw() != "null" {
		t.Errorf("unset fields must be null: %s", d.RawJSON())
	}
}

func TestFromChatTranslatesTheAnswer(t *testing.T) {
	res, r := fromChat(t, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","service_tier":"default",
		"choices":[{"index":0,"message":{"role":"assistant","content":"Sure.","refusal":null,"tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},
			{"type":"function","function":{"name":"g","arguments":"not json"}}]},
		"logprobs":{"content":[{"token":"Sure","logprob":-0.5,"bytes":[83],"top_logprobs":[]}]},
		"finish_reason":"tool_calls"}],
		"usage":{"prompt_tokens":10,"completion_tokens":4,"total_tokens":14,"prompt_tokens_details":{"cached_tokens":6},"completion_tokens_details":{"reasoning_tokens":1}}}`,
		resp.Meta{})
	if len(r.Output) != 3 {
		t.Fatalf("output %s", r.RawJSON())
	}
	msg := r.Output[0].AsMessage()
	text := msg.Content[0]
	if text.Text != "Sure." || text.Annotations == nil || len(text.Logprobs) != 1 || text.Logprobs[0].Token != "Sure" {
		t.Errorf("message %s", msg.RawJSON())
	}
	f, g := r.Output[1].AsFunctionCall(), r.Output[2].AsFunctionCall()
	if f.CallID != "call_1" || f.Name != "f" || f.Arguments != `{"a":1}` || f.Status != "completed" || !strings.HasPrefix(f.ID, "fc_") {
		t.Errorf("first call %s", f.RawJSON())
	}
	if !strings.HasPrefix(g.CallID, "call_") || g.Arguments != "not json" {
		t.Errorf("second call %s: want a call id supplied and the arguments verbatim", g.RawJSON())
	}
	u := r.Usage
	if u.InputTokens != 10 || u.OutputTokens != 4 || u.TotalTokens != 14 || u.InputTokensDetails.CachedTokens != 6 || u.OutputTokensDetails.ReasoningTokens != 1 {
		t.Errorf("usage %s", u.RawJSON())
	}
	if r.ServiceTier != "default" || r.Status != "completed" {
		t.Errorf("service_tier %q, status %q", r.ServiceTier, r.Status)
	}
	m := res.Message
	if m.Text != "Sure." || len(m.ToolCalls) != 2 || m.ToolCalls[1].ID != g.CallID || string(m.ToolCalls[1].Arguments) != `"not json"` {
		t.Errorf("message %+v: the bad arguments are carried as a JSON string", m)
	}
	if res.Usage.PromptTokens != 10 || res.Usage.CompletionTokens != 4 || res.Usage.TotalTokens != 14 {
		t.Errorf("result usage %+v", res.Usage)
	}
}

func TestFromChatLeavesOutTheEmptyTextOfAToolCall(t *testing.T) {
	_, r := fromChat(t, `{"choices":[{"index":0,"message":{"content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`, resp.Meta{})
	if len(r.Output) != 1 || r.Output[0].Type != "function_call" {
		t.Errorf("output %s", r.RawJSON())
	}
	// A reply with neither text nor calls is one empty message.
	_, r = fromChat(t, `{"choices":[{"index":0,"message":{"content":null},"finish_reason":"stop"}]}`, resp.Meta{})
	if len(r.Output) != 1 || r.Output[0].Type != "message" || r.OutputText() != "" {
		t.Errorf("output %s", r.RawJSON())
	}
}

func TestFromChatCarriesARefusal(t *testing.T) {
	res, r := fromChat(t, `{"choices":[{"index":0,"message":{"content":null,"refusal":"No."},"finish_reason":"stop"}]}`, resp.Meta{})
	c := r.Output[0].AsMessage().Content
	if len(c) != 1 || c[0].Type != "refusal" || c[0].Refusal != "No." || res.Message.Text != "" {
		t.Errorf("output %s, recorded %q", r.RawJSON(), res.Message.Text)
	}
}

func TestFromChatMarksACutAnswerIncomplete(t *testing.T) {
	for reason, want := range map[string]string{"length": "max_output_tokens", "content_filter": "content_filter"} {
		res, r := fromChat(t, `{"choices":[{"index":0,"message":{"content":"Once upon"},"finish_reason":"`+reason+`"}]}`, resp.Meta{})
		if r.Status != "incomplete" || r.IncompleteDetails.Reason != want || r.Output[0].AsMessage().Status != "incomplete" || r.CompletedAt != 0 {
			t.Errorf("%s: %s", reason, r.RawJSON())
		}
		if res.Status != "incomplete" || res.IncompleteReason != want {
			t.Errorf("%s: result %+v", reason, res)
		}
	}
}

func TestFromChatWithoutUsageCountsZero(t *testing.T) {
	_, r := fromChat(t, `{"choices":[{"index":0,"message":{"content":"hi"},"finish_reason":"stop"}]}`, resp.Meta{})
	if r.JSON.Usage.Raw() == "null" || r.Usage.TotalTokens != 0 || !r.Usage.JSON.InputTokensDetails.Valid() {
		t.Errorf("usage %s", r.Usage.RawJSON())
	}
}

func TestFromChatErrorsNameWhatWasWrong(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		is         error
		want       string
	}{
		{"not JSON", `<html>`, resp.ErrInvalid, "not a chat completion"},
		{"no choices", `{"choices":[]}`, resp.ErrInvalid, "no choices"},
		{"error body", `{"error":{"message":"quota exceeded"}}`, resp.ErrUpstream, "quota exceeded"},
		{"call without name", `{"choices":[{"index":0,"message":{"tool_calls":[{"id":"c","function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`, resp.ErrInvalid, "tool call 0 has no function name"},
	} {
		if _, err := resp.FromChat([]byte(tc.body), resp.Meta{}); !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: FromChat = %v, want %v saying %q", tc.name, err, tc.is, tc.want)
		}
	}
}
