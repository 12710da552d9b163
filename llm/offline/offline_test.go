package offline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/google/jsonschema-go/jsonschema"
)

type queryArgs struct {
	Query string `json:"query" jsonschema:"what to look for"`
}

func retrieveTool(t testing.TB, name, result string) agent.Tool {
	t.Helper()
	return agent.MustFuncTool(name, "looks up facts", func(ctx context.Context, in queryArgs) (string, error) {
		return result, nil
	})
}

func newClient(t testing.TB, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func complete(t testing.TB, c *Client, req *agent.ChatRequest) *agent.ChatResponse {
	t.Helper()
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Message.Role != agent.RoleAssistant {
		t.Errorf("role %q, want assistant", resp.Message.Role)
	}
	return resp
}

func TestMarker(t *testing.T) {
	if got := Marker("cumulative_summary"); got != "agentmemory:prompt=cumulative_summary" {
		t.Errorf("Marker = %q", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("Marker with an invalid name did not panic")
		}
	}()
	Marker("Bad Name")
}

func TestParseMarker(t *testing.T) {
	tests := []struct {
		text    string
		name    string
		found   bool
		wantErr bool
	}{
		{"", "", false, false},
		{"You are a helpful assistant.", "", false, false},
		{"agentmemory:prompt=insights\nExtract insights.", "insights", true, false},
		{"\n\n  \t agentmemory:prompt=v2.meta-data_x \r\nbody", "v2.meta-data_x", true, false},
		{"Intro line\nagentmemory:prompt=insights", "", false, false}, // not the first line
		{"agentmemory:prompt=", "", true, true},
		{"agentmemory:prompt=Insights", "", true, true},
		{"agentmemory:prompt=insights please", "", true, true},
		{"agentmemory:prompt=_x", "", true, true},
		{"agentmemory:prompt=" + strings.Repeat("a", MaxNameLen+1), "", true, true},
		{"agentmemory:prompt=" + strings.Repeat("a", MaxNameLen), strings.Repeat("a", MaxNameLen), true, false},
	}
	for _, tt := range tests {
		name, found, err := ParseMarker(tt.text)
		if name != tt.name || found != tt.found || (err != nil) != tt.wantErr {
			t.Errorf("ParseMarker(%q) = %q, %v, %v; want %q, %v, err %v", tt.text, name, found, err, tt.name, tt.found, tt.wantErr)
		}
		if err != nil && !errors.Is(err, ErrMalformedMarker) {
			t.Errorf("ParseMarker(%q) error %v does not wrap ErrMalformedMarker", tt.text, err)
		}
	}
}

func TestFindMarker(t *testing.T) {
	m := Marker("meta")
	tests := []struct {
		name  string
		msgs  []agent.Message
		want  string
		found bool
	}{
		{"system", []agent.Message{agent.SystemText(m + "\nDo it."), agent.UserText("x")}, "meta", true},
		{"second system", []agent.Message{agent.SystemText("Be brief."), agent.SystemText(m)}, "meta", true},
		{"first message user", []agent.Message{agent.UserText(m + "\ntext")}, "meta", true},
		{"later user ignored", []agent.Message{agent.SystemText("Be brief."), agent.UserText(m)}, "", false},
		{"tool ignored", []agent.Message{agent.SystemText("Be brief."), agent.ToolResult("c", m)}, "", false},
		{"none", nil, "", false},
	}
	for _, tt := range tests {
		name, found, err := FindMarker(tt.msgs)
		if err != nil || name != tt.want || found != tt.found {
			t.Errorf("%s: FindMarker = %q, %v, %v; want %q, %v", tt.name, name, found, err, tt.want, tt.found)
		}
	}
}

func TestHandlers(t *testing.T) {
	var got *agent.ChatRequest
	h := func(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
		got = req
		return &agent.ChatResponse{Message: agent.Message{Text: `{"topics":["401k"]}`}}, nil
	}
	c := newClient(t, Config{Handlers: map[string]Handler{"meta": h}})
	req := &agent.ChatRequest{
		Messages:       []agent.Message{agent.SystemText(Marker("meta") + "\nReturn JSON."), agent.UserText("my 401k")},
		ResponseFormat: &agent.ResponseFormat{Type: agent.JSONObject},
	}
	resp := complete(t, c, req)
	if got != req || resp.Message.Text != `{"topics":["401k"]}` || resp.Model != ModelName {
		t.Errorf("handler response = %+v", resp)
	}

	// Unknown and malformed markers.
	_, err := c.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.SystemText(Marker("other"))}})
	if !errors.Is(err, ErrUnknownPrompt) || !strings.Contains(err.Error(), `"other"`) {
		t.Errorf("unknown marker: err = %v", err)
	}
	_, err = c.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.SystemText(MarkerPrefix + "BAD")}})
	if !errors.Is(err, ErrMalformedMarker) {
		t.Errorf("malformed marker: err = %v", err)
	}

	// Registration errors.
	if err := c.Handle("meta", h); err == nil {
		t.Error("duplicate Handle succeeded")
	}
	if err := c.Handle("Bad", h); err == nil {
		t.Error("Handle with an invalid name succeeded")
	}
	if err := c.Handle("nilh", nil); err == nil {
		t.Error("Handle with a nil handler succeeded")
	}
	if _, err := New(Config{Handlers: map[string]Handler{"ok": h, "no way": h}}); err == nil {
		t.Error("New with an invalid handler name succeeded")
	}
	if _, err := New(Config{MaxSentences: -1}); err == nil {
		t.Error("New with a negative limit succeeded")
	}

	// Handler errors, nil responses and panics become errors.
	boom := errors.New("boom")
	for name, h := range map[string]Handler{
		"fails":  func(context.Context, *agent.ChatRequest) (*agent.ChatResponse, error) { return nil, boom },
		"nil":    func(context.Context, *agent.ChatRequest) (*agent.ChatResponse, error) { return nil, nil },
		"panics": func(context.Context, *agent.ChatRequest) (*agent.ChatResponse, error) { panic("bad") },
	} {
		if err := c.Handle(name, h); err != nil {
			t.Fatal(err)
		}
		_, err := c.Complete(context.Background(), &agent.ChatRequest{Messages: []agent.Message{agent.SystemText(Marker(name))}})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("handler %s: err = %v", name, err)
		}
		if name == "fails" && !errors.Is(err, boom) {
			t.Errorf("handler error not wrapped: %v", err)
		}
	}
}

func TestJSONWithoutHandler(t *testing.T) {
	c := newClient(t, Config{})
	_, err := c.Complete(context.Background(), &agent.ChatRequest{
		Messages:       []agent.Message{agent.UserText("give me JSON")},
		ResponseFormat: &agent.ResponseFormat{Type: agent.JSONSchema},
	})
	if !errors.Is(err, ErrJSONUnsupported) {
		t.Errorf("err = %v, want ErrJSONUnsupported", err)
	}
}

func TestBadRequests(t *testing.T) {
	c := newClient(t, Config{})
	if _, err := c.Complete(context.Background(), nil); err == nil {
		t.Error("nil request accepted")
	}
	if _, err := c.Complete(context.Background(), &agent.ChatRequest{}); err == nil {
		t.Error("empty request accepted")
	}
}

func TestAutoToolCall(t *testing.T) {
	c := newClient(t, Config{})
	tools := []agent.Tool{retrieveTool(t, "get_weather", ""), retrieveTool(t, RetrieveUserFactsTool, ""), retrieveTool(t, RetrieveUserFactsTool, "")}
	for _, text := range []string{
		"What did we decide about the 401k?",
		"remind me of the plan",
		"I want to retire early",
		"last time we talked about bonds",
		"Is  it\training", // leading question word
	} {
		resp := complete(t, c, &agent.ChatRequest{Messages: []agent.Message{agent.SystemText("Be brief."), agent.UserText(text)}, Tools: tools})
		calls := resp.Message.ToolCalls
		if len(calls) != 1 || calls[0].Name != RetrieveUserFactsTool || resp.FinishReason != "tool_calls" {
			t.Fatalf("%q: calls %+v, finish %q; want one %s call", text, calls, resp.FinishReason, RetrieveUserFactsTool)
		}
		var args queryArgs
		if err := json.Unmarshal(calls[0].Arguments, &args); err != nil || args.Query != collapse(text) {
			t.Errorf("%q: arguments %s", text, calls[0].Arguments)
		}
		if !strings.HasPrefix(calls[0].ID, "call_offline_") || resp.Message.Text != "" {
			t.Errorf("%q: id %q text %q", text, calls[0].ID, resp.Message.Text)
		}
	}
	// No memory needed: no call, a plain answer.
	for _, text := range []string{"Hello there", "Thanks, bye", "The sky is blue."} {
		resp := complete(t, c, &agent.ChatRequest{Messages: []agent.Message{agent.UserText(text)}, Tools: tools})
		if len(resp.Message.ToolCalls) != 0 || resp.Message.Text == "" {
			t.Errorf("%q: calls %+v text %q; want a text answer", text, resp.Message.ToolCalls, resp.Message.Text)
		}
	}
	// AutoTools empty: never called unless named.
	none := newClient(t, Config{AutoTools: []string{}})
	resp := complete(t, none, &agent.ChatRequest{Messages: []agent.Message{agent.UserText("What is my plan?")}, Tools: tools})
	if len(resp.Message.ToolCalls) != 0 {
		t.Errorf("AutoTools empty: calls %+v", resp.Message.ToolCalls)
	}
}

func TestNamedToolCall(t *testing.T) {
	c := newClient(t, Config{AutoTools: []string{}})
	tools := []agent.Tool{retrieveTool(t, "get_weather", ""), retrieveTool(t, "search-notes", ""), retrieveTool(t, "retrieve_user_facts", "")}
	tests := map[string][]string{
		"Use search notes and get_weather, please": {"get_weather", "search-notes"},
		"call RETRIEVE_USER_FACTS now":             {"retrieve_user_facts"},
		"get weather":                              {"get_weather"},
		"the weather is nice":                      nil,
		"search my notebook":                       nil,
	}
	for text, want := range tests {
		resp := complete(t, c, &agent.ChatRequest{Messages: []agent.Message{agent.UserText(text)}, Tools: tools})
		var got []string
		for _, tc := range resp.Message.ToolCalls {
			got = append(got, tc.Name)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%q: called %v, want %v", text, got, want)
		}
	}
}

type schemaTool struct {
	name   string
	schema string
}

func (s schemaTool) Name() string        { return s.name }
func (s schemaTool) Description() string { return "" }
func (s schemaTool) Schema() *jsonschema.Schema {
	var sc jsonschema.Schema
	if err := json.Unmarshal([]byte(s.schema), &sc); err != nil {
		panic(err)
	}
	return &sc
}
func (s schemaTool) Call(context.Context, json.RawMessage) (string, error) { return "", nil }

func TestFillArgs(t *testing.T) {
	c := newClient(t, Config{AutoTools: []string{}})
	tests := []struct {
		schema string
		want   string // "" means not called
	}{
		{`{"type":"object"}`, `{}`},
		{`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q"]}`, `{"q":"run lookup now"}`},
		{`{"type":"object","properties":{"n":{"type":"integer","default":5},"q":{"type":["string","null"]}},"required":["q","n"]}`, `{"n":5,"q":"run lookup now"}`},
		{`{"type":"object","properties":{"mode":{"type":"string","enum":["fast","slow"]}},"required":["mode"]}`, `{"mode":"fast"}`},
		{`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`, ``},
		{`{"type":"object","required":["missing"]}`, ``},
	}
	for _, tt := range tests {
		resp := complete(t, c, &agent.ChatRequest{
			Messages: []agent.Message{agent.UserText("run lookup now")},
			Tools:    []agent.Tool{schemaTool{"lookup", tt.schema}},
		})
		got := ""
		if len(resp.Message.ToolCalls) == 1 {
			got = string(resp.Message.ToolCalls[0].Arguments)
		}
		if got != tt.want {
			t.Errorf("schema %s: arguments %q, want %q", tt.schema, got, tt.want)
		}
	}
}

func TestToolResults(t *testing.T) {
	c := newClient(t, Config{})
	call := agent.ToolCall{ID: "c1", Name: RetrieveUserFactsTool, Arguments: json.RawMessage(`{}`)}
	base := []agent.Message{
		agent.SystemText("Be brief."),
		agent.UserText("What is my plan?"),
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{call}},
	}
	tools := []agent.Tool{retrieveTool(t, RetrieveUserFactsTool, "")}
	tests := []struct {
		results []agent.Message
		want    string
	}{
		{[]agent.Message{agent.ToolResult("c1", "  The user\nretires at 60.\n")}, "From memory: The user retires at 60."},
		{[]agent.Message{{Role: agent.RoleTool, ToolCallID: "x", Name: "get_weather", Text: "Sunny."}}, "Tool results: Sunny."},
		{[]agent.Message{agent.ToolResult("c1", "  ")}, "From memory: nothing relevant was found."},
		{[]agent.Message{agent.ToolResult("c1", "One."), agent.ToolResult("c1", "error: store down")}, "From memory: One. error: store down"},
	}
	for _, tt := range tests {
		resp := complete(t, c, &agent.ChatRequest{Messages: append(append([]agent.Message{}, base...), tt.results...), Tools: tools})
		if resp.Message.Text != tt.want || len(resp.Message.ToolCalls) != 0 {
			t.Errorf("results %+v: answer %q calls %v; want %q", tt.results, resp.Message.Text, resp.Message.ToolCalls, tt.want)
		}
	}
	// Long results are trimmed.
	short := newClient(t, Config{MaxAnswerRunes: 40})
	resp := complete(t, short, &agent.ChatRequest{Messages: append(base, agent.ToolResult("c1", strings.Repeat("word ", 100)))})
	if n := utf8.RuneCountInString(resp.Message.Text); n > 40 || !strings.HasSuffix(resp.Message.Text, "…") {
		t.Errorf("trimmed answer %q (%d runes)", resp.Message.Text, n)
	}
}

func TestExtractiveAnswer(t *testing.T) {
	c := newClient(t, Config{MaxSentences: 2})
	memory := agent.Message{Role: agent.RoleUser, Source: "memory", Text: "### Key Insights\n- The user is 45 and plans to retire at 60.\n- Their daughter starts college in 2027.\n- They hold a 401k with Fidelity; the 401k is in index funds."}
	msgs := []agent.Message{
		agent.SystemText("You are a financial advisor. Keep answers short."),
		memory,
		agent.UserText("Not memory: the 401k rollover happened."), // history: not a source
		agent.AssistantText("Noted."),
		agent.UserText("When do I plan to retire, and where is my 401k?"),
	}
	resp := complete(t, c, &agent.ChatRequest{Messages: msgs})
	want := "From memory: The user is 45 and plans to retire at 60. They hold a 401k with Fidelity; the 401k is in index funds."
	if resp.Message.Text != want || resp.FinishReason != "stop" || resp.Model != ModelName {
		t.Errorf("answer %q (%s, %s)\nwant   %q", resp.Message.Text, resp.FinishReason, resp.Model, want)
	}
	// Usage counts words.
	if resp.Usage.CompletionTokens != countWords(want) || resp.Usage.TotalTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens || resp.Usage.PromptTokens < 40 {
		t.Errorf("usage %+v", resp.Usage)
	}

	// Nothing overlaps: the topic is echoed.
	msgs[len(msgs)-1] = agent.UserText("Any thoughts on crypto staking?")
	if got := complete(t, c, &agent.ChatRequest{Messages: msgs}).Message.Text; got != `I have nothing in memory about "thoughts crypto staking".` {
		t.Errorf("no overlap: %q", got)
	}
	msgs[len(msgs)-1] = agent.UserText("Hi! Thanks.")
	if got := complete(t, c, &agent.ChatRequest{Messages: msgs}).Message.Text; got != ackNoTopic {
		t.Errorf("greeting: %q", got)
	}
	if got := complete(t, c, &agent.ChatRequest{Messages: []agent.Message{agent.SystemText("Be brief.")}}).Message.Text; got != ackNoTopic {
		t.Errorf("no user message: %q", got)
	}
}

func TestMaxTokens(t *testing.T) {
	c := newClient(t, Config{})
	resp := complete(t, c, &agent.ChatRequest{
		Messages:  []agent.Message{agent.SystemText("The user plans to retire at sixty in Lisbon."), agent.UserText("Where will I retire?")},
		MaxTokens: 4,
	})
	if resp.Message.Text != "From memory: The user…" || resp.FinishReason != "length" {
		t.Errorf("MaxTokens 4: %q, %s", resp.Message.Text, resp.FinishReason)
	}
}

func TestDeterministic(t *testing.T) {
	req := &agent.ChatRequest{
		Messages: []agent.Message{agent.SystemText("The user plans to retire at 60. The user likes sailing."), agent.UserText("what do I like?")},
		Tools:    []agent.Tool{retrieveTool(t, RetrieveUserFactsTool, "")},
	}
	var first []byte
	for i := range 5 {
		resp := complete(t, newClient(t, Config{}), req)
		b, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if string(b) != string(first) {
			t.Fatalf("response %d differs:\n%s\n%s", i, b, first)
		}
	}
	// Another request gets another call id.
	req2 := *req
	req2.Messages = []agent.Message{req.Messages[0], agent.UserText("what do I dislike?")}
	a := complete(t, newClient(t, Config{}), req).Message.ToolCalls[0].ID
	b := complete(t, newClient(t, Config{}), &req2).Message.ToolCalls[0].ID
	if a == b {
		t.Errorf("two requests share call id %s", a)
	}
}

func TestCancel(t *testing.T) {
	c := newClient(t, Config{Handlers: map[string]Handler{"x": func(ctx context.Context, _ *agent.ChatRequest) (*agent.ChatResponse, error) {
		return nil, ctx.Err()
	}}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, req := range []*agent.ChatRequest{
		{Messages: []agent.Message{agent.UserText("hello")}},
		{Messages: []agent.Message{agent.SystemText(Marker("x"))}},
	} {
		if _, err := c.Complete(ctx, req); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled Complete: err = %v", err)
		}
	}
}

// TestAgentRun drives a whole agent run: the client calls the memory tool,
// then answers from its result.
func TestAgentRun(t *testing.T) {
	c := newClient(t, Config{})
	tool := retrieveTool(t, RetrieveUserFactsTool, "The user decided to keep the 401k in index funds.")
	a := agent.New(c, agent.Config{Instructions: "You are a financial advisor.", Tools: []agent.Tool{tool}})
	resp, err := a.Run(context.Background(), a.NewSession(), agent.UserText("What did we decide about my 401k?"))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Messages) != 3 || len(resp.Messages[0].ToolCalls) != 1 || resp.Messages[1].Role != agent.RoleTool {
		t.Fatalf("messages %+v", resp.Messages)
	}
	if got, want := resp.Text(), "From memory: The user decided to keep the 401k in index funds."; got != want {
		t.Errorf("answer %q, want %q", got, want)
	}
}
