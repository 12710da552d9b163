package reflection_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/llm/openai"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/reflection"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

const dims = 8

var day = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

type env struct {
	srv *fakeopenai.Server
	st  *sqlite.Store
	r   *reflection.Reflector
	now time.Time
}

func newEnv(t *testing.T, cfg reflection.Config) *env {
	t.Helper()
	return newEnvOn(t, cfg)
}

// newEnvOn is newEnv on a fake server made with opts.
func newEnvOn(t *testing.T, cfg reflection.Config, opts ...fakeopenai.Option) *env {
	t.Helper()
	e := &env{srv: fakeopenai.New(t, append([]fakeopenai.Option{fakeopenai.WithEmbeddingDimensions(dims)}, opts...)...), now: day.Add(24 * time.Hour)}
	st, err := sqlite.Open(context.Background(), sqlitetest.NewFile(t), sqlite.Config{Dimensions: dims})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	e.st = st
	oc := openai.Config{BaseURL: e.srv.URL(), ChatModel: "gpt", EmbeddingModel: "emb", EmbeddingModelDimensions: dims, MaxRetries: -1}
	chat, err := openai.NewChat(oc)
	require.NoError(t, err)
	emb, err := openai.NewEmbedder(oc)
	require.NoError(t, err)
	cfg.Chat, cfg.Embedder = chat, emb
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.Now = func() time.Time { return e.now }
	e.r, err = reflection.New(st, cfg)
	require.NoError(t, err)
	return e
}

// session stores a completed session of user with one interaction.
func (e *env) session(t *testing.T, user, id string, start time.Time, content string) string {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, e.st.PutSession(ctx, user, &store.Session{ID: id, StartTime: start, EndTime: start.Add(time.Hour),
		Status: store.SessionCompleted, Summary: "a session", UpdatedAt: start}))
	in := &store.Interaction{ID: store.InteractionID(id, 1, 2), SessionID: id, Timestamp: start, FirstTurn: 1, LastTurn: 2,
		TurnIDs: []string{id + "-1", id + "-2"}, Content: content}
	require.NoError(t, e.st.PutInteraction(ctx, user, in))
	return in.ID
}

func reflectionAnswer(insights ...string) fakeopenai.Reply {
	if len(insights) == 0 {
		return fakeopenai.Text(`{"reflection_flag": "no-insight", "insights": []}`)
	}
	return fakeopenai.Text(`{"reflection_flag": "insight", "insights": [` + strings.Join(insights, ",") + `]}`)
}

func insight(cat, text string, conf float64, imp string) string {
	return fmt.Sprintf(`{"category": %q, "insight_text": %q, "confidence": %v, "importance": %q}`, cat, text, conf, imp)
}

func TestReflectSessionStoresInsightsWithProvenance(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, reflection.Config{})
	src := e.session(t, "alice", "s1", day, "user: I'm 42, married, and I want to retire at 60.\nassistant: Let's plan for that.")
	e.srv.QueueChat(reflectionAnswer(
		insight("financial_goals", "The user wants to retire at 60.", 0.9, "high"),
		insight("Demographics", "The user is 42 and married.", 0.85, "medium"),
		insight("concern", "The user may dislike risk.", 0.4, "low"), // below 0.7
		insight("hobbies", "The user likes golf.", 0.9, "low"),       // not a category
	))

	res, err := e.r.ReflectSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.Equal(t, store.FlagInsight, res.Flag)
	assert.Equal(t, 2, res.Dropped)
	require.Len(t, res.Insights, 2)

	// The model saw the session, fenced, with the categories.
	reqs := e.srv.ChatRequests()
	require.Len(t, reqs, 1)
	assert.True(t, strings.HasPrefix(reqs[0].SystemText(), prompts.Marker(prompts.NameSessionReflection)))
	blocks := prompts.Blocks(reqs[0].LastUserText())
	assert.Contains(t, blocks[prompts.BlockSessions], "user: I'm 42, married, and I want to retire at 60.")
	assert.Contains(t, blocks[prompts.BlockCategories], "risk_profile: ")

	stored, err := e.st.ListInsights(ctx, "alice", store.InsightFilter{})
	require.NoError(t, err)
	require.Len(t, stored, 2)
	byCat := map[string]*store.Insight{}
	for _, in := range stored {
		byCat[in.Category] = in
	}
	goal := byCat["financial_goals"]
	require.NotNil(t, goal)
	assert.Equal(t, "The user wants to retire at 60.", goal.InsightText)
	assert.Equal(t, store.InsightSession, goal.InsightType)
	assert.Equal(t, []string{"s1"}, goal.SessionIDs)
	assert.Equal(t, []string{src}, goal.SourceInteractionIDs)
	assert.Equal(t, "high", goal.Importance)
	require.NotNil(t, goal.Confidence)
	assert.InDelta(t, 0.9, *goal.Confidence, 1e-9)
	assert.False(t, goal.Processed)
	assert.Len(t, goal.InsightVector, dims)
	assert.NotNil(t, byCat["demographics"], "a category answered in another case is matched")

	sess, err := e.st.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.Equal(t, store.ReflectionProcessed, sess.ReflectionStatus)
	assert.ElementsMatch(t, []string{stored[0].ID, stored[1].ID}, sess.ExtractedInsights)

	// Reflecting again does nothing and asks nothing.
	again, err := e.r.ReflectSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.True(t, again.Skipped)
	assert.Len(t, e.srv.ChatRequests(), 1)
}

func TestGuidanceReachesThePrompt(t *testing.T) {
	e := newEnv(t, reflection.Config{Guidance: "Never record health details."})
	e.session(t, "alice", "s1", day, "user: I have asthma and I want to retire at 60.\nassistant: Noted.")
	e.srv.QueueChat(reflectionAnswer())
	_, err := e.r.ReflectSession(context.Background(), "alice", "s1")
	require.NoError(t, err)
	sys := e.srv.ChatRequests()[0].SystemText()
	assert.Contains(t, sys, "The application adds: Never record health details.")
	assert.Contains(t, sys, "Never record secrets")
}

func TestReflectSessionRefusesActiveAndUnknownSessions(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, reflection.Config{})
	require.NoError(t, e.st.PutSession(ctx, "alice", &store.Session{ID: "live", StartTime: day}))
	_, err := e.r.ReflectSession(ctx, "alice", "live")
	assert.ErrorIs(t, err, reflection.ErrSessionActive)
	_, err = e.r.ReflectSession(ctx, "alice", "nope")
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = e.r.ReflectSession(ctx, "", "live")
	assert.ErrorIs(t, err, store.ErrInvalid)
	assert.Empty(t, e.srv.ChatRequests())
}

func TestModelFailureLeavesTheSessionPending(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, reflection.Config{})
	e.session(t, "alice", "s1", day, "user: I want to buy a house in 2028.\nassistant: Noted.")
	e.srv.QueueChat(fakeopenai.Error(500, "down"))
	_, err := e.r.ReflectSession(ctx, "alice", "s1")
	require.Error(t, err)
	sess, err := e.st.GetSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.Equal(t, store.ReflectionPending, sess.ReflectionStatus)
	ins, err := e.st.ListInsights(ctx, "alice", store.InsightFilter{})
	require.NoError(t, err)
	assert.Empty(t, ins)

	// Unusable twice: an error, still pending. Then a good answer works.
	e.srv.QueueChat(fakeopenai.Text("I think the user wants a house."), fakeopenai.Text("no JSON here either"))
	_, err = e.r.ReflectSession(ctx, "alice", "s1")
	require.ErrorIs(t, err, prompts.ErrUnusable)
	e.srv.QueueChat(fakeopenai.Text("Sure!"), reflectionAnswer(insight("financial_goals", "The user wants to buy a house in 2028.", 0.9, "high")))
	res, err := e.r.ReflectSession(ctx, "alice", "s1")
	require.NoError(t, err)
	assert.Len(t, res.Insights, 1)
}

func TestRestatedInsightGainsTheSession(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, reflection.Config{})
	e.session(t, "alice", "s1", day, "user: I prefer email.\nassistant: Noted.")
	e.session(t, "alice", "s2", day.Add(48*time.Hour), "user: Again, email please.\nassistant: Sure.")
	e.srv.QueueChat(
		reflectionAnswer(insight("preference", "The user prefers email.", 0.9, "medium")),
		reflectionAnswer(insight("preference", "the user   prefers EMAIL.", 0.95, "medium")),
	)
	res, err := e.r.ReflectPending(ctx, "alice")
	require.NoError(t, err)
	require.Len(t, res.Sessions, 2)
	assert.Equal(t, []string{"s1"}, res.Sessions[0].SessionIDs, "oldest first")
	assert.Equal(t, 1, res.Sessions[1].Restated)
	ins, err := e.st.ListInsights(ctx, "alice", store.InsightFilter{})
	require.NoError(t, err)
	require.Len(t, ins, 1)
	assert.Equal(t, []string{"s1", "s2"}, ins[0].SessionIDs)
	assert.InDelta(t, 0.95, *ins[0].Confidence, 1e-9, "the surer confidence")
}

// A restated insight gains the session even when the long-term profile
// says exactly the same (a profile of that one insight): the profile's
// identical text must not hide the session insight from the lookup by
// content, which would store a second, identical session insight.
func TestRestatedInsightGainsTheSessionWhenTheProfileSaysTheSame(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, reflection.Config{})
	const said = "The user is saving for a house."
	e.session(t, "alice", "s1", day, "user: I am saving for a house.\nassistant: Noted.")
	e.srv.QueueChat(reflectionAnswer(insight("financial_goals", said, 0.9, "high")), fakeopenai.Text(said))
	_, err := e.r.ReflectPending(ctx, "alice")
	require.NoError(t, err)
	_, err = e.r.ReflectLongTerm(ctx, "alice")
	require.NoError(t, err)
	prof, err := e.st.GetInsight(ctx, "alice", store.LongTermID("alice"))
	require.NoError(t, err)
	require.Equal(t, said, prof.InsightText)

	e.now = e.now.Add(time.Hour)
	e.session(t, "alice", "s2", day.Add(48*time.Hour), "user: Still saving for a house.\nassistant: Good.")
	e.srv.QueueChat(reflectionAnswer(insight("financial_goals", said, 0.9, "high")))
	res, err := e.r.ReflectPending(ctx, "alice")
	require.NoError(t, err)
	require.Len(t, res.Sessions, 1)
	assert.Equal(t, 1, res.Sessions[0].Restated)
	ins, err := e.st.ListInsights(ctx, "alice", store.InsightFilter{Type: store.InsightSession})
	require.NoError(t, err)
	require.Len(t, ins, 1, "one session insight, not two with the same text")
	assert.Equal(t, []string{"s1", "s2"}, ins[0].SessionIDs)
}

func TestNoInsightSessionsAreAggregated(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, reflection.Config{AggregateAfter: 3})
	talk := func(i int) {
		e.session(t, "alice", fmt.Sprintf("s%d", i), day.Add(time.Duration(i)*24*time.Hour), fmt.Sprintf("user: Small talk number %d, and I like index funds.\nassistant: Nice.", i))
	}
	talk(1)
	talk(2)
	e.session(t, "bob", "b1", day, "user: bob's secret plan\nassistant: ok")
	e.srv.QueueChat(reflectionAnswer(), reflectionAnswer()) // s1, s2: nothing

	res, err := e.r.ReflectPending(ctx, "alice")
	require.NoError(t, err)
	require.Len(t, res.Sessions, 2)
	assert.Nil(t, res.Aggregate, "two no-insight sessions are not enough")

	talk(3)
	e.srv.QueueChat(reflectionAnswer(), reflectionAnswer(insight("preference", "The user keeps mentioning index funds.", 0.8, "medium")))
	res, err = e.r.ReflectPending(ctx, "alice")
	require.NoError(t, err)
	require.Len(t, res.Sessions, 1)
	assert.Equal(t, store.FlagNoInsight, res.Sessions[0].Flag)
	require.NotNil(t, res.Aggregate)
	assert.Equal(t, []string{"s1", "s2", "s3"}, res.Aggregate.SessionIDs)
	require.Len(t, res.Aggregate.Insights, 1)
	assert.Equal(t, []string{"s1", "s2", "s3"}, res.Aggregate.Insights[0].SessionIDs)
	assert.Len(t, res.Aggregate.Insights[0].SourceInteractionIDs, 3)

	reqs := e.srv.ChatRequests()
	agg := prompts.Blocks(reqs[len(reqs)-1].LastUserText())[prompts.BlockSessions]
	for _, s := range []string{"=== session s1,", "=== session s2,", "=== session s3,", "number 1", "number 3"} {
		assert.Contains(t, agg, s)
	}
	for _, r := range reqs {
		assert.NotContains(t, r.Text(), "bob's secret", "another user's session reached the model")
	}
	for _, id := range []string{"s1", "s2", "s3"} {
		s, err := e.st.GetSession(ctx, "alice", id)
		require.NoError(t, err)
		assert.Equal(t, store.ReflectionProcessed, s.ReflectionStatus, id)
	}
	b, err := e.st.GetSession(ctx, "bob", "b1")
	require.NoError(t, err)
	assert.Equal(t, store.ReflectionPending, b.ReflectionStatus, "bob's session untouched")

	// Nothing left: no model call.
	n := len(e.srv.ChatRequests())
	_, err = e.r.ReflectPending(ctx, "alice")
	require.NoError(t, err)
	assert.Len(t, e.srv.ChatRequests(), n)
}

func putInsight(t *testing.T, st store.Store, user, id, cat, text string, at time.Time, conf float64) {
	t.Helper()
	require.NoError(t, st.PutInsight(context.Background(), user, &store.Insight{ID: id, InsightType: store.InsightSession, InsightText: text,
		Category: cat, Confidence: &conf, Importance: "medium", SessionIDs: []string{"s-" + id}, CreatedAt: at, UpdatedAt: at}))
}

func TestReflectLongTermFoldsUnprocessedInsights(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, reflection.Config{})
	putInsight(t, e.st, "alice", "a", "demographics", "The user is 42.", day, 0.9)
	putInsight(t, e.st, "alice", "b", "financial_goals", "The user wants to retire at 60.", day.Add(time.Hour), 0.8)
	putInsight(t, e.st, "bob", "x", "concern", "Bob fears crypto.", day, 0.9)

	e.srv.QueueChat(fakeopenai.Text("Profile: The user, 42, wants to retire at 60."))
	res, err := e.r.ReflectLongTerm(ctx, "alice")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a", "b"}, res.Folded)
	require.NotNil(t, res.Profile)

	req := e.srv.ChatRequests()[0]
	blocks := prompts.Blocks(req.LastUserText())
	assert.Empty(t, blocks[prompts.BlockProfile])
	assert.Contains(t, blocks[prompts.BlockNewInsights], "[i1 | 2026-03-02 | demographics | 0.90] The user is 42.")
	assert.Contains(t, blocks[prompts.BlockNewInsights], "[i2 | 2026-03-02 | financial_goals | 0.80] The user wants to retire at 60.")
	assert.NotContains(t, req.Text(), "crypto")

	prof, err := e.st.GetInsight(ctx, "alice", store.LongTermID("alice"))
	require.NoError(t, err)
	assert.Equal(t, "The user, 42, wants to retire at 60.", prof.InsightText, "the label is stripped")
	assert.Equal(t, store.InsightLongTerm, prof.InsightType)
	assert.Nil(t, prof.Confidence)
	assert.ElementsMatch(t, []string{"a", "b"}, prof.SourceInsightIDs)
	assert.Len(t, prof.InsightVector, dims)
	for _, id := range []string{"a", "b"} {
		in, err := e.st.GetInsight(ctx, "alice", id)
		require.NoError(t, err)
		assert.True(t, in.Processed, id)
	}
	x, err := e.st.GetInsight(ctx, "bob", "x")
	require.NoError(t, err)
	assert.False(t, x.Processed, "bob's insight untouched")

	// Nothing new: no call, the profile stays.
	res, err = e.r.ReflectLongTerm(ctx, "alice")
	require.NoError(t, err)
	assert.Empty(t, res.Folded)
	assert.Equal(t, prof.InsightText, res.Profile.InsightText)
	assert.Len(t, e.srv.ChatRequests(), 1)

	// A new insight is folded into the current profile.
	putInsight(t, e.st, "alice", "c", "preference", "The user prefers email.", day.Add(48*time.Hour), 0.9)
	e.srv.QueueChat(fakeopenai.Text("The user, 42, wants to retire at 60 and prefers email."))
	res, err = e.r.ReflectLongTerm(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, []string{"c"}, res.Folded)
	blocks = prompts.Blocks(e.srv.ChatRequests()[1].LastUserText())
	assert.Equal(t, "The user, 42, wants to retire at 60.", blocks[prompts.BlockProfile])
	assert.ElementsMatch(t, []string{"a", "b", "c"}, res.Profile.SourceInsightIDs)
	assert.Equal(t, prof.CreatedAt, res.Profile.CreatedAt)
}

func TestReconcileMergesDuplicatesAndResolvesContradictions(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, reflection.Config{})
	h := func(n int) time.Time { return day.Add(time.Duration(n) * time.Hour) }
	putInsight(t, e.st, "alice", "email1", "preference", "The user prefers email.", h(1), 0.8)     // i1
	putInsight(t, e.st, "alice", "boston", "demographics", "The user lives in Boston.", h(2), 0.9) // i2
	putInsight(t, e.st, "alice", "email2", "preference", "The user likes to be contacted by email.", h(3), 0.9)
	putInsight(t, e.st, "alice", "boston2", "demographics", "the user lives in  BOSTON.", h(4), 0.7) // exact duplicate of boston
	putInsight(t, e.st, "alice", "denver", "demographics", "The user moved to Denver.", h(5), 0.9)
	putInsight(t, e.st, "alice", "fees", "concern", "The user worries about fees.", h(6), 0.9)
	putInsight(t, e.st, "bob", "bob1", "preference", "Bob prefers email.", h(1), 0.9)

	// After the exact duplicate goes, the pool shown is email1, boston,
	// email2, denver, fees: i1..i5.
	e.srv.QueueChat(fakeopenai.Text(`{"duplicates": [{"ids": ["i1", "i3", "i99"], "merged_text": "The user prefers to be contacted by email."}],
		"contradictions": [{"ids": ["i2", "i4"]}, {"ids": ["i3", "i5"]}]}`))
	res, err := e.r.Reconcile(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, 6, res.Pool)
	assert.Equal(t, 1, res.Merged)
	assert.Equal(t, 3, res.Duplicates) // boston2, email1, email2
	assert.Equal(t, 1, res.Contradicted)
	assert.Equal(t, 3, res.Kept) // merged, denver, fees

	lines := prompts.Blocks(e.srv.ChatRequests()[0].LastUserText())[prompts.BlockInsights]
	assert.Equal(t, 5, strings.Count(lines, "\n")+1, lines)
	assert.NotContains(t, lines, "BOSTON")
	assert.Contains(t, lines, "[i4 | 2026-03-02 | demographics | 0.90] The user moved to Denver.")

	active, err := e.st.ListInsights(ctx, "alice", store.InsightFilter{})
	require.NoError(t, err)
	var texts []string
	for _, in := range active {
		texts = append(texts, in.InsightText)
	}
	assert.ElementsMatch(t, []string{"The user prefers to be contacted by email.", "The user moved to Denver.", "The user worries about fees."}, texts)

	merged, err := e.st.GetInsight(ctx, "alice", res.MergedIDs[0])
	require.NoError(t, err)
	assert.Equal(t, []string{"email1", "email2"}, merged.SourceInsightIDs)
	assert.ElementsMatch(t, []string{"s-email1", "s-email2"}, merged.SessionIDs)
	assert.InDelta(t, 0.9, *merged.Confidence, 1e-9)
	assert.Equal(t, "preference", merged.Category)

	audit, err := e.st.ListInsights(ctx, "alice", store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	got := map[string]string{}
	for _, in := range audit {
		if in.Superseded() {
			got[in.ID] = string(in.SupersedeReason) + "→" + in.SupersededBy
		}
	}
	assert.Equal(t, map[string]string{
		"email1":  "duplicate→" + merged.ID,
		"email2":  "duplicate→" + merged.ID,
		"boston2": "duplicate→boston",
		"boston":  "contradict→denver",
	}, got)
	b, err := e.st.GetInsight(ctx, "bob", "bob1")
	require.NoError(t, err)
	assert.False(t, b.Superseded(), "bob's insight untouched")

	// Again: nothing to do but what the model says; the same answer
	// changes nothing more (its labels now name other insights, and the
	// merged id is stable).
	e.srv.QueueChat(fakeopenai.Text(`{"duplicates": [], "contradictions": []}`))
	res, err = e.r.Reconcile(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, 3, res.Pool)
	assert.Equal(t, 3, res.Kept)
}

func TestReconcileNeedsTwoInsights(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, reflection.Config{})
	putInsight(t, e.st, "alice", "a", "preference", "The user prefers email.", day, 0.8)
	res, err := e.r.Reconcile(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, 1, res.Kept)
	assert.Empty(t, e.srv.ChatRequests())
}

func TestNewValidatesConfig(t *testing.T) {
	e := newEnv(t, reflection.Config{})
	c := e.r.Config()
	assert.Equal(t, reflection.DefaultCategories, c.Categories)
	assert.InDelta(t, 0.7, c.MinConfidence, 1e-9)
	for name, bad := range map[string]reflection.Config{
		"no chat":        {Embedder: c.Embedder},
		"no embedder":    {Chat: c.Chat},
		"bad category":   {Chat: c.Chat, Embedder: c.Embedder, Categories: []prompts.Category{{Name: "Bad Name"}}},
		"repeated":       {Chat: c.Chat, Embedder: c.Embedder, Categories: []prompts.Category{{Name: "a"}, {Name: "a"}}},
		"empty":          {Chat: c.Chat, Embedder: c.Embedder, Categories: []prompts.Category{}},
		"confidence > 1": {Chat: c.Chat, Embedder: c.Embedder, MinConfidence: 1.5},
	} {
		_, err := reflection.New(e.st, bad)
		assert.Error(t, err, name)
	}
	_, err := reflection.New(nil, c)
	assert.Error(t, err)
}

func TestCallsForOneUserRunOneAtATime(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, reflection.Config{})
	for _, u := range []string{"alice", "bob"} {
		putInsight(t, e.st, u, u+"-a", "preference", "The user "+u+" prefers email.", day, 0.9)
		putInsight(t, e.st, u, u+"-b", "concern", "The user "+u+" worries about fees.", day.Add(time.Hour), 0.9)
	}
	var mu sync.Mutex
	inFlight := map[string]int{}
	most := map[string]int{}
	e.srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		user := "bob"
		if strings.Contains(r.LastUserText(), "alice") {
			user = "alice"
		}
		mu.Lock()
		inFlight[user]++
		most[user] = max(most[user], inFlight[user])
		mu.Unlock()
		time.Sleep(30 * time.Millisecond)
		mu.Lock()
		inFlight[user]--
		mu.Unlock()
		if strings.HasPrefix(r.SystemText(), prompts.Marker(prompts.NameReconcile)) {
			return fakeopenai.Text(`{"duplicates": [], "contradictions": []}`)
		}
		return fakeopenai.Text("The user has a profile.")
	})
	var wg sync.WaitGroup
	for range 3 {
		for _, u := range []string{"alice", "bob"} {
			wg.Go(func() {
				_, err := e.r.Reconcile(ctx, u)
				assert.NoError(t, err)
			})
			wg.Go(func() {
				_, err := e.r.ReflectLongTerm(ctx, u)
				assert.NoError(t, err)
			})
		}
	}
	wg.Wait()
	assert.Equal(t, map[string]int{"alice": 1, "bob": 1}, most, "never two model calls at once for one user")
	for _, u := range []string{"alice", "bob"} {
		p, err := e.st.GetInsight(ctx, u, store.LongTermID(u))
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{u + "-a", u + "-b"}, p.SourceInsightIDs)
	}
}

func TestExtractSessionReadsWhatIsNewAndTheEndReadsTheRest(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, reflection.Config{})
	require.NoError(t, e.st.PutSession(ctx, "alice", &store.Session{ID: "long", StartTime: day}))
	chunk := func(first, last int, content string) {
		require.NoError(t, e.st.PutInteraction(ctx, "alice", &store.Interaction{ID: store.InteractionID("long", first, last), SessionID: "long",
			Timestamp: day, FirstTurn: first, LastTurn: last, Content: content}))
	}
	chunk(1, 10, "user: I want to retire at 60.\nassistant: Noted.")
	chunk(11, 20, "user: I prefer index funds.\nassistant: Good.")
	e.srv.QueueChat(reflectionAnswer(insight("financial_goals", "The user wants to retire at 60.", 0.9, "high")))

	res, err := e.r.ExtractSession(ctx, "alice", "long")
	require.NoError(t, err)
	require.Len(t, res.Insights, 1)
	seen := prompts.Blocks(e.srv.ChatRequests()[0].LastUserText())[prompts.BlockSessions]
	assert.Contains(t, seen, "retire at 60")
	assert.Contains(t, seen, "index funds")
	doc, err := e.st.GetSession(ctx, "alice", "long")
	require.NoError(t, err)
	assert.Equal(t, store.SessionActive, doc.Status)
	assert.Equal(t, store.ReflectionPending, doc.ReflectionStatus, "the status waits for the end")
	assert.Equal(t, 20, doc.ReflectedThrough)
	assert.Equal(t, []string{res.Insights[0].ID}, doc.ExtractedInsights)

	// Nothing new: no model call.
	res, err = e.r.ExtractSession(ctx, "alice", "long")
	require.NoError(t, err)
	assert.True(t, res.Skipped)
	assert.Len(t, e.srv.ChatRequests(), 1)

	// The end reads only turns 21-24; no insight there, but the session
	// gave one earlier, so it is processed.
	chunk(21, 24, "user: Thanks, bye.\nassistant: Bye.")
	doc.Status = store.SessionCompleted
	require.NoError(t, e.st.PutSession(ctx, "alice", doc))
	e.srv.QueueChat(reflectionAnswer())
	res, err = e.r.ReflectSession(ctx, "alice", "long")
	require.NoError(t, err)
	assert.Equal(t, store.FlagNoInsight, res.Flag)
	seen = prompts.Blocks(e.srv.ChatRequests()[1].LastUserText())[prompts.BlockSessions]
	assert.Contains(t, seen, "Thanks, bye.")
	assert.NotContains(t, seen, "retire at 60", "read already")
	doc, err = e.st.GetSession(ctx, "alice", "long")
	require.NoError(t, err)
	assert.Equal(t, store.ReflectionProcessed, doc.ReflectionStatus)
	assert.Equal(t, 24, doc.ReflectedThrough)
	assert.Len(t, doc.ExtractedInsights, 1)
}

// An insight the profile had folded in and that a contradiction
// supersedes takes its text out of the profile: the profile is
// synthesised anew from the insights still active.
func TestReconcileRebuildsAProfileThatCarriedAContradictedInsight(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, reflection.Config{})
	putInsight(t, e.st, "alice", "boston", "demographics", "The user lives in Boston.", day, 0.9)
	e.srv.QueueChat(fakeopenai.Text("The user lives in Boston."))
	_, err := e.r.ReflectLongTerm(ctx, "alice")
	require.NoError(t, err)
	putInsight(t, e.st, "alice", "denver", "demographics", "The user moved to Denver.", day.Add(time.Hour), 0.9)

	e.srv.QueueChat(fakeopenai.Text(`{"duplicates": [], "contradictions": [{"ids": ["i1", "i2"]}]}`))
	e.srv.QueueChat(fakeopenai.Text("The user lives in Denver."))
	res, err := e.r.Reconcile(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, 1, res.Contradicted)
	assert.True(t, res.ProfileRebuilt)

	prof, err := e.st.GetInsight(ctx, "alice", store.LongTermID("alice"))
	require.NoError(t, err)
	assert.Equal(t, "The user lives in Denver.", prof.InsightText)
	assert.Equal(t, []string{"denver"}, prof.SourceInsightIDs)
	reqs := e.srv.ChatRequests()
	require.Equal(t, 3, len(reqs), "reconcile, then the rebuild")
	assert.NotContains(t, reqs[2].Text(), "Boston", "the rebuild does not see the superseded text")
}
