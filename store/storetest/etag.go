package storetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

func testETag(t *testing.T, s *suite) {
	t.Run("NewOnEveryWrite", func(t *testing.T) {
		st := s.fresh(t)
		doc := session("s1", t0, "v1")
		require.NoError(t, st.PutSession(ctx(t), alice, doc))
		e1 := doc.ETag
		require.NotEmpty(t, e1)
		got, err := st.GetSession(ctx(t), alice, "s1")
		require.NoError(t, err)
		assert.Equal(t, e1, got.ETag, "GetSession returns the current ETag")

		got.Summary = "v2"
		require.NoError(t, st.PutSession(ctx(t), alice, got), "a write with the current ETag succeeds")
		e2 := got.ETag
		assert.NotEmpty(t, e2)
		assert.NotEqual(t, e1, e2, "every write changes the ETag")

		again := session("s1", t0, "v3")
		require.NoError(t, st.PutSession(ctx(t), alice, again), "an empty ETag writes unconditionally")
		assert.NotEqual(t, e2, again.ETag)
		assert.NotEqual(t, e1, again.ETag)
		cur, err := st.GetSession(ctx(t), alice, "s1")
		require.NoError(t, err)
		assert.Equal(t, "v3", cur.Summary)
		assert.Equal(t, again.ETag, cur.ETag)
	})
	t.Run("CreateOnly", func(t *testing.T) {
		st := s.fresh(t)
		doc := session("s1", t0, "first")
		doc.ETag = store.CreateOnly
		require.NoError(t, st.PutSession(ctx(t), alice, doc), "CreateOnly inserts a new session")
		require.NotEmpty(t, doc.ETag)
		assert.NotEqual(t, store.CreateOnly, doc.ETag)

		dup := session("s1", t0, "second")
		dup.ETag = store.CreateOnly
		require.ErrorIs(t, st.PutSession(ctx(t), alice, dup), store.ErrConflict, "CreateOnly never overwrites")
		got, err := st.GetSession(ctx(t), alice, "s1")
		require.NoError(t, err)
		assert.Equal(t, "first", got.Summary)
		assert.Equal(t, doc.ETag, got.ETag)

		other := session("s1", t0, "bob's")
		other.ETag = store.CreateOnly
		require.NoError(t, st.PutSession(ctx(t), bob, other), "another user's session of the same id is another document")
	})
	t.Run("StaleETagConflicts", func(t *testing.T) {
		st := s.fresh(t)
		doc := session("s1", t0, "v1")
		require.NoError(t, st.PutSession(ctx(t), alice, doc))
		stale := doc.ETag

		a, err := st.GetSession(ctx(t), alice, "s1")
		require.NoError(t, err)
		b, err := st.GetSession(ctx(t), alice, "s1")
		require.NoError(t, err)
		a.Summary = "writer a"
		a.State.TurnCounter = 1
		require.NoError(t, st.PutSession(ctx(t), alice, a))
		b.Summary = "writer b"
		b.State.TurnCounter = 2
		err = st.PutSession(ctx(t), alice, b)
		require.ErrorIs(t, err, store.ErrConflict, "b read before a wrote")

		cur, err := st.GetSession(ctx(t), alice, "s1")
		require.NoError(t, err)
		assert.Equal(t, "writer a", cur.Summary, "a failed write changes nothing")
		assert.Equal(t, 1, cur.State.TurnCounter)
		assert.Equal(t, a.ETag, cur.ETag)

		c := session("s1", t0, "writer c")
		c.ETag = stale
		assert.ErrorIs(t, st.PutSession(ctx(t), alice, c), store.ErrConflict)
		c.ETag = "no-such-etag"
		assert.ErrorIs(t, st.PutSession(ctx(t), alice, c), store.ErrConflict)
		cur, err = st.GetSession(ctx(t), alice, "s1")
		require.NoError(t, err)
		assert.Equal(t, "writer a", cur.Summary)

		// Re-reading gives the ETag that makes the write go through.
		cur.Summary = "writer b, retried"
		require.NoError(t, st.PutSession(ctx(t), alice, cur))
		final, err := st.GetSession(ctx(t), alice, "s1")
		require.NoError(t, err)
		assert.Equal(t, "writer b, retried", final.Summary)
	})
	t.Run("DeletedOrMissingConflicts", func(t *testing.T) {
		st := s.fresh(t)
		doc := session("s1", t0, "v1")
		require.NoError(t, st.PutSession(ctx(t), alice, doc))
		require.NoError(t, st.DeleteDocument(ctx(t), alice, store.KindSessionSummary, "s1"))
		doc.Summary = "resurrected"
		assert.ErrorIs(t, st.PutSession(ctx(t), alice, doc), store.ErrConflict, "a conditional write does not recreate a deleted session")
		_, err := st.GetSession(ctx(t), alice, "s1")
		assert.ErrorIs(t, err, store.ErrNotFound)

		never := session("s2", t0, "v1")
		never.ETag = doc.ETag
		assert.ErrorIs(t, st.PutSession(ctx(t), alice, never), store.ErrConflict, "a conditional write needs an existing document")
		_, err = st.GetSession(ctx(t), alice, "s2")
		assert.ErrorIs(t, err, store.ErrNotFound)

		// After DeleteUser too.
		require.NoError(t, st.PutSession(ctx(t), alice, session("s3", t0, "v1")))
		cur, err := st.GetSession(ctx(t), alice, "s3")
		require.NoError(t, err)
		require.NoError(t, st.DeleteUser(ctx(t), alice))
		assert.ErrorIs(t, st.PutSession(ctx(t), alice, cur), store.ErrConflict)
	})
	t.Run("PerDocument", func(t *testing.T) {
		st := s.fresh(t)
		s1 := session("s1", t0, "one")
		s2 := session("s2", t0, "two")
		require.NoError(t, st.PutSession(ctx(t), alice, s1))
		require.NoError(t, st.PutSession(ctx(t), alice, s2))
		// Writing s2 does not invalidate s1's ETag.
		s2.Summary = "two, again"
		require.NoError(t, st.PutSession(ctx(t), alice, s2))
		s1.Summary = "one, again"
		require.NoError(t, st.PutSession(ctx(t), alice, s1))
		got, err := st.GetSession(ctx(t), alice, "s1")
		require.NoError(t, err)
		assert.Equal(t, "one, again", got.Summary)
	})
}
