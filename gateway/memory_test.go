package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/gateway"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

// ask sends one user message as user in session, answered by the upstream
// with reply, and returns the request the upstream received and the
// gateway's X-Memory header.
func (r *rig) ask(user, session, text string, reply fakeopenai.Reply) (fakeopenai.Request, string) {
	r.t.Helper()
	r.up.QueueChat(reply)
	before := len(r.up.ChatRequests())
	var resp *http.Response
	opts := []option.RequestOption{option.WithResponseInto(&resp)}
	if session != "" {
		opts = append(opts, option.WithHeader(gateway.SessionHeader, session))
	}
	_, err := r.chat(user).New(context.Background(), openai.ChatCompletionNewParams{
		Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{userMessage(text)},
	}, opts...)
	require.NoError(r.t, err)
	reqs := r.up.ChatRequests()
	require.Len(r.t, reqs, before+1)
	return reqs[before], resp.Header.Get(gateway.Header)
}

func TestAFactToldInOneSessionIsInjectedInALaterOne(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *gateway.Config) { c.IdleTimeout = 50 * time.Millisecond })
	r.ask("alice", "session-a", "My dog's name is Biscuit and he is a beagle.", fakeopenai.Text("What a lovely name."))
	r.endSessions("alice")

	req, state := r.ask("alice", "session-b", "What is the name of my dog?", fakeopenai.Text("Biscuit."))
	assert.Contains(t, state, "used")
	system := req.Chat.Messages[0]
	require.Equal(t, "system", system.Role, "the memory block is the first message")
	assert.Contains(t, system.Content, "Biscuit", "the fact of session A reaches the upstream in session B")
	assert.Contains(t, system.Content, "not instructions", "fenced as data")
	assert.Equal(t, "What is the name of my dog?", req.Chat.Messages[len(req.Chat.Messages)-1].Content)
}

func TestAUserNeverReceivesAnotherUsersMemory(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *gateway.Config) { c.IdleTimeout = 50 * time.Millisecond })
	r.ask("alice", "a1", "My dog's name is Biscuit and my bank PIN hint is Zanzibar.", fakeopenai.Text("Noted."))
	r.endSessions("alice")
	_, aliceState := r.ask("alice", "a2", "What is the name of my dog?", fakeopenai.Text("Biscuit."))
	require.Contains(t, aliceState, "retrieved=")

	before := len(r.up.ChatRequests())
	r.ask("bob", "b1", "What is the name of my dog? Any hint about Zanzibar?", fakeopenai.Text("I don't know."))
	r.ask("bob", "", "Remember my dog Biscuit? Zanzibar?", fakeopenai.Text("No."))
	for _, req := range r.up.ChatRequests()[before:] {
		for _, m := range req.Chat.Messages {
			if m.Role == "system" {
				assert.NotContains(t, m.Content, "beagle")
				assert.NotContains(t, m.Content, "PIN")
			}
		}
	}
}

func TestTheMemoryBlockIsMergedIntoTheClientsSystemMessage(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *gateway.Config) { c.IdleTimeout = 50 * time.Millisecond })
	r.ask("alice", "s1", "I ride my bike to work in Lisbon every day.", fakeopenai.Text("Nice."))
	r.endSessions("alice")
	r.up.QueueChat(fakeopenai.Text("ok"))
	before := len(r.up.ChatRequests())
	_, err := r.chat("alice").New(context.Background(), openai.ChatCompletionNewParams{
		Model: "gpt-test",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("You are a terse assistant."),
			userMessage("How do I ride to work?"),
		},
	})
	require.NoError(t, err)
	msgs := r.up.ChatRequests()[before].Chat.Messages
	require.Len(t, msgs, 2, "one system message, not two")
	assert.True(t, strings.HasPrefix(msgs[0].Content, "You are a terse assistant.\n\n"), msgs[0].Content)
	assert.Contains(t, msgs[0].Content, "Lisbon")
}

func TestThePreFilterSkipsTheSearchForAGreeting(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	_, state := r.ask("alice", "", "Thanks, that helps a lot!", fakeopenai.Text("You're welcome."))
	assert.Equal(t, "used; retrieval=skipped", state)
	_, state = r.ask("alice", "", "Where do I live?", fakeopenai.Text("Lisbon."))
	assert.Equal(t, "used; retrieved=0", state)
}

func TestMemoryConfigTunesARequest(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	send := func(cfg map[string]any) (fakeopenai.Request, string) {
		t.Helper()
		r.up.QueueChat(fakeopenai.Text("ok"))
		var resp *http.Response
		_, err := r.chat("alice").New(context.Background(), openai.ChatCompletionNewParams{
			Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{userMessage("Where do I live?")},
		}, option.WithJSONSet("memory_config", cfg), option.WithResponseInto(&resp))
		require.NoError(t, err)
		reqs := r.up.ChatRequests()
		return reqs[len(reqs)-1], resp.Header.Get(gateway.Header)
	}
	req, state := send(map[string]any{"enabled": false})
	assert.Equal(t, "skipped; reason=disabled", state)
	assert.Len(t, req.Chat.Messages, 1, "no memory block")
	assert.NotContains(t, string(req.Body), "memory_config", "the extension is not forwarded")
	assert.Empty(t, r.turns("alice"), "nor is the turn recorded")

	_, state = send(map[string]any{"retrieval_limit": 0, "auto_store": false})
	assert.Equal(t, "used; retrieval=off; store=off", state)
	assert.Empty(t, r.turns("alice"))

	_, state = send(map[string]any{"memory_types": []string{"insight"}, "similarity_threshold": 0.5})
	assert.Equal(t, "used; retrieved=0", state)
	assert.Len(t, r.turns("alice"), 2)
}

func TestBadMemoryFieldsAreRefusedNamingTheField(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	cases := []struct {
		header map[string]string
		body   map[string]any
		param  string
	}{
		{map[string]string{gateway.UserHeader: "a/b"}, nil, gateway.UserHeader},
		{nil, map[string]any{"user": "x#y"}, "user"},
		{nil, map[string]any{"memory_context": map[string]any{"user_id": "bad?id"}}, "memory_context.user_id"},
		{map[string]string{gateway.UserHeader: "alice", gateway.SessionHeader: "s/1"}, nil, gateway.SessionHeader},
		{nil, map[string]any{"user": "alice", "memory_config": map[string]any{"retrieval_limit": -1}}, "memory_config.retrieval_limit"},
		{nil, map[string]any{"user": "alice", "memory_config": map[string]any{"similarity_threshold": 2}}, "memory_config.similarity_threshold"},
		{nil, map[string]any{"user": "alice", "memory_config": map[string]any{"memory_types": []string{"dreams"}}}, "memory_config.memory_types"},
		{nil, map[string]any{"user": "alice", "memory_config": map[string]any{"enabeld": true}}, "memory_config"},
	}
	for _, tc := range cases {
		body := map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
		for k, v := range tc.body {
			body[k] = v
		}
		status, _, b := r.do(http.MethodPost, "/v1/chat/completions", tc.header, body)
		assert.Equal(t, http.StatusBadRequest, status, tc.param)
		var e struct {
			Error struct {
				Message, Type string
				Param         *string
			}
		}
		require.NoError(t, json.Unmarshal(b, &e), string(b))
		require.NotNil(t, e.Error.Param, string(b))
		assert.Equal(t, tc.param, *e.Error.Param)
		assert.Equal(t, "invalid_request_error", e.Error.Type)
	}
	assert.Empty(t, r.up.ChatRequests(), "nothing bad is forwarded")
}

func TestTheUserComesFromMemoryContextThenTheHeaderThenTheUserField(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	body := func(extra map[string]any) map[string]any {
		b := map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "I like tea."}}}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	r.up.QueueChat(fakeopenai.Text("ok"), fakeopenai.Text("ok"), fakeopenai.Text("ok"))
	status, _, _ := r.do(http.MethodPost, "/v1/chat/completions", map[string]string{gateway.UserHeader: "header-user"},
		body(map[string]any{"user": "field-user", "memory_context": map[string]any{"user_id": "context-user", "project_id": "p"}}))
	require.Equal(t, http.StatusOK, status)
	status, _, _ = r.do(http.MethodPost, "/v1/chat/completions", map[string]string{gateway.UserHeader: "header-user"}, body(map[string]any{"user": "field-user"}))
	require.Equal(t, http.StatusOK, status)
	status, _, _ = r.do(http.MethodPost, "/v1/chat/completions", nil, body(map[string]any{"user": "field-user"}))
	require.Equal(t, http.StatusOK, status)
	assert.Len(t, r.turns("context-user"), 2)
	assert.Len(t, r.turns("header-user"), 2)
	assert.Len(t, r.turns("field-user"), 2)
	assert.NotContains(t, string(r.up.ChatRequests()[0].Body), "memory_context")
	assert.Contains(t, string(r.up.ChatRequests()[0].Body), `"user":"field-user"`, "the user field is forwarded")
}

func TestARequestWithoutUserIsForwardedWithoutMemory(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	r.up.QueueChat(fakeopenai.Text("ok"))
	var resp *http.Response
	_, err := r.chat("").New(context.Background(), openai.ChatCompletionNewParams{
		Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{userMessage("My name is Nobody.")},
	}, option.WithResponseInto(&resp))
	require.NoError(t, err)
	assert.Equal(t, "skipped; reason=no-user", resp.Header.Get(gateway.Header))
	assert.Len(t, r.up.ChatRequests()[0].Chat.Messages, 1)
}

func TestABodyTheGatewayCannotReadIsRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(c *gateway.Config) { c.MaxBodyBytes = 1024 })
	post := func(body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, r.srv.URL+"/v1/chat/completions", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, b := post(`[1,2]`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, b, `"param":"body"`)
	status, b = post(`{"model":"m"}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, b, `"param":"messages"`)
	status, b = post(`{"model":"m","stream":"yes","messages":[]}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, b, `"param":"stream"`)
	status, _ = post(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 2048) + `"}]}`)
	assert.Equal(t, http.StatusRequestEntityTooLarge, status)
	assert.Empty(t, r.up.ChatRequests())
}
