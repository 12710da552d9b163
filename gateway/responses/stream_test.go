package responses_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	resp "github.com/agentmemory/agentmemory/gateway/responses"
)

// sse is one server-sent event: its event: line and its data.
type sse struct {
	name string
	data []byte
}

// parseSSE splits a Responses stream into events, failing the test on a
// line that is not event:, data: or blank, on an event whose event: line
// is not its data's type, and on sequence numbers that do not count up
// from 0.
func parseSSE(t *testing.T, b []byte) []sse {
	t.Helper()
	var out []sse
	var cur sse
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case line == "":
			if cur.name != "" || cur.data != nil {
				out = append(out, cur)
				cur = sse{}
			}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = append(cur.data, strings.TrimPrefix(line, "data: ")...)
		default:
			t.Fatalf("stream line %q is not event:, data: or blank", line)
		}
	}
	for i, e := range out {
		var head struct {
			Type           string `json:"type"`
			SequenceNumber *int   `json:"sequence_number"`
		}
		if err := json.Unmarshal(e.data, &head); err != nil {
			t.Fatalf("event %d data %s: %v", i, e.data, err)
		}
		if head.Type != e.name {
			t.Errorf("event %d: event line %q, data type %q", i, e.name, head.Type)
		}
		if head.SequenceNumber == nil || *head.SequenceNumber != i {
			t.Errorf("event %d (%s): sequence_number %v", i, e.name, head.SequenceNumber)
		}
	}
	return out
}

// names returns the events' names.
func names(evs []sse) []string {
	n := make([]string, len(evs))
	for i, e := range evs {
		n[i] = e.name
	}
	return n
}

// accumulate feeds the events to openai-go's ResponseAccumulator, which
// checks that item ids, indices and fields agree from event to event, and
// returns its snapshot and the response it rebuilds.
func accumulate(t *testing.T, evs []sse) (responses.ResponseAccumulatorSnapshot, *responses.Response) {
	t.Helper()
	var acc responses.ResponseAccumulator
	for i, e := range evs {
		var ev responses.ResponsesServerEventUnion
		if err := json.Unmarshal(e.data, &ev); err != nil {
			t.Fatalf("event %d (%s): SDK decode: %v", i, e.name, err)
		}
		if err := acc.AddEvent(ev); err != nil {
			t.Fatalf("event %d (%s) %s: SDK accumulator: %v", i, e.name, e.data, err)
		}
	}
	r, err := acc.ReconstructedResponse()
	if err != nil {
		t.Fatalf("SDK accumulator: %v", err)
	}
	return acc.Snapshot(), r
}

// chunk returns a chat.completion.chunk with one choice carrying delta.
func chunk(delta string, finish ...string) []byte {
	f := "null"
	if len(finish) > 0 {
		f = fmt.Sprintf("%q", finish[0])
	}
	return []byte(fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m-up","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`, delta, f))
}

// toolChunk returns a chunk carrying one tool-call fragment.
func toolChunk(index int, id, name, args string) []byte {
	fn := map[string]string{"arguments": args}
	if name != "" {
		fn["name"] = name
	}
	tc := map[string]any{"index": index, "function": fn}
	if id != "" {
		tc["id"], tc["type"] = id, "function"
	}
	b, _ := json.Marshal(map[string]any{"tool_calls": []any{tc}})
	return chunk(string(b))
}

// feed sends chunks to a new Stream and finishes it.
func feed(t *testing.T, chunks ...[]byte) ([]sse, *resp.Result, error) {
	t.Helper()
	var buf bytes.Buffer
	st := resp.NewStream(&buf, resp.Meta{ID: "resp_test"})
	for i, c := range chunks {
		if err := st.Chunk(c); err != nil {
			t.Fatalf("chunk %d %s: %v", i, c, err)
		}
	}
	res, err := st.Finish()
	return parseSSE(t, buf.Bytes()), res, err
}

func TestStreamInterleavesToolCallsByIndex(t *testing.T) {
	evs, res, err := feed(t,
		chunk(`{"role":"assistant","content":""}`),
		chunk(`{"content":"Checking "}`),
		chunk(`{"content":"both."}`),
		toolChunk(0, "call_a", "get_weather", `{"city":`),
		toolChunk(1, "call_b", "get_time", `{"tz":`),
		toolChunk(0, "", "", `"Oslo"}`),
		toolChunk(1, "", "", `"CET"}`),
		chunk(`{"content":"Done."}`),
		chunk(`{}`, "tool_calls"),
		[]byte(`{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":3}}}`),
		[]byte("[DONE]"),
	)
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	snap, rebuilt := accumulate(t, evs)
	if len(snap.Output) != 4 {
		t.Fatalf("accumulated %d items, want message, call, call, message: %+v", len(snap.Output), snap.Output)
	}
	if snap.Output[1].Arguments != `{"city":"Oslo"}` || snap.Output[2].Arguments != `{"tz":"CET"}` {
		t.Errorf("accumulated arguments %q, %q", snap.Output[1].Arguments, snap.Output[2].Arguments)
	}
	if snap.OutputText() != "Checking both.Done." || rebuilt.OutputText() != "Checking both.Done." {
		t.Errorf("text: accumulated %q, final %q", snap.OutputText(), rebuilt.OutputText())
	}
	u := rebuilt.Usage
	if u.InputTokens != 5 || u.OutputTokens != 9 || u.TotalTokens != 14 || u.InputTokensDetails.CachedTokens != 2 || u.OutputTokensDetails.ReasoningTokens != 3 {
		t.Errorf("usage = %s", u.RawJSON())
	}
	if rebuilt.Model != "m-up" || rebuilt.ID != "resp_test" || rebuilt.Status != "completed" {
		t.Errorf("final response %s", rebuilt.RawJSON())
	}
	for i, it := range rebuilt.Output {
		if it.Status != "completed" {
			t.Errorf("output %d status %q", i, it.Status)
		}
	}
	m := res.Message
	if m.Text != "Checking both.Done." || len(m.ToolCalls) != 2 || m.ToolCalls[0].Name != "get_weather" || string(m.ToolCalls[1].Arguments) != `{"tz":"CET"}` {
		t.Errorf("result message %+v", m)
	}
	if res.Usage.TotalTokens != 14 || res.ID != "resp_test" {
		t.Errorf("result %+v", res)
	}
}

func TestStreamTakesToolCallsWithoutIndex(t *testing.T) {
	// Some servers (older Ollama) send each call whole, without an index.
	evs, res, err := feed(t,
		chunk(`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"a","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"b","arguments":"{\"x\":1}"}}]}`),
		chunk(`{}`, "tool_calls"),
	)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := accumulate(t, evs)
	if len(snap.Output) != 2 || snap.Output[0].CallID != "c1" || snap.Output[1].Name != "b" || snap.Output[1].Arguments != `{"x":1}` {
		t.Errorf("accumulated %+v", snap.Output)
	}
	if len(res.Message.ToolCalls) != 2 {
		t.Errorf("result %+v", res.Message)
	}
}

func TestStreamSuppliesAMissingToolCallID(t *testing.T) {
	evs, res, err := feed(t, toolChunk(0, "", "a", "{}"), chunk(`{}`, "tool_calls"))
	if err != nil {
		t.Fatal(err)
	}
	_, r := accumulate(t, evs)
	id := r.Output[0].AsFunctionCall().CallID
	if !strings.HasPrefix(id, "call_") || res.Message.ToolCalls[0].ID != id {
		t.Errorf("call id %q, recorded %q", id, res.Message.ToolCalls[0].ID)
	}
}

func TestStreamCarriesRefusalsAndLogprobs(t *testing.T) {
	lp := `{"token":"No","logprob":-0.1,"bytes":[78],"top_logprobs":[]}`
	evs, res, err := feed(t,
		[]byte(`{"choices":[{"index":0,"delta":{"content":"No"},"logprobs":{"content":[`+lp+`]}}]}`),
		chunk(`{"refusal":"I can't help with that."}`),
		chunk(`{}`, "stop"),
	)
	if err != nil {
		t.Fatal(err)
	}
	_, r := accumulate(t, evs)
	msg := r.Output[0].AsMessage()
	if len(msg.Content) != 2 || msg.Content[0].Type != "output_text" || msg.Content[1].Type != "refusal" || msg.Content[1].Refusal != "I can't help with that." {
		t.Fatalf("message %s", msg.RawJSON())
	}
	if lps := msg.Content[0].Logprobs; len(lps) != 1 || lps[0].Token != "No" || lps[0].Logprob != -0.1 {
		t.Errorf("logprobs %s", msg.Content[0].RawJSON())
	}
	all := strings.Join(names(evs), " ")
	for _, want := range []string{"response.refusal.delta", "response.refusal.done"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %s in %v", want, all)
		}
	}
	if res.Message.Text != "No" {
		t.Errorf("recorded text %q, want the refusal left out", res.Message.Text)
	}
}

func TestStreamOfAnEmptyAnswerHasAnEmptyMessage(t *testing.T) {
	evs, res, err := feed(t, chunk(`{"role":"assistant","content":""}`), chunk(`{}`, "stop"), []byte("[DONE]"))
	if err != nil {
		t.Fatal(err)
	}
	_, r := accumulate(t, evs)
	if len(r.Output) != 1 || r.Output[0].Type != "message" || r.OutputText() != "" || r.Output[0].AsMessage().Content[0].Type != "output_text" {
		t.Errorf("output %s", r.RawJSON())
	}
	if res.Status != "completed" || res.Message.Text != "" {
		t.Errorf("result %+v", res)
	}
}

func TestStreamCutShortFails(t *testing.T) {
	var buf bytes.Buffer
	st := resp.NewStream(&buf, resp.Meta{})
	for _, c := range [][]byte{chunk(`{"content":"Half an ans"}`), toolChunk(0, "c1", "f", `{"a":`)} {
		if err := st.Chunk(c); err != nil {
			t.Fatal(err)
		}
	}
	res, err := st.Finish()
	if !errors.Is(err, resp.ErrStreamCut) {
		t.Fatalf("Finish error = %v, want ErrStreamCut", err)
	}
	if res == nil || res.Status != "failed" {
		t.Fatalf("result %+v, want status failed", res)
	}
	evs := parseSSE(t, buf.Bytes())
	last := evs[len(evs)-1]
	var ev responses.ResponseStreamEventUnion
	if err := json.Unmarshal(last.data, &ev); err != nil {
		t.Fatal(err)
	}
	failed := ev.AsResponseFailed().Response
	if last.name != "response.failed" || failed.Status != "failed" || failed.Error.Code != "server_error" || failed.Error.Message == "" {
		t.Errorf("last event %s %s", last.name, last.data)
	}
	// The message was done when the call began; the call was cut.
	if len(failed.Output) != 2 || failed.Output[0].Status != "completed" || failed.Output[1].Status != "incomplete" {
		t.Errorf("failed output %s, want a completed message and an incomplete call", failed.RawJSON())
	}
	if err := st.Chunk(chunk(`{"content":"more"}`)); !errors.Is(err, resp.ErrStreamDone) {
		t.Errorf("Chunk after Finish = %v, want ErrStreamDone", err)
	}
}

func TestStreamRejectsAnUpstreamErrorChunkAndFails(t *testing.T) {
	var buf bytes.Buffer
	st := resp.NewStream(&buf, resp.Meta{})
	if err := st.Chunk(chunk(`{"content":"Hel"}`)); err != nil {
		t.Fatal(err)
	}
	n := buf.Len()
	err := st.Chunk([]byte(`{"error":{"message":"model overloaded","type":"server_error"}}`))
	if !errors.Is(err, resp.ErrUpstream) || !strings.Contains(err.Error(), "model overloaded") {
		t.Fatalf("Chunk = %v, want ErrUpstream with the upstream's message", err)
	}
	if buf.Len() != n {
		t.Errorf("the error chunk wrote %q", buf.Bytes()[n:])
	}
	res, err := st.Fail("upstream: model overloaded")
	if err != nil || res.Status != "failed" {
		t.Fatalf("Fail = %+v, %v", res, err)
	}
	evs := parseSSE(t, buf.Bytes())
	if last := evs[len(evs)-1]; last.name != "response.failed" || !bytes.Contains(last.data, []byte("model overloaded")) {
		t.Errorf("last event %s %s", last.name, last.data)
	}
	if _, err := st.Finish(); !errors.Is(err, resp.ErrStreamDone) {
		t.Errorf("Finish after Fail = %v, want ErrStreamDone", err)
	}
}

func TestStreamRejectsMalformedChunksWithoutWriting(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{"not JSON", `{"choices":`, "not a chat completion chunk"},
		{"content of the wrong type", `{"choices":[{"index":0,"delta":{"content":7}}]}`, "not a chat completion chunk"},
		{"call without name", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"arguments":"{}"}}]}}]}`, "tool call 0 without a function name"},
		{"negative index", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"function":{"name":"f"}}]}}]}`, "index -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			st := resp.NewStream(&buf, resp.Meta{})
			err := st.Chunk([]byte(tc.data))
			if !errors.Is(err, resp.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Chunk = %v, want ErrInvalid saying %q", err, tc.want)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %q", buf.Bytes())
			}
		})
	}
}

func TestStreamRejectsAChunkAfterDone(t *testing.T) {
	st := resp.NewStream(&bytes.Buffer{}, resp.Meta{})
	if err := st.Chunk([]byte("[DONE]")); err != nil {
		t.Fatal(err)
	}
	if err := st.Chunk(chunk(`{"content":"late"}`)); !errors.Is(err, resp.ErrInvalid) || !strings.Contains(err.Error(), "after [DONE]") {
		t.Errorf("Chunk after [DONE] = %v", err)
	}
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n < len(p) {
		return 0, errors.New("client went away")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestStreamReportsAWriteError(t *testing.T) {
	st := resp.NewStream(&failingWriter{n: 0}, resp.Meta{})
	err := st.Chunk(chunk(`{"content":"hi"}`))
	if err == nil || !strings.Contains(err.Error(), "client went away") || !strings.Contains(err.Error(), "response.created") {
		t.Errorf("Chunk = %v, want the write error naming the event", err)
	}
}

func TestStreamStartsBeforeTheFirstChunk(t *testing.T) {
	var buf bytes.Buffer
	st := resp.NewStream(&buf, resp.Meta{ID: "resp_early"})
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	evs := parseSSE(t, buf.Bytes())
	if got := strings.Join(names(evs), " "); got != "response.created response.in_progress" {
		t.Fatalf("Start wrote %s", got)
	}
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	if err := st.Chunk(chunk(`{"content":"hi"}`, "stop")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Finish(); err != nil {
		t.Fatal(err)
	}
	evs = parseSSE(t, buf.Bytes())
	if n := strings.Count(strings.Join(names(evs), " "), "response.created"); n != 1 {
		t.Errorf("response.created written %d times", n)
	}
	accumulate(t, evs)
}

func TestStreamCreatedEventNamesTheUpstreamModel(t *testing.T) {
	req, err := resp.ParseRequest([]byte(`{"model":"alias","input":"x","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	st := resp.NewStream(&buf, resp.Meta{Request: req})
	if err := st.Chunk(chunk(`{"content":"hi"}`, "stop")); err != nil {
		t.Fatal(err)
	}
	evs := parseSSE(t, buf.Bytes())
	var created responses.ResponseStreamEventUnion
	if err := json.Unmarshal(evs[0].data, &created); err != nil {
		t.Fatal(err)
	}
	if m := created.AsResponseCreated().Response.Model; m != "m-up" {
		t.Errorf("response.created model %q, want the upstream's m-up", m)
	}
}

func TestStreamTellsCallsApartByIDWhenTheIndexRepeats(t *testing.T) {
	// A server that sends each call whole in a chunk of its own, always at
	// index 0 (or without one), still makes two calls.
	evs, res, err := feed(t,
		chunk(`{"tool_calls":[{"id":"c1","type":"function","function":{"name":"a","arguments":"{\"n\":1}"}}]}`),
		chunk(`{"tool_calls":[{"index":0,"id":"c2","type":"function","function":{"name":"b","arguments":"{\"n\":"}}]}`),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"2}"}}]}`),
		chunk(`{}`, "tool_calls"),
	)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := accumulate(t, evs)
	if len(snap.Output) != 2 || snap.Output[0].Arguments != `{"n":1}` || snap.Output[1].CallID != "c2" || snap.Output[1].Arguments != `{"n":2}` {
		t.Errorf("accumulated %+v", snap.Output)
	}
	if len(res.Message.ToolCalls) != 2 {
		t.Errorf("recorded %+v", res.Message.ToolCalls)
	}
}

func TestStreamTakesANameAndArgumentsOfOneCallInOneChunk(t *testing.T) {
	evs, _, err := feed(t,
		chunk(`{"tool_calls":[{"index":0,"id":"c1","function":{"name":"a","arguments":"{\"x\""}},{"index":0,"function":{"arguments":":1}"}}]}`),
		chunk(`{}`, "tool_calls"),
	)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := accumulate(t, evs)
	if len(snap.Output) != 1 || snap.Output[0].Arguments != `{"x":1}` {
		t.Errorf("accumulated %+v", snap.Output)
	}
}
