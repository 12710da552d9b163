package provider_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// Forgetting an insight follows it into the long-term profile: the profile
// is synthesised again without it, and an open session's next context, a
// search of insights and the export's active documents no longer hold the
// fact.
func TestForgottenInsightLeavesTheProfile(t *testing.T) {
	ctx := context.Background()
	s := openOffline(t, filepath.Join(t.TempDir(), "m.db"), func(c *provider.Config) { c.ProfileEvery = 1 })
	for _, said := range []string{
		"I'm nervous about market volatility; I lost money in 2022.",
		"I want to retire at 60 and I'm not sure I'm saving enough.",
	} {
		sess, err := s.a.NewUserSession("u1")
		require.NoError(t, err)
		require.NoError(t, s.mem.Record(ctx, sess, agent.UserText(said)))
		_, err = s.mem.EndSession(ctx, sess)
		require.NoError(t, err)
		require.NoError(t, s.mem.Flush(ctx))
	}
	prof, err := s.st.GetInsight(ctx, "u1", store.LongTermID("u1"))
	require.NoError(t, err)
	require.Contains(t, prof.InsightText, "volatility")
	require.Contains(t, prof.InsightText, "retire at 60")

	// A session is open (its initialization block loaded) while the user
	// asks to forget.
	open, err := s.a.NewUserSession("u1")
	require.NoError(t, err)
	require.NoError(t, s.mem.StartSession(ctx, open))

	ins, err := s.st.SearchInsights(ctx, "u1", store.SearchRequest{Text: "market volatility", InsightType: store.InsightSession})
	require.NoError(t, err)
	require.NotEmpty(t, ins)
	target := ins[0].Doc
	require.Contains(t, target.InsightText, "volatility")
	forgot, err := s.mem.ForgetInsight(ctx, "u1", target.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{target.ID}, forgot)

	prof, err = s.st.GetInsight(ctx, "u1", store.LongTermID("u1"))
	require.NoError(t, err)
	assert.NotContains(t, prof.InsightText, "volatility", "the profile was synthesised again without it")
	assert.Contains(t, prof.InsightText, "retire at 60", "and keeps the rest")
	assert.NotContains(t, prof.SourceInsightIDs, target.ID)

	hits, err := s.st.SearchInsights(ctx, "u1", store.SearchRequest{Text: "market volatility"})
	require.NoError(t, err)
	for _, h := range hits {
		assert.NotContains(t, h.Doc.InsightText, "volatility", "search of insights and profile")
	}
	rec := &lastRequest{ChatClient: s.chat}
	a := agent.New(rec, agent.Config{ContextProviders: []agent.ContextProvider{s.mem}})
	_, err = a.Run(ctx, open, agent.UserText("How should I invest?"))
	require.NoError(t, err)
	var block string
	for _, m := range rec.req.Messages {
		if strings.HasPrefix(m.Text, "<memory>") {
			block = m.Text
		}
	}
	profile, _, _ := strings.Cut(block, "### Recent Session Summaries")
	require.Contains(t, profile, "### Key Insights")
	assert.Contains(t, profile, "retire at 60", "the open session's block was read again")
	assert.NotContains(t, profile, "volatility", "its profile no longer holds the fact (the session summaries, the conversation itself, stay)")
	var buf bytes.Buffer
	_, err = s.mem.ExportUser(ctx, "u1", &buf)
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if strings.Contains(line, "volatility") {
			assert.True(t, strings.Contains(line, `"supersede_reason":"forgotten"`) || strings.Contains(line, `"kind":"turns"`) ||
				strings.Contains(line, `"kind":"interactions"`) || strings.Contains(line, `"kind":"session_summaries"`),
				"only the audit record and the conversation itself still hold it: %s", line)
		}
	}
}

// An insight merged from the forgotten one (naming it among its sources)
// is forgotten with it.
func TestForgetFollowsMergedInsights(t *testing.T) {
	ctx := context.Background()
	s := openOffline(t, filepath.Join(t.TempDir(), "m.db"), nil)
	for _, in := range []*store.Insight{
		{ID: "a", InsightType: store.InsightSession, InsightText: "Nervous about volatility."},
		{ID: "b", InsightType: store.InsightSession, InsightText: "Worried about market swings.", SourceInsightIDs: []string{"a"}},
		{ID: "c", InsightType: store.InsightSession, InsightText: "Fears a crash.", SourceInsightIDs: []string{"b"}},
		{ID: "d", InsightType: store.InsightSession, InsightText: "Wants to retire at 60."},
	} {
		require.NoError(t, s.st.PutInsight(ctx, "u1", in))
	}
	forgot, err := s.mem.ForgetInsight(ctx, "u1", "a")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a", "b", "c"}, forgot)
	left, err := s.st.ListInsights(ctx, "u1", store.InsightFilter{})
	require.NoError(t, err)
	require.Len(t, left, 1)
	assert.Equal(t, "d", left[0].ID)
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
