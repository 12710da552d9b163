package storetest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

func testDeleteSession(t *testing.T, s *suite) {
	t.Run("DocumentAndTurns", func(t *testing.T) {
		st := s.fresh(t)
		for _, u := range []string{alice, bob} {
			for _, sid := range []string{"s1", "s2"} {
				require.NoError(t, st.PutSession(ctx(t), u, session(sid, t0, "zebra "+sid)))
				for i := range 3 {
					require.NoError(t, st.AppendTurn(ctx(t), u, turn(fmt.Sprintf("%s-t%d", sid, i), sid, i, "words of "+sid)))
				}
			}
			require.NoError(t, st.PutInteraction(ctx(t), u, interaction("i1", "s1", t0, "zebra")))
			require.NoError(t, st.PutUserState(ctx(t), u, &store.UserState{SinceProfile: 2}))
		}

		n, err := st.DeleteSession(ctx(t), alice, "s1")
		require.NoError(t, err)
		assert.Equal(t, 3, n, "turns removed")

		_, err = st.GetSession(ctx(t), alice, "s1")
		assert.ErrorIs(t, err, store.ErrNotFound)
		turns, err := st.ListTurns(ctx(t), alice, "s1", 0)
		require.NoError(t, err)
		assert.Empty(t, turns)
		sess, err := st.ListSessions(ctx(t), alice, store.SessionFilter{})
		require.NoError(t, err)
		assert.Equal(t, []string{"s2"}, sessionIDs(sess))
		hits, err := st.SearchSessions(ctx(t), alice, store.SearchRequest{Text: "zebra s1"})
		require.NoError(t, err)
		assert.Equal(t, []string{"s2"}, HitIDs(hits), "the deleted session is not searchable")

		// The user's other session, interactions and state stay.
		turns, err = st.ListTurns(ctx(t), alice, "s2", 0)
		require.NoError(t, err)
		assert.Equal(t, []int{1, 2, 3}, turnSeqs(turns))
		_, err = st.GetInteraction(ctx(t), alice, "i1")
		assert.NoError(t, err, "the session's interactions are separate documents")
		state, err := st.GetUserState(ctx(t), alice)
		require.NoError(t, err)
		assert.Equal(t, 2, state.SinceProfile)

		// Bob's session of the same id is untouched.
		_, err = st.GetSession(ctx(t), bob, "s1")
		assert.NoError(t, err)
		turns, err = st.ListTurns(ctx(t), bob, "s1", 0)
		require.NoError(t, err)
		assert.Equal(t, []int{1, 2, 3}, turnSeqs(turns))

		// Gone is gone: again is ErrNotFound, and a new turn starts at 1.
		_, err = st.DeleteSession(ctx(t), alice, "s1")
		assert.ErrorIs(t, err, store.ErrNotFound)
		tr := turn("again", "s1", 9, "a fresh start")
		require.NoError(t, st.AppendTurn(ctx(t), alice, tr))
		assert.Equal(t, 1, tr.Seq)
	})
	t.Run("DocumentOrTurnsOnly", func(t *testing.T) {
		st := s.fresh(t)
		require.NoError(t, st.PutSession(ctx(t), alice, session("s1", t0, "no turns")))
		for i := range 2 {
			require.NoError(t, st.AppendTurn(ctx(t), alice, turn(fmt.Sprintf("t%d", i), "s2", i, "no document")))
		}
		n, err := st.DeleteSession(ctx(t), alice, "s1")
		require.NoError(t, err)
		assert.Zero(t, n)
		_, err = st.GetSession(ctx(t), alice, "s1")
		assert.ErrorIs(t, err, store.ErrNotFound)

		n, err = st.DeleteSession(ctx(t), alice, "s2")
		require.NoError(t, err)
		assert.Equal(t, 2, n, "a session of turns alone is deletable")
		turns, err := st.ListTurns(ctx(t), alice, "s2", 0)
		require.NoError(t, err)
		assert.Empty(t, turns)
	})
	t.Run("NotFound", func(t *testing.T) {
		st := s.fresh(t)
		putOneOfEach(t, st, alice)
		require.NoError(t, st.AppendTurn(ctx(t), alice, turn("t0", "s1", 0, "alice's")))
		_, err := st.DeleteSession(ctx(t), alice, "never")
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = st.DeleteSession(ctx(t), bob, "s1")
		assert.ErrorIs(t, err, store.ErrNotFound, "another user's session is not found")
		require.NoError(t, st.PutUserState(ctx(t), alice, &store.UserState{}))
		_, err = st.DeleteSession(ctx(t), alice, store.UserStateID)
		assert.ErrorIs(t, err, store.ErrInvalid, "the user state is not a session")
		for _, id := range []string{"", "a/b", "a?b", "a#b"} {
			_, err = st.DeleteSession(ctx(t), alice, id)
			assert.ErrorIs(t, err, store.ErrInvalid, "session id %q", id)
		}
		_, err = st.GetUserState(ctx(t), alice)
		assert.NoError(t, err)
		assertUserHasOneOfEach(t, st, alice)
		turns, err := st.ListTurns(ctx(t), alice, "s1", 0)
		require.NoError(t, err)
		assert.Len(t, turns, 1)
	})
}
