package provider_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/erasure"
	"github.com/agentmemory/agentmemory/internal/fakeopenai"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// surfaces gathers everything through which memory reaches a model or a
// user, for one user and query: direct retrieval, the mini-agent's answer,
// the store's searches of every kind, the listed insights, the next
// session's initialization block and the export.
func surfaces(t *testing.T, ctx context.Context, mem *provider.MemoryProvider, st store.Store, a *agent.Agent, rec *lastRequest, user, query string) map[string]string {
	t.Helper()
	out := map[string]string{}
	out["direct retrieval"] = mem.Retriever().Retrieve(ctx, user, query, true).Text
	ans := mem.Retriever().Retrieve(ctx, user, query, false)
	require.NoError(t, ans.Err)
	out["mini-agent answer"] = ans.Text
	req := store.SearchRequest{Text: query, TopK: 50}
	var b strings.Builder
	ints, err := st.SearchInteractions(ctx, user, req)
	require.NoError(t, err)
	for _, h := range ints {
		fmt.Fprintln(&b, h.Doc.Content, h.Doc.Summary)
	}
	ins, err := st.SearchInsights(ctx, user, req)
	require.NoError(t, err)
	for _, h := range ins {
		fmt.Fprintln(&b, h.Doc.InsightText)
	}
	ses, err := st.SearchSessions(ctx, user, req)
	require.NoError(t, err)
	for _, h := range ses {
		fmt.Fprintln(&b, h.Doc.Summary)
	}
	out["store search"] = b.String()
	b.Reset()
	all, err := st.ListInsights(ctx, user, store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	for _, in := range all {
		fmt.Fprintln(&b, in.InsightText)
	}
	out["insights, audit read included"] = b.String()
	if a != nil {
		sess, err := a.NewUserSession(user)
		require.NoError(t, err)
		rec.req = nil
		_, err = a.Run(ctx, sess, agent.UserText("Hello again."))
		require.NoError(t, err)
		b.Reset()
		for _, m := range rec.req.Messages {
			if strings.HasPrefix(m.Text, "<memory>") {
				b.WriteString(m.Text)
			}
		}
		out["next session's initialization block"] = b.String()
	}
	var buf bytes.Buffer
	_, err = mem.ExportUser(ctx, user, &buf)
	require.NoError(t, err)
	out["export"] = buf.String()
	return out
}

// Forgetting an insight with its conversation leaves the fact nowhere: not
// in any search, the mini-agent's answer, the profile, the next session's
// block or the export. What else the user said stays, and the deletion
// log verifies.
func TestForgetInsightWithItsConversation(t *testing.T) {
	ctx := context.Background()
	s := openOffline(t, sqlitetest.NewFile(t), func(c *provider.Config) { c.ProfileEvery = 1; c.Mini = c.Chat })
	rec := &lastRequest{ChatClient: s.chat}
	a := agent.New(rec, agent.Config{ContextProviders: []agent.ContextProvider{s.mem}})
	for _, said := range []string{
		"I'm nervous about market volatility; I lost money in 2022.",
		"I want to retire at 60 and I'm not sure I'm saving enough.",
	} {
		talkAndEnd(t, s, "u1", said)
	}
	before := surfaces(t, ctx, s.mem, s.st, a, rec, "u1", "market volatility")
	for where, text := range before {
		require.Contains(t, strings.ToLower(text), "volatility", "before: %s holds the fact", where)
	}
	prof, err := s.st.GetInsight(ctx, "u1", store.LongTermID("u1"))
	require.NoError(t, err)
	require.Contains(t, prof.InsightText, "volatility")

	// A session is open (its block loaded) while the user asks to forget.
	open, err := s.a.NewUserSession("u1")
	require.NoError(t, err)
	require.NoError(t, s.mem.StartSession(ctx, open))

	hits, err := s.st.SearchInsights(ctx, "u1", store.SearchRequest{Text: "market volatility", InsightType: store.InsightSession})
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	target := hits[0].Doc
	require.Contains(t, target.InsightText, "volatility")
	rc, err := s.mem.ForgetInsight(ctx, "u1", target.ID, provider.ForgetOptions{Sources: true})
	require.NoError(t, err)
	assert.Equal(t, []string{target.ID}, rc.IDs(store.KindInsight, erasure.Deleted))
	assert.Equal(t, target.SessionIDs, rc.IDs(store.KindSessionSummary, erasure.Deleted), "its session, with it")
	assert.Equal(t, 1, rc.Count(store.KindTurn, erasure.Deleted))
	assert.Len(t, rc.IDs(store.KindInteraction, erasure.Deleted), 1)
	assert.Equal(t, []string{store.LongTermID("u1")}, rc.IDs(store.KindInsight, erasure.Rewritten))
	assert.EqualValues(t, 1, rc.LogSeq)

	after := surfaces(t, ctx, s.mem, s.st, a, rec, "u1", "market volatility")
	for where, text := range after {
		assert.NotContains(t, strings.ToLower(text), "volatility", "after: %s", where)
	}
	assert.Contains(t, after["export"], "retire at 60", "the rest stays")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(s.path + suffix)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		assert.Zero(t, bytes.Count(bytes.ToLower(b), []byte("volatility")), "no byte of it in the file%s", suffix)
	}
	prof, err = s.st.GetInsight(ctx, "u1", store.LongTermID("u1"))
	require.NoError(t, err)
	assert.Contains(t, prof.InsightText, "retire at 60", "the profile was made anew from what is left")

	// The open session's block was read again.
	rec.req = nil
	oa := agent.New(rec, agent.Config{ContextProviders: []agent.ContextProvider{s.mem}})
	_, err = oa.Run(ctx, open, agent.UserText("How should I invest?"))
	require.NoError(t, err)
	var block string
	for _, m := range rec.req.Messages {
		if strings.HasPrefix(m.Text, "<memory>") {
			block = m.Text
		}
	}
	assert.Contains(t, block, "retire at 60")
	assert.NotContains(t, block, "volatility")

	head, err := s.mem.DeletionLog().Verify(ctx)
	require.NoError(t, err)
	assert.Equal(t, rc.LogSeq, head.Seq)
	assert.Equal(t, rc.LogHash, head.Hash)
}

// Without Sources the conversation stays and is still found as
// conversation, but no insight, profile or insight search holds the fact.
func TestForgetInsightKeepsItsConversation(t *testing.T) {
	ctx := context.Background()
	s := openOffline(t, sqlitetest.NewFile(t), func(c *provider.Config) { c.ProfileEvery = 1 })
	sess, err := s.a.NewUserSession("u1")
	require.NoError(t, err)
	require.NoError(t, s.mem.Record(ctx, sess, agent.UserText("I'm nervous about market volatility; I lost money in 2022.")))
	_, err = s.mem.EndSession(ctx, sess)
	require.NoError(t, err)
	require.NoError(t, s.mem.Flush(ctx))
	ins, err := s.st.ListInsights(ctx, "u1", store.InsightFilter{Type: store.InsightSession})
	require.NoError(t, err)
	require.Len(t, ins, 1)
	rc, err := s.mem.ForgetInsight(ctx, "u1", ins[0].ID, provider.ForgetOptions{})
	require.NoError(t, err)
	assert.Empty(t, rc.IDs(store.KindSessionSummary, erasure.Deleted))
	all, err := s.st.ListInsights(ctx, "u1", store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	assert.Empty(t, all, "deleted for good, and the profile (made of it alone) with it")
	ints, err := s.st.SearchInteractions(ctx, "u1", store.SearchRequest{Text: "market volatility"})
	require.NoError(t, err)
	assert.NotEmpty(t, ints, "the conversation stays")
	_, err = s.mem.ForgetInsight(ctx, "u1", ins[0].ID, provider.ForgetOptions{})
	assert.ErrorIs(t, err, store.ErrNotFound, "forgotten already")
}

// Merges follow a forgotten insight: what was merged from it goes, what had
// been merged into that as a duplicate comes back, a contradiction it won
// stays settled, and an earlier version's soft-forgotten insight (which
// kept its text) is swept away.
func TestForgetFollowsMergedInsights(t *testing.T) {
	ctx := context.Background()
	s := openOffline(t, sqlitetest.NewFile(t), nil)
	dup := store.Supersession{By: "m", Reason: store.ReasonDuplicate, At: time.Now()}
	for _, in := range []*store.Insight{
		{ID: "a", InsightType: store.InsightSession, InsightText: "Nervous about volatility."},
		{ID: "b", InsightType: store.InsightSession, InsightText: "Worried about market swings."},
		{ID: "m", InsightType: store.InsightSession, InsightText: "Worried about swings and volatility.", SourceInsightIDs: []string{"a", "b"}},
		{ID: "c", InsightType: store.InsightSession, InsightText: "Fears a crash.", SourceInsightIDs: []string{"m"}},
		{ID: "d", InsightType: store.InsightSession, InsightText: "Wants to retire at 60."},
		{ID: "old", InsightType: store.InsightSession, InsightText: "Has a secret account."},
	} {
		require.NoError(t, s.st.PutInsight(ctx, "u1", in))
	}
	require.NoError(t, s.st.SupersedeInsight(ctx, "u1", "a", dup))
	require.NoError(t, s.st.SupersedeInsight(ctx, "u1", "b", dup))
	require.NoError(t, s.st.SupersedeInsight(ctx, "u1", "old", store.Supersession{Reason: store.ReasonForgotten, At: time.Now()}))

	rc, err := s.mem.ForgetInsight(ctx, "u1", "a", provider.ForgetOptions{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a", "m", "c", "old"}, rc.IDs(store.KindInsight, erasure.Deleted))
	assert.Equal(t, []string{"b"}, rc.IDs(store.KindInsight, erasure.Rewritten))
	left, err := s.st.ListInsights(ctx, "u1", store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	var ids []string
	for _, in := range left {
		ids = append(ids, in.ID)
		assert.False(t, in.Superseded(), "%s is active", in.ID)
	}
	assert.ElementsMatch(t, []string{"b", "d"}, ids, "b, merged into m as a duplicate, comes back")
}

// Forgetting a session, or an insight with its conversation, over a model
// (the scripted OpenAI-compatible server, which writes every summary and
// insight from what it is shown) removes its turns, interactions, summary and the insights drawn from it
// alone, rebuilds the profile without it, and leaves the other session and
// the other user as they were; the mini-agent, which searches memory
// through its tools, no longer finds it.
func TestForgetSessionOverTheModel(t *testing.T) {
	for _, how := range []string{"session", "insight with its conversation"} {
		t.Run(how, func(t *testing.T) { forgetOverTheModel(t, how) })
	}
}

func forgetOverTheModel(t *testing.T, how string) {
	ctx := context.Background()
	f := newFixture(t, func(c *provider.Config) { c.ProfileEvery = 1; c.ReconcileEvery = -1 })
	words := regexp.MustCompile(`codeword-[a-z]+`)
	seen := func(r fakeopenai.Request) string {
		var b strings.Builder
		for _, m := range r.Chat.Messages[1:] {
			b.WriteString(m.Content)
		}
		found := words.FindAllString(b.String(), -1)
		slices.Sort(found)
		return strings.Join(slices.Compact(found), " and ")
	}
	f.srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		sys := r.SystemText()
		switch {
		case strings.HasPrefix(sys, "agentmemory:prompt=interaction_metadata"):
			return fakeopenai.JSON(map[string]any{"summary": "The client mentioned " + seen(r) + ".", "mentioned_topics": []string{"codes"}, "entities": []string{}})
		case strings.HasPrefix(sys, "agentmemory:prompt=cumulative_summary"):
			return fakeopenai.Text("The client mentioned " + seen(r) + ".")
		case strings.HasPrefix(sys, "agentmemory:prompt=session_summary"):
			return fakeopenai.JSON(map[string]any{"summary": "The client mentioned " + seen(r) + ".", "key_topics": []string{"codes"}})
		case strings.HasPrefix(sys, "agentmemory:prompt=session_reflection"):
			return fakeopenai.JSON(map[string]any{"reflection_flag": "insight", "insights": []map[string]any{
				{"category": "preference", "insight_text": "The client's code word is " + seen(r) + ".", "confidence": 0.9, "importance": "high"},
			}})
		case strings.HasPrefix(sys, "agentmemory:prompt=profile_synthesis"):
			return fakeopenai.Text("The client uses " + seen(r) + ".")
		case strings.HasPrefix(sys, "agentmemory:prompt=fact_retrieval"):
			last := r.Chat.Messages[len(r.Chat.Messages)-1]
			if last.Role != "tool" {
				return fakeopenai.ToolCalls(fakeopenai.Call("s1", "search_interactions", `{"query":"code word"}`),
					fakeopenai.Call("s2", "search_insights", `{"query":"code word"}`),
					fakeopenai.Call("s3", "search_session_summaries", `{"query":"code word"}`))
			}
			if w := seen(r); w != "" {
				return fakeopenai.Text("The client's code words: " + w + ".")
			}
			return fakeopenai.Text("No relevant information found in memory.")
		}
		return fakeopenai.Text("Noted.")
	})
	first := f.agent.NewUserSession
	say := func(user, text string) *agent.Session {
		sess, err := first(user)
		require.NoError(t, err)
		_, err = f.agent.Run(ctx, sess, agent.UserText(text))
		require.NoError(t, err)
		_, err = f.mem.EndSession(ctx, sess)
		require.NoError(t, err)
		require.NoError(t, f.mem.Flush(ctx))
		return sess
	}
	gone := say("u1", "My code word is codeword-zebra.")
	say("u1", "My other code word is codeword-okapi.")
	say("u2", "My code word is codeword-heron.")
	before := surfaces(t, ctx, f.mem, f.st, nil, nil, "u1", "code word")
	for where, text := range before {
		require.Contains(t, text, "codeword-zebra", "before: %s", where)
	}
	u2before := surfaces(t, ctx, f.mem, f.st, nil, nil, "u2", "code word")

	memSession := gone.ID()
	sessions, err := f.st.ListSessions(ctx, "u1", store.SessionFilter{})
	require.NoError(t, err)
	for _, d := range sessions {
		if strings.Contains(d.Summary, "zebra") {
			memSession = d.ID
		}
	}
	_, err = f.mem.ForgetSession(ctx, "u2", memSession)
	require.ErrorIs(t, err, store.ErrNotFound, "another user's session is not found")
	var rc *provider.Receipt
	if how == "session" {
		rc, err = f.mem.ForgetSession(ctx, "u1", memSession)
	} else {
		var ins []store.Hit[*store.Insight]
		ins, err = f.st.SearchInsights(ctx, "u1", store.SearchRequest{Text: "codeword-zebra", InsightType: store.InsightSession})
		require.NoError(t, err)
		require.NotEmpty(t, ins)
		require.Contains(t, ins[0].Doc.InsightText, "codeword-zebra")
		rc, err = f.mem.ForgetInsight(ctx, "u1", ins[0].Doc.ID, provider.ForgetOptions{Sources: true})
	}
	require.NoError(t, err)
	assert.Equal(t, []string{memSession}, rc.IDs(store.KindSessionSummary, erasure.Deleted))
	assert.Equal(t, 1, rc.Count(store.KindTurn, erasure.Deleted))
	assert.Len(t, rc.IDs(store.KindInteraction, erasure.Deleted), 1)
	assert.Len(t, rc.IDs(store.KindInsight, erasure.Deleted), 1)
	assert.Contains(t, rc.IDs(store.KindInsight, erasure.Rewritten), store.LongTermID("u1"))

	after := surfaces(t, ctx, f.mem, f.st, nil, nil, "u1", "code word")
	for where, text := range after {
		assert.NotContains(t, text, "codeword-zebra", "after: %s", where)
	}
	assert.Contains(t, after["mini-agent answer"], "codeword-okapi", "the other session stays")
	assert.Contains(t, after["export"], "codeword-okapi")
	assert.Equal(t, u2before, surfaces(t, ctx, f.mem, f.st, nil, nil, "u2", "code word"), "the other user is untouched")

	_, err = f.mem.ForgetSession(ctx, "u1", memSession)
	assert.ErrorIs(t, err, store.ErrNotFound, "nothing left under it")
	_, err = f.mem.DeletionLog().Verify(ctx)
	require.NoError(t, err)
}

// lastRequest keeps the last request the model was sent.
type lastRequest struct {
	agent.ChatClient
	req *agent.ChatRequest
}

func (l *lastRequest) Complete(ctx context.Context, req *agent.ChatRequest) (*agent.ChatResponse, error) {
	if l.req == nil || !strings.HasPrefix(req.Messages[0].Text, "agentmemory:prompt=") {
		l.req = req
	}
	return l.ChatClient.Complete(ctx, req)
}

// After ForgetUser the deletion log still proves every deletion, but names
// the user only by the keyed hash: no byte of the user id or of any id of
// theirs is left in the file, and another user's records keep their names.
func TestForgetUserLeavesOnlyAKeyedHashInTheLog(t *testing.T) {
	ctx := context.Background()
	s := openOffline(t, sqlitetest.NewFile(t), func(c *provider.Config) { c.UserID = "" })
	for _, user := range []string{"dana-7f3e91", "eve-0c44d2"} {
		talkAndEnd(t, s, user, "I'm nervous about market volatility.")
		ins, err := s.st.ListInsights(ctx, user, store.InsightFilter{Type: store.InsightSession})
		require.NoError(t, err)
		require.NotEmpty(t, ins)
		_, err = s.mem.ForgetInsight(ctx, user, ins[0].ID, provider.ForgetOptions{})
		require.NoError(t, err)
	}
	sessions, err := s.st.ListSessions(ctx, "dana-7f3e91", store.SessionFilter{})
	require.NoError(t, err)
	require.Len(t, sessions, 1)
	danaSession := sessions[0].ID

	rc, err := s.mem.ForgetUser(ctx, "dana-7f3e91")
	require.NoError(t, err)
	assert.Equal(t, 1, rc.Count(store.KindSessionSummary, erasure.Deleted))
	assert.Equal(t, 1, rc.Count(store.KindTurn, erasure.Deleted))
	assert.EqualValues(t, 3, rc.LogSeq)

	head, err := s.mem.DeletionLog().Verify(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 3, head.Seq)
	recs, err := s.st.ListDeletions(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	dana, err := s.mem.DeletionLog().Subject(ctx, "dana-7f3e91")
	require.NoError(t, err)
	for _, rec := range recs {
		if rec.Subject != dana {
			assert.Equal(t, "eve-0c44d2", rec.UserID, "another user's record keeps its names")
			continue
		}
		assert.Empty(t, rec.UserID)
		for _, it := range rec.Items {
			assert.Empty(t, it.ID)
			assert.NotEmpty(t, it.IDHash)
		}
	}
	assert.Equal(t, provider.ReasonForgetUser, recs[2].Reason)
	for _, marker := range []string{"dana-7f3e91", danaSession} {
		assert.Zero(t, sqlitetest.FileHits(t, s.path, marker), "%s in the files", marker)
	}
}

// When the profile cannot be made anew (the model is down), the forget
// call says so, and still leaves no trace: the insight is gone, so is the
// old profile, and the deletion is logged.
func TestForgetWithTheModelDownLeavesNoProfileBehind(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, func(c *provider.Config) { c.ProfileEvery = 1 })
	f.session(t, "u1", 2)
	f.session(t, "u1", 2)
	ins, err := f.st.ListInsights(ctx, "u1", store.InsightFilter{Type: store.InsightSession})
	require.NoError(t, err)
	require.Len(t, ins, 2)
	_, err = f.st.GetInsight(ctx, "u1", store.LongTermID("u1"))
	require.NoError(t, err)

	f.srv.HandleChat(func(fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Error(500, "the model is down") })
	rc, err := f.mem.ForgetInsight(ctx, "u1", ins[0].ID, provider.ForgetOptions{})
	require.Error(t, err, "the rebuild failed")
	require.NotNil(t, rc, "with what was deleted")
	assert.Equal(t, []string{ins[0].ID}, rc.IDs(store.KindInsight, erasure.Deleted))
	assert.EqualValues(t, 1, rc.LogSeq, "and logged")
	_, err = f.st.GetInsight(ctx, "u1", store.LongTermID("u1"))
	assert.ErrorIs(t, err, store.ErrNotFound, "no profile rather than the old one")
	all, err := f.st.ListInsights(ctx, "u1", store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	require.Len(t, all, 1, "the other insight stays, to be folded into a profile when the model is back")
	assert.Equal(t, ins[1].ID, all[0].ID)
	assert.False(t, all[0].Processed)
}

// ForgetUser waits for a reflection of the user running in another
// process (another provider on the same store, with a lease of its own)
// instead of deleting under it: what the reflection writes is deleted too,
// and nothing of the user is left once both are done.
func TestForgetUserWaitsForAReflectionInAnotherProcess(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, func(c *provider.Config) { c.ProfileEvery = 1; c.ReconcileEvery = -1 })
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.srv.HandleChat(func(r fakeopenai.Request) fakeopenai.Reply {
		sys := r.SystemText()
		switch {
		case strings.HasPrefix(sys, "agentmemory:prompt=session_reflection"):
			once.Do(func() { close(started) })
			<-release
			return fakeopenai.JSON(map[string]any{"reflection_flag": "insight", "insights": []map[string]any{
				{"category": "preference", "insight_text": "The client's code word is codeword-lynx.", "confidence": 0.9, "importance": "high"},
			}})
		case strings.HasPrefix(sys, "agentmemory:prompt=profile_synthesis"):
			return fakeopenai.Text("The client's code word is codeword-lynx.")
		}
		return f.model.answer(r)
	})
	other, err := provider.New(f.st, f.cfg)
	require.NoError(t, err)
	t.Cleanup(func() { other.Close(context.Background()) })

	sess, err := f.agent.NewUserSession("u1")
	require.NoError(t, err)
	_, err = f.agent.Run(ctx, sess, agent.UserText("My code word is codeword-lynx."))
	require.NoError(t, err)
	_, err = f.mem.EndSession(ctx, sess)
	require.NoError(t, err)
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("no reflection started")
	}

	done := make(chan error, 1)
	go func() {
		_, err := other.ForgetUser(ctx, "u1")
		done <- err
	}()
	// Give a ForgetUser that does not wait the time to finish before the
	// reflection writes; one that waits returns only after it.
	var forgetErr error
	returned := false
	select {
	case forgetErr = <-done:
		returned = true
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	if !returned {
		forgetErr = <-done
	}
	require.NoError(t, forgetErr)
	require.NoError(t, f.mem.Flush(ctx))

	ins, err := f.st.ListInsights(ctx, "u1", store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	assert.Empty(t, ins, "insights written by the reflection after the user was forgotten")
	sessions, err := f.st.ListSessions(ctx, "u1", store.SessionFilter{})
	require.NoError(t, err)
	assert.Empty(t, sessions)
	ints, err := f.st.ListInteractions(ctx, "u1", store.InteractionFilter{})
	require.NoError(t, err)
	assert.Empty(t, ints)
}
