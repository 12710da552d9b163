package provider_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/erasure"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// ForgetBefore removes, with the reason ttl_expired in the deletion log,
// the session last written before the cutoff with all drawn from it, keeps
// the later one and another user's, and does nothing when nothing is old.
func TestForgetBeforeRemovesWhatIsOlderThanTheCutoff(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	s := openOffline(t, sqlitetest.NewFile(t), func(c *provider.Config) { c.Now = clk.Now; c.ProfileEvery = 1 })
	oldID := talkAndEnd(t, s, "u1", "I'm nervous about market volatility; I lost money in 2022.")
	talkAndEnd(t, s, "u2", "I'm nervous about market volatility too.")
	clk.Add(48 * time.Hour)
	newID := talkAndEnd(t, s, "u1", "I want to retire at 60 and I can save $500 a month.")

	rc, err := s.mem.ForgetBefore(ctx, "u1", clk.Now().Add(-24*time.Hour))
	require.NoError(t, err)
	assert.Equal(t, provider.ReasonExpired, rc.Reason)
	assert.Equal(t, []string{oldID}, rc.IDs(store.KindSessionSummary, erasure.Deleted))
	assert.Positive(t, rc.Count(store.KindTurn, erasure.Deleted))
	assert.NotEmpty(t, rc.IDs(store.KindInteraction, erasure.Deleted))

	_, err = s.st.GetSession(ctx, "u1", oldID)
	assert.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.st.GetSession(ctx, "u1", newID)
	assert.NoError(t, err, "the later session stays")
	hits, err := s.st.SearchInsights(ctx, "u1", store.SearchRequest{Text: "market volatility", TopK: 10})
	require.NoError(t, err)
	for _, h := range hits {
		assert.NotContains(t, h.Doc.InsightText, "volatility", "the old session's insight went with it")
	}
	other, err := s.st.SearchInsights(ctx, "u2", store.SearchRequest{Text: "market volatility", TopK: 10})
	require.NoError(t, err)
	assert.NotEmpty(t, other, "another user's memory stays")

	recs, err := s.st.ListDeletions(ctx, 0, 0)
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	last := recs[len(recs)-1]
	assert.Equal(t, provider.ReasonExpired, last.Reason)
	assert.Equal(t, "u1", last.UserID)

	// Nothing older than the cutoff: nothing changes, nothing is logged.
	rc, err = s.mem.ForgetBefore(ctx, "u1", clk.Now().Add(-24*time.Hour))
	require.NoError(t, err)
	assert.Empty(t, rc.Items)
	again, err := s.st.ListDeletions(ctx, 0, 0)
	require.NoError(t, err)
	assert.Len(t, again, len(recs))

	// Everything expires, the profile included.
	clk.Add(48 * time.Hour)
	_, err = s.mem.ForgetBefore(ctx, "u1", clk.Now().Add(-24*time.Hour))
	require.NoError(t, err)
	left, err := s.st.ListInsights(ctx, "u1", store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	assert.Empty(t, left)
	ss, err := s.st.ListSessions(ctx, "u1", store.SessionFilter{})
	require.NoError(t, err)
	assert.Empty(t, ss)

	_, err = s.mem.ForgetBefore(ctx, "bad/user", clk.Now())
	assert.Error(t, err)
	_, err = s.mem.ForgetBefore(ctx, "u1", time.Time{})
	assert.Error(t, err)
}

// Superseded insights are memory too: the expiry removes the old ones
// (the loser of a contradiction, the members of a merge) like any other,
// and a merge that expires does not bring its expired members back.
func TestForgetBeforeExpiresSupersededInsights(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	s := openOffline(t, sqlitetest.NewFile(t), func(c *provider.Config) { c.Now = clk.Now })
	put := func(id, text string) {
		now := clk.Now()
		require.NoError(t, s.st.PutInsight(ctx, "u1", &store.Insight{ID: id, InsightType: store.InsightSession, InsightText: text,
			ReflectionFlag: store.FlagInsight, CreatedAt: now, UpdatedAt: now}))
	}
	supersede := func(id, by string, why store.SupersedeReason) {
		require.NoError(t, s.st.SupersedeInsight(ctx, "u1", id, store.Supersession{By: by, Reason: why, At: clk.Now()}))
	}
	put("ins-paris", "The user lives in Paris.")
	put("ins-dup-1", "The user is saving for a house.")
	put("ins-dup-2", "The user saves for a house.")
	put("ins-merged", "The user is saving to buy a house.")
	supersede("ins-dup-1", "ins-merged", store.ReasonDuplicate)
	supersede("ins-dup-2", "ins-merged", store.ReasonDuplicate)
	clk.Add(48 * time.Hour)
	put("ins-berlin", "The user lives in Berlin.")
	supersede("ins-paris", "ins-berlin", store.ReasonContradict)

	rc, err := s.mem.ForgetBefore(ctx, "u1", clk.Now().Add(-24*time.Hour))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"ins-paris", "ins-dup-1", "ins-dup-2", "ins-merged"}, rc.IDs(store.KindInsight, erasure.Deleted))
	left, err := s.st.ListInsights(ctx, "u1", store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	var ids []string
	for _, in := range left {
		ids = append(ids, in.ID)
	}
	assert.Equal(t, []string{"ins-berlin"}, ids, "only what was written after the cutoff stays")
}
