package provider_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
)

// A streamed run through the memory provider on SQLite: the turn reaches
// the store once the answer completed, exactly once, and never when the
// consumer walks away.

func TestRunStreamStoresTheTurnOnceComplete(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	sess := f.startSession(t)

	for round := 1; round <= 2; round++ {
		var text strings.Builder
		var resp *agent.Response
		for d, err := range f.agent.RunStream(ctx, sess, agent.UserText("question")) {
			require.NoError(t, err)
			if d.Text != "" {
				turns, err := f.st.ListTurns(ctx, "u1", sess.ID(), 0)
				require.NoError(t, err)
				assert.Len(t, turns, round-1, "no turn stored while the answer streams")
			}
			text.WriteString(d.Text)
			if d.Response != nil {
				resp = d.Response
			}
		}
		require.NotNil(t, resp)
		assert.Equal(t, resp.Text(), text.String())

		turns, err := f.st.ListTurns(ctx, "u1", sess.ID(), 0)
		require.NoError(t, err)
		require.Len(t, turns, round, "the turn is stored once, when complete")
		last := turns[round-1]
		assert.Equal(t, round, last.Seq)
		require.Len(t, last.Messages, 2)
		assert.Equal(t, "question", last.Messages[0].Content)
		assert.Equal(t, resp.Text(), last.Messages[1].Content)
		assert.Equal(t, resp.Messages[0].ID, last.Messages[1].ID)
	}
	assert.Equal(t, 4, sess.Len())
}

func TestRunStreamAbandonedStoresNothing(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	sess := f.startSession(t)

	for d, err := range f.agent.RunStream(ctx, sess, agent.UserText("never mind")) {
		require.NoError(t, err)
		if d.Text != "" {
			break
		}
	}
	turns, err := f.st.ListTurns(ctx, "u1", sess.ID(), 0)
	require.NoError(t, err)
	assert.Empty(t, turns, "an abandoned run stores no turn")
	assert.Zero(t, sess.Len())

	_, err = f.agent.Run(ctx, sess, agent.UserText("question"))
	require.NoError(t, err)
	turns, err = f.st.ListTurns(ctx, "u1", sess.ID(), 0)
	require.NoError(t, err)
	require.Len(t, turns, 1)
	assert.Equal(t, 1, turns[0].Seq, "the abandoned run took no turn number")
	assert.Equal(t, "question", turns[0].Messages[0].Content)
}

func TestRunStreamMemoryToolRoundTrip(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	sess := f.startSession(t)
	calls := 0
	f.scriptMain(func(fakeopenai.Request) fakeopenai.Reply {
		calls++
		if calls == 1 {
			return fakeopenai.ToolCalls(fakeopenai.Call("c1", "retrieve_user_facts", `{"query":"401k rollover"}`))
		}
		return fakeopenai.Text("Nothing on file about your 401k yet.")
	})

	var toolNames, text strings.Builder
	var messages []agent.Message
	var resp *agent.Response
	for d, err := range f.agent.RunStream(ctx, sess, agent.UserText("What do you know about my 401k?")) {
		require.NoError(t, err)
		for _, tc := range d.ToolCalls {
			toolNames.WriteString(tc.Name)
		}
		text.WriteString(d.Text)
		if d.Message != nil {
			messages = append(messages, *d.Message)
		}
		if d.Response != nil {
			resp = d.Response
		}
	}
	require.NotNil(t, resp)
	assert.Equal(t, 2, calls)
	assert.Equal(t, "retrieve_user_facts", toolNames.String())
	assert.Equal(t, "Nothing on file about your 401k yet.", text.String())
	require.Len(t, messages, 3)
	assert.Equal(t, agent.RoleTool, messages[1].Role)
	assert.Equal(t, "c1", messages[1].ToolCallID)

	turns, err := f.st.ListTurns(ctx, "u1", sess.ID(), 0)
	require.NoError(t, err)
	require.Len(t, turns, 1)
	var tools []map[string]any
	require.NoError(t, json.Unmarshal([]byte(turns[0].Metadata["tools"]), &tools))
	require.Len(t, tools, 1, "the tool call is stored with the turn")
	assert.Equal(t, "Nothing on file about your 401k yet.", turns[0].Messages[len(turns[0].Messages)-1].Content)
}
