package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/erasure"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/reflection"
	"github.com/agentmemory/agentmemory/store"
)

// session runs a short session of the fixture's user and ends it.
func (f *fixture) session(t *testing.T, user string, turns int) *agent.Session {
	t.Helper()
	ctx := context.Background()
	sess, err := f.agent.NewUserSession(user)
	require.NoError(t, err)
	for i := 1; i <= turns; i++ {
		_, err := f.agent.Run(ctx, sess, agent.UserText(fmt.Sprintf("%s question %d", user, i)))
		require.NoError(t, err)
	}
	_, err = f.mem.EndSession(ctx, sess)
	require.NoError(t, err)
	require.NoError(t, f.mem.Flush(ctx))
	return sess
}

func (f *fixture) requestsFor(prompt string) []string {
	var models []string
	for _, r := range f.srv.ChatRequests() {
		if strings.HasPrefix(r.SystemText(), "agentmemory:prompt="+prompt+"\n") {
			models = append(models, r.Chat.Model)
		}
	}
	return models
}

func TestSessionsAreReflectedWhenTheyEnd(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, func(c *provider.Config) { c.ReconcileEvery, c.ProfileEvery = 2, 2 })

	first := f.session(t, "u1", 3)
	assert.Equal(t, []string{"main"}, f.requestsFor("session_reflection"), "reflection uses the main model, in the background")
	ins, err := f.st.ListInsights(ctx, "u1", store.InsightFilter{})
	require.NoError(t, err)
	require.Len(t, ins, 1)
	assert.Equal(t, []string{first.ID()}, ins[0].SessionIDs)
	doc, err := f.st.GetSession(ctx, "u1", first.ID())
	require.NoError(t, err)
	assert.Equal(t, store.ReflectionProcessed, doc.ReflectionStatus)
	assert.Empty(t, f.requestsFor("reconcile"), "one reflection is not yet ReconcileEvery")
	assert.Empty(t, f.requestsFor("profile_synthesis"))

	f.session(t, "u1", 2)
	assert.Len(t, f.requestsFor("reconcile"), 1, "the second fruitful reflection reconciles")
	assert.Len(t, f.requestsFor("profile_synthesis"), 1, "and updates the profile")
	prof, err := f.st.GetInsight(ctx, "u1", store.LongTermID("u1"))
	require.NoError(t, err)
	assert.Equal(t, "The client is planning a 401k rollover (profile 1).", prof.InsightText)
	assert.Len(t, prof.SourceInsightIDs, 2)

	// The next session starts with the profile.
	third, err := f.agent.NewUserSession("u1")
	require.NoError(t, err)
	_, err = f.agent.Run(ctx, third, agent.UserText("hello again"))
	require.NoError(t, err)
	man, ok := f.mem.LastManifest(third)
	require.True(t, ok)
	assert.Equal(t, keeper.ItemProfile, man.Items[0].Kind)
	var block string
	for _, m := range f.lastMainRequest(t).Chat.Messages {
		if strings.HasPrefix(m.Content, "<memory>") {
			block = m.Content
		}
	}
	assert.Contains(t, block, "### Key Insights\nThe client is planning a 401k rollover (profile 1).")
}

func TestManualReflection(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, func(c *provider.Config) { c.Reflection = provider.ReflectManual })
	sess := f.session(t, "u1", 2)
	assert.Empty(t, f.requestsFor("session_reflection"), "nothing runs by itself")
	res, err := f.mem.Reflector().ReflectSession(ctx, "u1", sess.ID())
	require.NoError(t, err)
	assert.Len(t, res.Insights, 1)
	prof, err := f.mem.Reflector().ReflectLongTerm(ctx, "u1")
	require.NoError(t, err)
	assert.Equal(t, []string{res.Insights[0].ID}, prof.Folded)
}

func TestFailedReflectionNeverBreaksTheSession(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		if strings.HasPrefix(r.SystemText(), "agentmemory:prompt=session_reflection") {
			return fakeopenai.Error(500, "reflection model down")
		}
		return f.model.answer(r)
	})
	sess := f.session(t, "u1", 2)
	assert.Len(t, f.requestsFor("session_reflection"), 3, "tried MaxAttempts times in the background")
	doc, err := f.st.GetSession(ctx, "u1", sess.ID())
	require.NoError(t, err)
	assert.Equal(t, store.SessionCompleted, doc.Status)
	assert.Equal(t, store.ReflectionPending, doc.ReflectionStatus, "left pending for the next trigger")

	// The next session's end picks it up once the model is back.
	f.srv.HandleChat(f.model.answer)
	f.session(t, "u1", 1)
	doc, err = f.st.GetSession(ctx, "u1", sess.ID())
	require.NoError(t, err)
	assert.Equal(t, store.ReflectionProcessed, doc.ReflectionStatus)
}

func TestForgetInsightAndUser(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, func(c *provider.Config) { c.ProfileEvery = 1 })
	f.session(t, "u1", 2)
	f.session(t, "u2", 2)
	ins, err := f.st.ListInsights(ctx, "u1", store.InsightFilter{Type: store.InsightSession})
	require.NoError(t, err)
	require.Len(t, ins, 1)

	// Another user's insight id is not found for u2.
	_, err = f.mem.ForgetInsight(ctx, "u2", ins[0].ID, provider.ForgetOptions{})
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = f.st.GetInsight(ctx, "u1", store.LongTermID("u1"))
	require.NoError(t, err, "the profile folded the insight in")
	rc, err := f.mem.ForgetInsight(ctx, "u1", ins[0].ID, provider.ForgetOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{ins[0].ID}, rc.IDs(store.KindInsight, erasure.Deleted))
	_, err = f.st.GetInsight(ctx, "u1", store.LongTermID("u1"))
	require.ErrorIs(t, err, store.ErrNotFound, "rebuilt from the remaining insights: none")
	audit, err := f.st.ListInsights(ctx, "u1", store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	assert.Empty(t, audit, "deleted, not marked")

	_, err = f.mem.ForgetInsight(ctx, "u2", store.LongTermID("u2"), provider.ForgetOptions{})
	require.NoError(t, err, "the profile can be forgotten")
	_, err = f.st.GetInsight(ctx, "u2", store.LongTermID("u2"))
	require.ErrorIs(t, err, store.ErrNotFound)

	rc, err = f.mem.ForgetUser(ctx, "u1")
	require.NoError(t, err)
	assert.Equal(t, 1, rc.Count(store.KindSessionSummary, erasure.Deleted))
	assert.Equal(t, 2, rc.Count(store.KindTurn, erasure.Deleted))
	docs, err := f.st.ListInteractions(ctx, "u1", store.InteractionFilter{})
	require.NoError(t, err)
	assert.Empty(t, docs)
	sessions, err := f.st.ListSessions(ctx, "u1", store.SessionFilter{})
	require.NoError(t, err)
	assert.Empty(t, sessions)
	audit, err = f.st.ListInsights(ctx, "u1", store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	assert.Empty(t, audit)

	other, err := f.st.ListInsights(ctx, "u2", store.InsightFilter{})
	require.NoError(t, err)
	assert.Len(t, other, 1, "u2's insight untouched (its profile was forgotten above)")
	_, err = f.mem.ForgetUser(ctx, "")
	require.Error(t, err)
}

func TestInsightsAreExtractedEveryNTurns(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, func(c *provider.Config) { c.ExtractEvery = 20 })
	sess, err := f.agent.NewUserSession("u1")
	require.NoError(t, err)
	for i := 1; i <= 23; i++ {
		_, err := f.agent.Run(ctx, sess, agent.UserText(fmt.Sprintf("question %d", i)))
		require.NoError(t, err)
		require.NoError(t, f.mem.Flush(ctx))
		want := 0
		if i >= 20 {
			want = 1 // turns 11-20 were pruned after turn 20: 20 turns reached
		}
		require.Len(t, f.requestsFor("session_reflection"), want, "after turn %d", i)
	}
	doc, err := f.st.GetSession(ctx, "u1", sess.ID())
	require.NoError(t, err)
	assert.Equal(t, store.SessionActive, doc.Status)
	assert.Equal(t, 20, doc.ReflectedThrough)
	require.Len(t, doc.ExtractedInsights, 1, "an insight before the session ends")

	_, err = f.mem.EndSession(ctx, sess)
	require.NoError(t, err)
	require.NoError(t, f.mem.Flush(ctx))
	var blocks []string
	for _, r := range f.srv.ChatRequests() {
		if strings.HasPrefix(r.SystemText(), "agentmemory:prompt=session_reflection\n") {
			blocks = append(blocks, r.LastUserText())
		}
	}
	require.Len(t, blocks, 2)
	assert.Contains(t, blocks[0], "question 1\n")
	assert.Contains(t, blocks[0], "question 20\n")
	assert.NotContains(t, blocks[1], "question 20\n", "the end reads only what is left")
	assert.Contains(t, blocks[1], "question 21\n")
	doc, err = f.st.GetSession(ctx, "u1", sess.ID())
	require.NoError(t, err)
	assert.Equal(t, store.ReflectionProcessed, doc.ReflectionStatus)
	assert.Equal(t, 23, doc.ReflectedThrough)
	assert.Len(t, doc.ExtractedInsights, 2)
}

func TestABacklogOfSessionsIsReflectedInBatches(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, func(c *provider.Config) { c.ReconcileEvery = -1 })
	// Sessions stored before reflection was turned on.
	n := reflection.MaxPendingPerCall + 5
	for i := range n {
		id := fmt.Sprintf("old-%02d", i)
		start := f.now.Add(-time.Duration(n-i) * time.Hour)
		require.NoError(t, f.st.PutSession(ctx, "u1", &store.Session{ID: id, StartTime: start, Status: store.SessionCompleted}))
		require.NoError(t, f.st.PutInteraction(ctx, "u1", &store.Interaction{ID: store.InteractionID(id, 1, 2), SessionID: id,
			Timestamp: start, FirstTurn: 1, LastTurn: 2, Content: fmt.Sprintf("user: old question %d\nassistant: old answer", i)}))
	}
	f.session(t, "u1", 1) // its end triggers reflection
	assert.Len(t, f.requestsFor("session_reflection"), n+1, "every session, in batches")
	pending, err := f.st.ListSessions(ctx, "u1", store.SessionFilter{ReflectionStatus: store.ReflectionPending})
	require.NoError(t, err)
	assert.Empty(t, pending)
}

func TestExportUserWritesEverythingOfTheUserOnly(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, func(c *provider.Config) { c.ProfileEvery = 1 })
	f.session(t, "u1", 12) // two interactions (1-10, 11-12), an insight, the profile (rebuilt away when the insight is forgotten)
	f.session(t, "u2", 2)
	ins, err := f.st.ListInsights(ctx, "u1", store.InsightFilter{Type: store.InsightSession})
	require.NoError(t, err)
	_, err = f.mem.ForgetInsight(ctx, "u1", ins[0].ID, provider.ForgetOptions{}) // gone from the export
	require.NoError(t, err)

	var buf bytes.Buffer
	n, err := f.mem.ExportUser(ctx, "u1", &buf)
	require.NoError(t, err)
	kinds := map[store.Kind]int{}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, n)
	for _, l := range lines {
		var doc struct {
			Kind     store.Kind     `json:"kind"`
			Document map[string]any `json:"document"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &doc), l)
		kinds[doc.Kind]++
		assert.Equal(t, "u1", doc.Document["user_id"], "only the user's documents")
		for _, v := range []string{"content_vector", "summary_vector", "insight_vector"} {
			assert.NotContains(t, doc.Document, v, "vectors are left out")
		}
		assert.NotEqual(t, ins[0].ID, doc.Document["id"], "a forgotten insight is not kept")
	}
	// The forgotten insight is gone, and so is the profile built from it
	// alone.
	assert.Equal(t, map[store.Kind]int{store.KindSessionSummary: 1, store.KindTurn: 12, store.KindInteraction: 2}, kinds)
	assert.Contains(t, buf.String(), "u1 question 12")
	assert.NotContains(t, buf.String(), "u2 question")

	_, err = f.mem.ExportUser(ctx, "", &buf)
	require.Error(t, err)
}
