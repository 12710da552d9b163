package storetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

func testSupersede(t *testing.T, s *suite) {
	t.Run("SoftDelete", func(t *testing.T) {
		st := s.fresh(t)
		loser := insight("loser", at(0), "Prefers bonds")
		loser.InsightVector = unit(0)
		loser.SessionIDs = []string{"s1"}
		loser.Category = "preference"
		require.NoError(t, st.PutInsight(ctx(t), alice, loser))
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("winner", at(1), "Prefers bonds over stocks")))
		when := at(5).In(zone)
		require.NoError(t, st.SupersedeInsight(ctx(t), alice, "loser", store.Supersession{By: "winner", Reason: store.ReasonDuplicate, At: when}))

		_, err := st.GetInsight(ctx(t), alice, "loser")
		assert.ErrorIs(t, err, store.ErrNotFound, "hidden from GetInsight")
		_, err = st.FindInsightByHash(ctx(t), alice, store.ContentHash("prefers bonds"))
		assert.ErrorIs(t, err, store.ErrNotFound, "hidden from FindInsightByHash")
		list, err := st.ListInsights(ctx(t), alice, store.InsightFilter{})
		require.NoError(t, err)
		assert.Equal(t, []string{"winner"}, insightIDs(list), "hidden from ListInsights")
		list, err = st.ListInsights(ctx(t), alice, store.InsightFilter{SessionID: "s1"})
		require.NoError(t, err)
		assert.Empty(t, list)
		hits, err := st.SearchInsights(ctx(t), alice, store.SearchRequest{Text: "bonds", Vector: unit(0)})
		require.NoError(t, err)
		assert.Equal(t, []string{"winner"}, HitIDs(hits), "hidden from SearchInsights")

		audit, err := st.ListInsights(ctx(t), alice, store.InsightFilter{IncludeSuperseded: true})
		require.NoError(t, err)
		require.Equal(t, []string{"winner", "loser"}, insightIDs(audit), "the audit read shows it")
		got := audit[1]
		assert.True(t, got.Superseded())
		assert.Equal(t, "winner", got.SupersededBy)
		assert.Equal(t, store.ReasonDuplicate, got.SupersedeReason)
		assert.True(t, when.Equal(got.SupersededAt), "SupersededAt %v, want %v", got.SupersededAt, when)
		assert.Equal(t, "Prefers bonds", got.InsightText, "the rest of the document is kept")
		assert.Equal(t, unit(0), got.InsightVector)
		assert.Equal(t, []string{"s1"}, got.SessionIDs)
		assert.Equal(t, "preference", got.Category)
		assert.False(t, audit[0].Superseded())

		// The winner is untouched.
		w, err := st.GetInsight(ctx(t), alice, "winner")
		require.NoError(t, err)
		assert.False(t, w.Superseded())
		assert.Empty(t, w.SupersededBy)
		assert.True(t, w.SupersededAt.IsZero())
	})
	t.Run("Idempotent", func(t *testing.T) {
		st := s.fresh(t)
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("old", at(0), "a")))
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("new", at(1), "b")))
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("newer", at(2), "c")))
		first := store.Supersession{By: "new", Reason: store.ReasonContradict, At: at(3)}
		require.NoError(t, st.SupersedeInsight(ctx(t), alice, "old", first))
		// A retry (At defaults to now) succeeds and keeps the first time.
		require.NoError(t, st.SupersedeInsight(ctx(t), alice, "old", store.Supersession{By: "new", Reason: store.ReasonContradict}))
		require.NoError(t, st.SupersedeInsight(ctx(t), alice, "old", first))

		// Superseded differently: another winner, or another reason.
		assert.ErrorIs(t, st.SupersedeInsight(ctx(t), alice, "old", store.Supersession{By: "newer", Reason: store.ReasonContradict}), store.ErrConflict)
		assert.ErrorIs(t, st.SupersedeInsight(ctx(t), alice, "old", store.Supersession{By: "new", Reason: store.ReasonDuplicate}), store.ErrConflict)
		assert.ErrorIs(t, st.SupersedeInsight(ctx(t), alice, "old", store.Supersession{Reason: store.ReasonForgotten}), store.ErrConflict)

		audit, err := st.ListInsights(ctx(t), alice, store.InsightFilter{IncludeSuperseded: true})
		require.NoError(t, err)
		require.Equal(t, []string{"newer", "new", "old"}, insightIDs(audit))
		assert.Equal(t, "new", audit[2].SupersededBy, "a conflicting supersession changes nothing")
		assert.Equal(t, store.ReasonContradict, audit[2].SupersedeReason)
		assert.True(t, at(3).Equal(audit[2].SupersededAt), "a retry keeps the first SupersededAt, got %v", audit[2].SupersededAt)
	})
	t.Run("Forgotten", func(t *testing.T) {
		st := s.fresh(t)
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("x", at(0), "lives in Paris")))
		require.NoError(t, st.SupersedeInsight(ctx(t), alice, "x", store.Supersession{Reason: store.ReasonForgotten}))
		require.NoError(t, st.SupersedeInsight(ctx(t), alice, "x", store.Supersession{Reason: store.ReasonForgotten}))
		_, err := st.GetInsight(ctx(t), alice, "x")
		assert.ErrorIs(t, err, store.ErrNotFound)
		audit, err := st.ListInsights(ctx(t), alice, store.InsightFilter{IncludeSuperseded: true})
		require.NoError(t, err)
		require.Len(t, audit, 1)
		assert.Equal(t, store.ReasonForgotten, audit[0].SupersedeReason)
		assert.Empty(t, audit[0].SupersededBy)
		assert.False(t, audit[0].SupersededAt.IsZero(), "a zero At means now")
	})
	t.Run("Unknown", func(t *testing.T) {
		st := s.fresh(t)
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("x", at(0), "a")))
		assert.ErrorIs(t, st.SupersedeInsight(ctx(t), alice, "missing", store.Supersession{By: "x", Reason: store.ReasonDuplicate}), store.ErrNotFound)
		// An interaction or session with that id is not an insight.
		require.NoError(t, st.PutInteraction(ctx(t), alice, interaction("i1", "s1", t0, "a")))
		require.NoError(t, st.PutSession(ctx(t), alice, session("s1", t0, "a")))
		assert.ErrorIs(t, st.SupersedeInsight(ctx(t), alice, "i1", store.Supersession{Reason: store.ReasonForgotten}), store.ErrNotFound)
		assert.ErrorIs(t, st.SupersedeInsight(ctx(t), alice, "s1", store.Supersession{Reason: store.ReasonForgotten}), store.ErrNotFound)
		_, err := st.GetInteraction(ctx(t), alice, "i1")
		assert.NoError(t, err)
	})
	t.Run("BadSupersession", func(t *testing.T) {
		st := s.fresh(t)
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("x", at(0), "a")))
		for name, sup := range map[string]store.Supersession{
			"no reason":       {By: "y"},
			"unknown reason":  {By: "y", Reason: "bored"},
			"duplicate no by": {Reason: store.ReasonDuplicate},
			"self":            {By: "x", Reason: store.ReasonDuplicate},
			"bad winner id":   {By: "a/b", Reason: store.ReasonContradict},
		} {
			assert.ErrorIs(t, st.SupersedeInsight(ctx(t), alice, "x", sup), store.ErrInvalid, name)
		}
		got, err := st.GetInsight(ctx(t), alice, "x")
		require.NoError(t, err, "a rejected supersession leaves the insight active")
		assert.False(t, got.Superseded())
	})
	t.Run("FindByHashSkipsSuperseded", func(t *testing.T) {
		st := s.fresh(t)
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("old", at(0), "Owns a house")))
		require.NoError(t, st.PutInsight(ctx(t), alice, insight("new", at(1), "owns a HOUSE")))
		require.NoError(t, st.SupersedeInsight(ctx(t), alice, "new", store.Supersession{By: "old", Reason: store.ReasonDuplicate}))
		got, err := st.FindInsightByHash(ctx(t), alice, store.ContentHash("owns a house"))
		require.NoError(t, err)
		assert.Equal(t, "old", got.ID, "the newest active duplicate, not the superseded one")
	})
}
