package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/prompts"
)

// gatewayUpstream answers the fake model endpoint behind the gateway: the
// memory models' prompts as endpoint does (a session's summary keeps the
// fact about the dog), get_weather with a call and its result with the
// weather, anything else with "Noted: " and the last user message.
func gatewayUpstream(r fakeopenai.Request) fakeopenai.Reply {
	if sys := r.SystemText(); strings.HasPrefix(sys, prompts.MarkerPrefix) {
		if strings.HasPrefix(sys, prompts.MarkerPrefix+prompts.NameSessionSummary) && strings.Contains(r.Text(), "Biscuit") {
			return fakeopenai.JSON(map[string]any{"summary": "The user's dog is called Biscuit; he is a beagle.", "key_topics": []string{"dog"}})
		}
		return chatReply(r)
	}
	msgs := r.Chat.Messages
	if last := msgs[len(msgs)-1]; last.Role == "tool" {
		return fakeopenai.Text("It is " + last.Content + " in Lisbon.")
	}
	if slices.ContainsFunc(r.Chat.Tools, func(t fakeopenai.Tool) bool { return t.Function.Name == "get_weather" }) {
		return fakeopenai.ToolCalls(fakeopenai.Call("call_w1", "get_weather", `{"city":"Lisbon"}`)).WithFinishReason("tool_calls")
	}
	return fakeopenai.Text("Noted: " + r.LastUserText())
}

// TestOfficialOpenAISDK drives the gateway with the official OpenAI
// JavaScript SDK, npm openai 7.55.0 (pinned in e2e/package-lock.json),
// over HTTPS with an API key, in front of a fake model endpoint that also
// serves the memory models: chat completions streamed and not, a
// Responses chain through previous_response_id streamed and not, a client
// tool call round trip, another user, and the memory routes. It then
// checks what the endpoint received: the fact told in the first session
// in a later session's request, and never in the other user's.
func TestOfficialOpenAISDK(t *testing.T) {
	up := fakeopenai.New(t)
	up.HandleChat(gatewayUpstream)
	up.HandleEmbeddings(embeddingsReply)
	out, _ := runE2E(t, map[string]string{"OPENAI_BASE_URL": up.URL(), "OPENAI_API_KEY": "upstream-key", "OPENAI_CHAT_MODEL": "gpt-test",
		"OPENAI_EMBEDDING_MODEL": "env-emb", "OPENAI_EMBEDDING_DIMENSIONS": "8"},
		"gateway.js", "openai", "-gateway-idle-timeout", "300ms")
	for _, step := range []string{"chat_completion", "chat_stream", "session_summarised", "responses_create", "responses_chain",
		"responses_stream_chain", "tool_round_trip", "other_user", "foreign_chain_refused", "forget_memory", "forget_user"} {
		require.Contains(t, out, "ok "+step+"\n")
	}
	require.Contains(t, out, "GATEWAY E2E OK")

	// What the model endpoint received from the gateway (not the memory
	// models' own prompts).
	var sent []fakeopenai.Request
	for _, r := range up.ChatRequests() {
		if !strings.HasPrefix(r.SystemText(), prompts.MarkerPrefix) {
			sent = append(sent, r)
		}
	}
	byLast := func(text string) fakeopenai.Request {
		t.Helper()
		i := slices.IndexFunc(sent, func(r fakeopenai.Request) bool { return r.LastUserText() == text })
		require.GreaterOrEqual(t, i, 0, "no request ends with %q", text)
		return sent[i]
	}
	later := byLast("What is my dog called?")
	assert.Contains(t, later.Text(), "Biscuit", "the fact of the first session, in a later session's request")
	assert.Contains(t, later.Text(), "Be brief.")

	chained := byLast("And which breed is he?")
	users := 0
	for _, m := range chained.Chat.Messages {
		if m.Role == "user" && m.Content == "What is my dog called?" {
			users++
		}
		assert.NotContains(t, m.Content, "Be brief.", "instructions are not carried over")
	}
	assert.Equal(t, 1, users, "the chain's earlier turn, once")

	bob := 0
	for _, r := range sent {
		if strings.Contains(r.Text(), "Bob here") {
			bob++
			assert.NotContains(t, r.Text(), "Biscuit", "user B's request carries none of user A's memory")
			assert.NotContains(t, r.Text(), "beagle")
		}
	}
	assert.Equal(t, 2, bob, "bob's two requests reached the endpoint; the refused one did not")
}
