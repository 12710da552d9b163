package responses_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agentmemory/agentmemory/agent"
	resp "github.com/agentmemory/agentmemory/gateway/responses"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

// turn is what the test gateway saw of one request: the parsed request and
// the translated answer.
type turn struct {
	req    *resp.Request
	result *resp.Result
	err    error
}

// gateway is the smallest gateway this package serves: POST /v1/responses
// translated to a Chat Completions upstream (the fake server) and back,
// streamed or not. It records each turn.
type gateway struct {
	t     *testing.T
	up    *fakeopenai.Server
	srv   *httptest.Server
	turns chan turn
}

func newGateway(t *testing.T, up *fakeopenai.Server) *gateway {
	t.Helper()
	g := &gateway{t: t, up: up, turns: make(chan turn, 16)}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

// client returns an openai-go client of the gateway.
func (g *gateway) client() openai.Client {
	return openai.NewClient(option.WithBaseURL(g.srv.URL+"/v1/"), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
}

// lastTurn returns the turn the gateway recorded last.
func (g *gateway) lastTurn() turn {
	g.t.Helper()
	select {
	case tr := <-g.turns:
		return tr
	default:
		g.t.Fatal("the gateway recorded no turn")
		return turn{}
	}
}

func (g *gateway) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	req, err := resp.ParseRequest(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	chat, err := req.ChatBody()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	up, err := g.up.Client().Post(g.up.URL()+"/chat/completions", "application/json", bytes.NewReader(chat))
	if err != nil {
		writeError(w, http.StatusBadGateway, err.Error())
		return
	}
	defer up.Body.Close()
	if up.StatusCode != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(up.StatusCode)
		_, _ = io.Copy(w, up.Body)
		return
	}
	meta := resp.Meta{Request: req}
	if !req.Stream {
		answer, _ := io.ReadAll(up.Body)
		res, err := resp.FromChat(answer, meta)
		g.turns <- turn{req, res, err}
		if err != nil {
			writeError(w, http.StatusBadGateway, err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(res.Body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	st := resp.NewStream(w, meta)
	sc := bufio.NewScanner(up.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if err := st.Chunk([]byte(data)); err != nil {
			res, _ := st.Fail(err.Error())
			g.turns <- turn{req, res, err}
			return
		}
		w.(http.Flusher).Flush()
	}
	res, err := st.Finish()
	g.turns <- turn{req, res, err}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
}

// weatherTool is a function tool for the SDK's requests.
func weatherTool() responses.ToolUnionParam {
	return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name:        "get_weather",
		Description: openai.String("The weather in a city."),
		Parameters: map[string]any{
			"type":       "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required":   []string{"city"},
		},
		Strict: openai.Bool(false),
	}}
}

func TestTheSDKReadsATextAnswer(t *testing.T) {
	up := fakeopenai.New(t)
	up.QueueChat(fakeopenai.Text("Paris is the capital of France.").WithUsage(12, 7).WithModel("gpt-test-2026"))
	g := newGateway(t, up)
	client := g.client()

	got, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Model:        "gpt-test",
		Instructions: openai.String("Answer in one sentence."),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("What is the capital of France?")},
		Temperature:  openai.Float(0.2),
		Metadata:     map[string]string{"session": "s1"},
	})
	if err != nil {
		t.Fatalf("Responses.New: %v", err)
	}
	if got.OutputText() != "Paris is the capital of France." {
		t.Errorf("OutputText = %q", got.OutputText())
	}
	if got.Status != responses.ResponseStatusCompleted || got.Object != "response" || !strings.HasPrefix(got.ID, "resp_") {
		t.Errorf("status %q, object %q, id %q; want completed, response, resp_…", got.Status, got.Object, got.ID)
	}
	if got.Model != "gpt-test-2026" {
		t.Errorf("model = %q, want the upstream's gpt-test-2026", got.Model)
	}
	if got.Usage.InputTokens != 12 || got.Usage.OutputTokens != 7 || got.Usage.TotalTokens != 19 {
		t.Errorf("usage = %+v, want 12 in, 7 out, 19 total", got.Usage)
	}
	if got.Instructions.OfString != "Answer in one sentence." || got.Temperature != 0.2 || got.Metadata["session"] != "s1" {
		t.Errorf("echo: instructions %q, temperature %v, metadata %v", got.Instructions.OfString, got.Temperature, got.Metadata)
	}
	if got.CreatedAt == 0 || got.CompletedAt == 0 {
		t.Errorf("created_at %v, completed_at %v; want both set", got.CreatedAt, got.CompletedAt)
	}
	msg := got.Output[0].AsMessage()
	if len(got.Output) != 1 || msg.Type != "message" || msg.Role != "assistant" || msg.Status != "completed" || !strings.HasPrefix(msg.ID, "msg_") {
		t.Errorf("output = %s, want one completed assistant message", got.RawJSON())
	}

	sent := up.ChatRequests()[0]
	if sent.SystemText() != "Answer in one sentence." || sent.LastUserText() != "What is the capital of France?" {
		t.Errorf("upstream got system %q, user %q", sent.SystemText(), sent.LastUserText())
	}
	if sent.JSON["temperature"] != 0.2 {
		t.Errorf("upstream temperature = %v", sent.JSON["temperature"])
	}

	tr := g.lastTurn()
	if tr.result.Message.Text != "Paris is the capital of France." || tr.result.ID != got.ID {
		t.Errorf("recorded answer %+v", tr.result)
	}
	if len(tr.req.Input) != 1 || !reflect.DeepEqual(tr.req.Input[0], agent.UserText("What is the capital of France?")) {
		t.Errorf("recorded input %+v", tr.req.Input)
	}
}

func TestTheSDKRoundTripsAToolCall(t *testing.T) {
	up := fakeopenai.New(t)
	up.QueueChat(
		fakeopenai.ToolCalls(fakeopenai.Call("call_1", "get_weather", `{"city":"Oslo"}`)).WithFinishReason("tool_calls"),
		fakeopenai.Text("It is 4 °C in Oslo."),
	)
	g := newGateway(t, up)
	client := g.client()
	ctx := context.Background()

	first, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Oslo?")},
		Tools: []responses.ToolUnionParam{weatherTool()},
	})
	if err != nil {
		t.Fatalf("first Responses.New: %v", err)
	}
	if len(first.Output) != 1 || first.Output[0].Type != "function_call" {
		t.Fatalf("output = %s, want one function_call", first.RawJSON())
	}
	call := first.Output[0].AsFunctionCall()
	if call.CallID != "call_1" || call.Name != "get_weather" || call.Arguments != `{"city":"Oslo"}` {
		t.Errorf("function call = %+v", call)
	}
	if len(first.Tools) != 1 || first.Tools[0].AsFunction().Name != "get_weather" {
		t.Errorf("tools echoed as %s", first.RawJSON())
	}
	sent := up.ChatRequests()[0]
	if len(sent.Chat.Tools) != 1 || sent.Chat.Tools[0].Function.Name != "get_weather" {
		t.Errorf("upstream tools = %+v", sent.Chat.Tools)
	}

	second, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Weather in Oslo?", responses.EasyInputMessageRoleUser),
			responses.ResponseInputItemParamOfFunctionCall(call.Arguments, call.CallID, call.Name),
			{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
				CallID: openai.String(call.CallID),
				Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(`{"celsius":4}`)},
			}},
		}},
		Tools: []responses.ToolUnionParam{weatherTool()},
	})
	if err != nil {
		t.Fatalf("second Responses.New: %v", err)
	}
	if second.OutputText() != "It is 4 °C in Oslo." {
		t.Errorf("OutputText = %q", second.OutputText())
	}
	msgs := up.ChatRequests()[1].Chat.Messages
	if len(msgs) != 3 {
		t.Fatalf("upstream got %d messages, want user, assistant with the call, tool: %+v", len(msgs), msgs)
	}
	if msgs[1].Role != "assistant" || len(msgs[1].ToolCalls) != 1 || msgs[1].ToolCalls[0].ID != "call_1" || msgs[1].ToolCalls[0].Arguments != `{"city":"Oslo"}` {
		t.Errorf("assistant message = %+v", msgs[1])
	}
	if msgs[2].Role != "tool" || msgs[2].ToolCallID != "call_1" || msgs[2].Content != `{"celsius":4}` {
		t.Errorf("tool message = %+v", msgs[2])
	}
}

// streamed is what the SDK read of a streamed response.
type streamed struct {
	types     []string
	text      string
	args      map[string]string // by item id
	completed responses.Response
	final     string // the type of the last event
}

// readStream reads a streaming response with the SDK, checking that the
// sequence numbers count from 0.
func readStream(t *testing.T, client openai.Client, params responses.ResponseNewParams) (streamed, error) {
	t.Helper()
	s := streamed{args: map[string]string{}}
	stream := client.Responses.NewStreaming(context.Background(), params)
	defer stream.Close()
	for stream.Next() {
		ev := stream.Current()
		if ev.SequenceNumber != int64(len(s.types)) {
			t.Errorf("event %d (%s) has sequence_number %d", len(s.types), ev.Type, ev.SequenceNumber)
		}
		s.types = append(s.types, ev.Type)
		s.final = ev.Type
		switch ev.Type {
		case "response.output_text.delta":
			s.text += ev.AsResponseOutputTextDelta().Delta
		case "response.function_call_arguments.delta":
			d := ev.AsResponseFunctionCallArgumentsDelta()
			s.args[d.ItemID] += d.Delta
		case "response.completed":
			s.completed = ev.AsResponseCompleted().Response
		case "response.incomplete":
			s.completed = ev.AsResponseIncomplete().Response
		case "response.failed":
			s.completed = ev.AsResponseFailed().Response
		}
	}
	return s, stream.Err()
}

func TestTheSDKReadsAStreamedTextAnswer(t *testing.T) {
	up := fakeopenai.New(t)
	up.QueueChat(fakeopenai.Text("Paris is the capital of France.").WithUsage(12, 7))
	g := newGateway(t, up)

	s, err := readStream(t, g.client(), responses.ResponseNewParams{
		Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Capital of France?")},
	})
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	want := []string{
		"response.created", "response.in_progress",
		"response.output_item.added", "response.content_part.added",
		// The fake upstream streams the text split after each space.
		"response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.completed",
	}
	if strings.Join(s.types, " ") != strings.Join(want, " ") {
		t.Errorf("events:\n got %v\nwant %v", s.types, want)
	}
	if s.text != "Paris is the capital of France." || s.completed.OutputText() != s.text {
		t.Errorf("deltas %q, completed text %q", s.text, s.completed.OutputText())
	}
	if s.completed.Status != "completed" || s.completed.Usage.InputTokens != 12 || s.completed.Usage.OutputTokens != 7 {
		t.Errorf("completed: status %q, usage %+v", s.completed.Status, s.completed.Usage)
	}
	if so, _ := up.ChatRequests()[0].JSON["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("upstream stream_options = %v, want include_usage", so)
	}
	tr := g.lastTurn()
	if tr.err != nil || tr.result.Message.Text != s.text || tr.result.Usage.TotalTokens != 19 {
		t.Errorf("recorded %+v, %v", tr.result, tr.err)
	}
}

func TestTheSDKReadsStreamedTextAndToolCalls(t *testing.T) {
	up := fakeopenai.New(t)
	up.QueueChat(fakeopenai.ToolCalls(
		fakeopenai.Call("call_a", "get_weather", `{"city":"Oslo"}`),
		fakeopenai.Call("call_b", "get_weather", `{"city":"Bergen, Norway"}`),
	).WithText("Looking both up.").WithFinishReason("tool_calls").WithUsage(30, 20))
	g := newGateway(t, up)

	s, err := readStream(t, g.client(), responses.ResponseNewParams{
		Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Oslo and Bergen?")},
		Tools: []responses.ToolUnionParam{weatherTool()},
	})
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	out := s.completed.Output
	if len(out) != 3 || out[0].Type != "message" || out[1].Type != "function_call" || out[2].Type != "function_call" {
		t.Fatalf("completed output = %s", s.completed.RawJSON())
	}
	if s.text != "Looking both up." || s.completed.OutputText() != s.text {
		t.Errorf("text %q, completed %q", s.text, s.completed.OutputText())
	}
	for i, want := range []struct{ id, args string }{{"call_a", `{"city":"Oslo"}`}, {"call_b", `{"city":"Bergen, Norway"}`}} {
		fc := out[i+1].AsFunctionCall()
		if fc.CallID != want.id || fc.Arguments != want.args || s.args[fc.ID] != want.args {
			t.Errorf("call %d: %+v, deltas %q; want %s %s", i, fc, s.args[fc.ID], want.id, want.args)
		}
	}
	// The message item is done before the first call is added.
	msgDone, callAdded := -1, -1
	for i, typ := range s.types {
		if typ == "response.output_item.done" && msgDone < 0 {
			msgDone = i
		}
		if typ == "response.function_call_arguments.delta" && callAdded < 0 {
			callAdded = i
		}
	}
	if msgDone > callAdded {
		t.Errorf("message done at event %d, after the first call's arguments at %d: %v", msgDone, callAdded, s.types)
	}
	tr := g.lastTurn()
	m := tr.result.Message
	if m.Text != "Looking both up." || len(m.ToolCalls) != 2 || m.ToolCalls[1].ID != "call_b" || string(m.ToolCalls[1].Arguments) != `{"city":"Bergen, Norway"}` {
		t.Errorf("recorded %+v", m)
	}
}

func TestTheSDKReadsAnAnswerCutByMaxOutputTokens(t *testing.T) {
	for _, stream := range []bool{false, true} {
		up := fakeopenai.New(t)
		up.QueueChat(fakeopenai.Text("The story begins").WithFinishReason("length"))
		g := newGateway(t, up)
		params := responses.ResponseNewParams{
			Model:           "gpt-test",
			Input:           responses.ResponseNewParamsInputUnion{OfString: openai.String("Tell a story")},
			MaxOutputTokens: openai.Int(3),
		}
		var got responses.Response
		if stream {
			s, err := readStream(t, g.client(), params)
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			if s.final != "response.incomplete" {
				t.Errorf("stream ended with %s, want response.incomplete", s.final)
			}
			got = s.completed
		} else {
			client := g.client()
			r, err := client.Responses.New(context.Background(), params)
			if err != nil {
				t.Fatalf("Responses.New: %v", err)
			}
			got = *r
		}
		if got.Status != "incomplete" || got.IncompleteDetails.Reason != "max_output_tokens" || got.MaxOutputTokens != 3 {
			t.Errorf("stream %v: status %q, details %q, max_output_tokens %d", stream, got.Status, got.IncompleteDetails.Reason, got.MaxOutputTokens)
		}
		if got.OutputText() != "The story begins" || got.Output[0].AsMessage().Status != "incomplete" {
			t.Errorf("stream %v: output %s", stream, got.RawJSON())
		}
		if n := up.ChatRequests()[0].Chat.MaxCompletionTokens; n == nil || *n != 3 {
			t.Errorf("upstream max_completion_tokens = %v, want 3", n)
		}
	}
}

func TestTheSDKSeesAnUnsupportedToolAsABadRequest(t *testing.T) {
	up := fakeopenai.New(t)
	g := newGateway(t, up)
	client := g.client()
	_, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("news?")},
		Tools: []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}},
	})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Message, `"web_search"`) {
		t.Errorf("err = %v, want a 400 naming web_search", err)
	}
	if n := len(up.Requests()); n != 0 {
		t.Errorf("upstream got %d requests, want none", n)
	}
}

func TestTheSDKSeesAStreamCutShortFail(t *testing.T) {
	up := fakeopenai.New(t)
	// The upstream's stream breaks off: no finish_reason, no [DONE].
	up.QueueChat(fakeopenai.Raw(http.StatusOK, "text/event-stream",
		"data: "+string(chunk(`{"role":"assistant","content":"Half an "}`))+"\n\n"))
	g := newGateway(t, up)

	s, err := readStream(t, g.client(), responses.ResponseNewParams{
		Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Tell me everything")},
	})
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	if s.final != "response.failed" || s.completed.Status != "failed" || s.completed.Error.Code != "server_error" {
		t.Errorf("stream ended with %s: %s", s.final, s.completed.RawJSON())
	}
	if s.text != "Half an " {
		t.Errorf("deltas %q", s.text)
	}
	if tr := g.lastTurn(); !errors.Is(tr.err, resp.ErrStreamCut) || tr.result.Status != "failed" {
		t.Errorf("recorded %+v, %v; want ErrStreamCut: no turn to record", tr.result, tr.err)
	}
}
