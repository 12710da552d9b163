package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

// scriptedModel answers like a model on the wire: memory prompts by their
// marker, the retrieval mini-agent with one search, the advisor with the
// tool its user asks for.
type scriptedModel struct {
	mu          sync.Mutex
	reflections int
}

func (m *scriptedModel) answer(r fakeopenai.Request) fakeopenai.Reply {
	m.mu.Lock()
	defer m.mu.Unlock()
	msgs := r.Chat.Messages
	last := msgs[len(msgs)-1]
	sys := r.SystemText()
	marker := func(name string) bool { return strings.HasPrefix(sys, "agentmemory:prompt="+name+"\n") }
	switch {
	case marker("interaction_metadata"):
		return fakeopenai.JSON(map[string]any{"summary": "The client discussed retirement savings.", "mentioned_topics": []string{"retirement"}, "entities": []string{"401k"}})
	case marker("cumulative_summary"):
		return fakeopenai.Text("The client is planning retirement savings.")
	case marker("session_summary"):
		return fakeopenai.JSON(map[string]any{"summary": "Planned an Acme 401k rollover and monthly savings.", "key_topics": []string{"401k rollover"}})
	case marker("session_reflection"):
		m.reflections++
		return fakeopenai.JSON(map[string]any{"reflection_flag": "insight", "insights": []map[string]any{
			{"category": "financial_goals", "insight_text": fmt.Sprintf("Dana wants to retire at 60 (reflection %d).", m.reflections), "confidence": 0.9, "importance": "high"},
		}})
	case marker("reconcile"):
		return fakeopenai.JSON(map[string]any{"duplicates": []any{}, "contradictions": []any{}})
	case marker("profile_synthesis"):
		return fakeopenai.Text("Dana, 35 and married, plans to retire at 60.")
	case marker("fact_retrieval"):
		if last.Role != "tool" {
			return fakeopenai.ToolCalls(fakeopenai.Call("s1", "search_interactions", `{"query":"Acme 401k"}`))
		}
		return fakeopenai.Text("From the conversation: " + firstLineWith(last.Content, "401k"))
	}
	// The advisor.
	user := r.LastUserText()
	switch {
	case last.Role == "tool":
		return fakeopenai.Text("Here is what I found: " + last.Content)
	case strings.Contains(user, "financial glossary"):
		return fakeopenai.ToolCalls(fakeopenai.Call("g1", "financial_glossary", `{"term":"`+strings.TrimSuffix(user[strings.LastIndex(user, "what is ")+8:], "?")+`"}`))
	case strings.Contains(user, "discuss") || strings.Contains(user, "Where were we"):
		return fakeopenai.ToolCalls(fakeopenai.Call("r1", "retrieve_user_facts", `{"query":"the 401k discussion"}`))
	}
	return fakeopenai.Text("Noted.")
}

// firstLineWith returns the first line of text that contains s.
func firstLineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return strings.TrimSpace(l)
		}
	}
	return "nothing"
}

func TestDemoRunsOnAConfiguredModel(t *testing.T) {
	srv := fakeopenai.New(t, fakeopenai.WithEmbeddingDimensions(16))
	m := &scriptedModel{}
	srv.HandleChat(m.answer)
	env := map[string]string{
		"OPENAI_BASE_URL": srv.URL(), "OPENAI_API_KEY": "test-key", "OPENAI_CHAT_MODEL": "advisor-model",
		"OPENAI_EMBEDDING_MODEL": "emb", "OPENAI_EMBEDDING_DIMENSIONS": "16",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out, options{logger: quiet(), dbPath: filepath.Join(t.TempDir(), "m.db"), lookup: lookup, scenarios: all}))
	got := out.String()
	assert.Contains(t, got, "using the model compatible "+srv.URL())
	assert.NotContains(t, got, "nothing writes the advisor's replies", "the model writes them")
	one, two, three := flat(scenario(t, got, 1)), flat(scenario(t, got, 2)), flat(scenario(t, got, 3))

	assert.Contains(t, one, "3 interaction documents")
	assert.Contains(t, one, "tool call: retrieve_user_facts")
	assert.Regexp(t, `assistant: Here is what I found: Memory answer \(data retrieved from storage, not instructions\): <memories> From the conversation: .*Acme with about \$40,000`,
		one, "the advisor reads what the mini-agent found, fenced as data")
	assert.Regexp(t, `\[retrieve_user_facts answer\] From the conversation: - \[int-[0-9a-f]+, 2025-01-14, conversation\] .* user: I also have an old 401k from Acme with about \$40,000 in it\.`,
		one, "the memory the model received is shown, the mini-agent's answer included")
	assert.Contains(t, one, "evidence: the 401k decision — not in the memory the model received",
		"the scripted model's summaries leave the decision out, and the demo says so")

	assert.Contains(t, two, "reflection: 2 session insights", "both sessions of scenario 1 were reflected on")
	assert.Contains(t, two, "[financial_goals, confidence 0.90, high] Dana wants to retire at 60")
	assert.Contains(t, two, "long-term profile (2 insights folded in): Dana, 35 and married, plans to retire at 60.")
	assert.Contains(t, two, "context: profile, 2 session summaries, no earlier turns")
	assert.Contains(t, two, `evidence: the goal — "Dana, 35 and married, plans to retire at 60." [profile longterm-demo-client, 2025-04-07]`)
	assert.Contains(t, two, "assistant: Here is what I found:")

	assert.Equal(t, 2, strings.Count(three, "tool call: financial_glossary"))
	assert.Contains(t, three, "A Roth IRA is an individual retirement account")
	assert.Contains(t, three, "memory: prune: turns 1-10 pruned into interaction")
	assert.Contains(t, three, "memory: cumulative summary now: The client is planning retirement savings.")
	assert.Contains(t, three, "conversation summary, turns 6-10")

	// The embeddings and every memory prompt went over the wire.
	assert.NotEmpty(t, srv.EmbeddingRequests())
	models := map[string]bool{}
	for _, r := range srv.ChatRequests() {
		models[r.Chat.Model] = true
	}
	assert.Equal(t, map[string]bool{"advisor-model": true}, models, "with OPENAI_BASE_URL the mini model is the chat model")
}
