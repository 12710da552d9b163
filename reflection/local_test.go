package reflection_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/reflection"
	"github.com/agentmemory/agentmemory/store"
)

// A local server that refuses response_format: session reflection still
// stores its insights from an answer in a code fence with trailing commas
// after a <think> block, and only the first reflection's request asks for
// JSON mode.
func TestReflectSessionOnAServerWithoutJSONMode(t *testing.T) {
	ctx := context.Background()
	e := newEnvOn(t, reflection.Config{}, fakeopenai.WithoutJSONMode())
	e.srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		if !strings.HasPrefix(r.SystemText(), prompts.Marker(prompts.NameSessionReflection)) {
			return fakeopenai.Text("?")
		}
		text := "The user wants to retire at 60."
		if strings.Contains(r.LastUserText(), "house") {
			text = "The user wants to buy a house in 2028."
		}
		return fakeopenai.Text("<think>One goal. {\"insights\": []}</think>\nHere are the insights:\n```json\n" +
			`{"reflection_flag": "insight", "insights": [{"category": "financial_goals", "insight_text": "` + text + `", "confidence": 0.9, "importance": "high",},],}` +
			"\n```")
	})
	e.session(t, "alice", "s1", day, "user: I want to retire at 60.\nassistant: Let's plan for that.")
	e.session(t, "alice", "s2", day.Add(2*time.Hour), "user: I want to buy a house in 2028.\nassistant: Noted.")

	for _, sid := range []string{"s1", "s2"} {
		res, err := e.r.ReflectSession(ctx, "alice", sid)
		require.NoError(t, err, sid)
		assert.Equal(t, store.FlagInsight, res.Flag, sid)
		require.Len(t, res.Insights, 1, sid)
	}
	stored, err := e.st.ListInsights(ctx, "alice", store.InsightFilter{})
	require.NoError(t, err)
	var texts []string
	for _, in := range stored {
		texts = append(texts, in.InsightText)
	}
	assert.ElementsMatch(t, []string{"The user wants to retire at 60.", "The user wants to buy a house in 2028."}, texts)

	reqs := e.srv.ChatRequests()
	require.Len(t, reqs, 3, "the first reflection: refused, then retried; the second: once")
	assert.NotEmpty(t, reqs[0].Chat.ResponseFormat)
	assert.Empty(t, reqs[1].Chat.ResponseFormat)
	assert.Empty(t, reqs[2].Chat.ResponseFormat)
}
