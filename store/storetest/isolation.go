package storetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

func testIsolation(t *testing.T, s *suite) {
	t.Run("Reads", func(t *testing.T) {
		st := s.fresh(t)
		putOneOfEach(t, st, alice)
		// Bob passes alice's ids: nothing is found.
		_, err := st.GetInteraction(ctx(t), bob, "i1")
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = st.GetInsight(ctx(t), bob, "n1")
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = st.GetInsight(ctx(t), bob, store.LongTermID(alice))
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = st.GetSession(ctx(t), bob, "s1")
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = st.FindInsightByHash(ctx(t), bob, store.ContentHash("zebra alice"))
		assert.ErrorIs(t, err, store.ErrNotFound)

		ints, err := st.ListInteractions(ctx(t), bob, store.InteractionFilter{SessionID: "s1"})
		require.NoError(t, err)
		assert.Empty(t, ints)
		ins, err := st.ListInsights(ctx(t), bob, store.InsightFilter{SessionID: "s1", IncludeSuperseded: true})
		require.NoError(t, err)
		assert.Empty(t, ins)
		assertUserEmpty(t, st, bob)
		// Same query under alice finds her documents: the searches above
		// were able to match.
		q := store.SearchRequest{Text: "zebra alice", Vector: unit(0), SessionID: "s1"}
		ih, err := st.SearchInteractions(ctx(t), alice, q)
		require.NoError(t, err)
		assert.Equal(t, []string{"i1"}, HitIDs(ih))
		ih, err = st.SearchInteractions(ctx(t), bob, q)
		require.NoError(t, err)
		assert.Empty(t, ih)
		assertUserHasOneOfEach(t, st, alice)
	})
	t.Run("Writes", func(t *testing.T) {
		st := s.fresh(t)
		putOneOfEach(t, st, alice)
		aliceSession, err := st.GetSession(ctx(t), alice, "s1")
		require.NoError(t, err)

		// Bob cannot supersede or delete alice's documents.
		assert.ErrorIs(t, st.SupersedeInsight(ctx(t), bob, "n1", store.Supersession{Reason: store.ReasonForgotten}), store.ErrNotFound)
		assert.ErrorIs(t, st.DeleteDocument(ctx(t), bob, store.KindInteraction, "i1"), store.ErrNotFound)
		assert.ErrorIs(t, st.DeleteDocument(ctx(t), bob, store.KindInsight, "n1"), store.ErrNotFound)
		assert.ErrorIs(t, st.DeleteDocument(ctx(t), bob, store.KindInsight, "n2"), store.ErrNotFound)
		assert.ErrorIs(t, st.DeleteDocument(ctx(t), bob, store.KindSessionSummary, "s1"), store.ErrNotFound)
		require.NoError(t, st.DeleteUser(ctx(t), bob))

		// Alice's ETag means nothing for bob's (missing) session.
		stolen := session("s1", t0, "bob's write")
		stolen.ETag = aliceSession.ETag
		assert.ErrorIs(t, st.PutSession(ctx(t), bob, stolen), store.ErrConflict)

		// A document owned by alice cannot be written under bob.
		in := interaction("i1", "s1", t0, "overwritten")
		in.UserID = alice
		assert.ErrorIs(t, st.PutInteraction(ctx(t), bob, in), store.ErrInvalid)
		n := insight("n1", t0, "overwritten")
		n.UserID = alice
		assert.ErrorIs(t, st.PutInsight(ctx(t), bob, n), store.ErrInvalid)
		ss := session("s1", t0, "overwritten")
		ss.UserID = alice
		assert.ErrorIs(t, st.PutSession(ctx(t), bob, ss), store.ErrInvalid)
		lt := insight(store.LongTermID(alice), t0, "overwritten")
		lt.InsightType = store.InsightLongTerm
		assert.ErrorIs(t, st.PutInsight(ctx(t), bob, lt), store.ErrInvalid, "bob's profile id is longterm-bob")
		assertUserHasOneOfEach(t, st, alice)
		assertUserEmpty(t, st, bob)

		// The same ids under bob are bob's own documents.
		putOneOfEach(t, st, bob)
		assertUserHasOneOfEach(t, st, alice)
		assertUserHasOneOfEach(t, st, bob)
		cur, err := st.GetSession(ctx(t), alice, "s1")
		require.NoError(t, err)
		assert.Equal(t, aliceSession.ETag, cur.ETag, "bob's write left alice's session alone")

		require.NoError(t, st.DeleteDocument(ctx(t), bob, store.KindInteraction, "i1"))
		require.NoError(t, st.SupersedeInsight(ctx(t), bob, "n1", store.Supersession{Reason: store.ReasonForgotten}))
		require.NoError(t, st.DeleteUser(ctx(t), bob))
		assertUserHasOneOfEach(t, st, alice)
		assertUserEmpty(t, st, bob)
	})
	t.Run("ExactUserIDs", func(t *testing.T) {
		// User ids are opaque strings: no case folding, no prefix or
		// pattern matching, no quoting trouble.
		st := s.fresh(t)
		users := []string{"u", "U", "u_", "u%", "u1", "u'", `u"`, "u' OR '1'='1", "ü", "u*", "u "}
		for _, u := range users {
			require.NoError(t, st.PutInteraction(ctx(t), u, interaction("i1", "s1", t0, "zebra "+u)), u)
			require.NoError(t, st.PutSession(ctx(t), u, session("s1", t0, "zebra "+u)), u)
			require.NoError(t, st.PutInsight(ctx(t), u, insight("n1", t0, "zebra "+u)), u)
		}
		for _, u := range users {
			ints, err := st.ListInteractions(ctx(t), u, store.InteractionFilter{})
			require.NoError(t, err, u)
			require.Len(t, ints, 1, u)
			assert.Equal(t, "zebra "+u, ints[0].Content, u)
			sess, err := st.ListSessions(ctx(t), u, store.SessionFilter{})
			require.NoError(t, err, u)
			require.Len(t, sess, 1, u)
			assert.Equal(t, "zebra "+u, sess[0].Summary, u)
			hits, err := st.SearchInsights(ctx(t), u, store.SearchRequest{Text: "zebra"})
			require.NoError(t, err, u)
			require.Len(t, hits, 1, u)
			assert.Equal(t, "zebra "+u, hits[0].Doc.InsightText, u)
		}
		require.NoError(t, st.DeleteUser(ctx(t), "u%"))
		require.NoError(t, st.DeleteUser(ctx(t), "u' OR '1'='1"))
		for _, u := range users {
			ints, err := st.ListInteractions(ctx(t), u, store.InteractionFilter{})
			require.NoError(t, err, u)
			if u == "u%" || u == "u' OR '1'='1" {
				assert.Empty(t, ints, u)
			} else {
				assert.Len(t, ints, 1, "deleting another user removed %q's data", u)
			}
		}
	})
}
