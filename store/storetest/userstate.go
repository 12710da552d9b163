package storetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

func testUserState(t *testing.T, s *suite) {
	for _, user := range []string{alice, "🙂 𝔘ser"} {
		t.Run(user, func(t *testing.T) {
			st := s.fresh(t)
			_, err := st.GetUserState(ctx(t), user)
			require.ErrorIs(t, err, store.ErrNotFound)

			doc := &store.UserState{LeaseOwner: "proc-a", LeaseUntil: at(1), SinceReconcile: 2, ETag: store.CreateOnly}
			require.NoError(t, st.PutUserState(ctx(t), user, doc))
			require.NotEmpty(t, doc.ETag)
			assert.NotEqual(t, store.CreateOnly, doc.ETag)
			again := &store.UserState{ETag: store.CreateOnly}
			require.ErrorIs(t, st.PutUserState(ctx(t), user, again), store.ErrConflict, "create-only over an existing state")

			got, err := st.GetUserState(ctx(t), user)
			require.NoError(t, err)
			assert.Equal(t, user, got.UserID)
			assert.Equal(t, "proc-a", got.LeaseOwner)
			assert.Equal(t, canon(at(1)), canon(got.LeaseUntil))
			assert.Equal(t, 2, got.SinceReconcile)
			assert.Equal(t, doc.ETag, got.ETag)

			// Two writers read the same version; the second write conflicts.
			other, err := st.GetUserState(ctx(t), user)
			require.NoError(t, err)
			got.SinceProfile = 1
			require.NoError(t, st.PutUserState(ctx(t), user, got))
			other.LeaseOwner = "proc-b"
			require.ErrorIs(t, st.PutUserState(ctx(t), user, other), store.ErrConflict)
			now, err := st.GetUserState(ctx(t), user)
			require.NoError(t, err)
			assert.Equal(t, "proc-a", now.LeaseOwner, "the lost update did not land")
			assert.Equal(t, 1, now.SinceProfile)

			// The state is not a session.
			ss, err := st.ListSessions(ctx(t), user, store.SessionFilter{})
			require.NoError(t, err)
			assert.Empty(t, ss)
			_, err = st.GetSession(ctx(t), user, store.UserStateID)
			assert.Error(t, err)
			assert.ErrorIs(t, st.PutSession(ctx(t), user, session(store.UserStateID, at(0), "x")), store.ErrInvalid, "the id is reserved")

			// Other users see nothing of it; DeleteUser removes it.
			_, err = st.GetUserState(ctx(t), bob)
			require.ErrorIs(t, err, store.ErrNotFound)
			require.NoError(t, st.DeleteUser(ctx(t), user))
			_, err = st.GetUserState(ctx(t), user)
			require.ErrorIs(t, err, store.ErrNotFound)
			require.ErrorIs(t, st.PutUserState(ctx(t), user, now), store.ErrConflict, "a conditional write never recreates it")

			require.ErrorIs(t, st.PutUserState(ctx(t), user, &store.UserState{SinceProfile: -1}), store.ErrInvalid)
			require.ErrorIs(t, st.PutUserState(ctx(t), user, nil), store.ErrInvalid)
		})
	}
}
