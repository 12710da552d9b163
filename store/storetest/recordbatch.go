package storetest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// testRecordBatch checks store.RecordBatch, where the backend has it:
// a batch over several partitions is written whole, in order, or, when
// one of its writes fails, not at all, its error naming that write.
func testRecordBatch(t *testing.T, s *suite) {
	open := func(t *testing.T) (store.Records, store.RecordBatch) {
		rs := records(t, s.fresh(t))
		b, ok := rs.(store.RecordBatch)
		if !ok {
			t.Skipf("%T does not implement store.RecordBatch", rs)
		}
		return rs, b
	}
	t.Run("AllOrNone", func(t *testing.T) {
		rs, b := open(t)
		queue := record("queue", 0, false)
		require.NoError(t, rs.PutRecord(ctx(t), alice, queue))
		gone := record("gone", 0, true)
		require.NoError(t, rs.PutRecord(ctx(t), bob, gone))

		// The last write's ETag is stale: nothing of the batch is made.
		stale := record("queue", 1, false)
		stale.ETag = "stale"
		ws := []store.RecordWrite{
			{UserID: alice, Put: &store.Record{ID: "queue", Time: at(1), Body: []byte(`{"n":2}`), ETag: queue.ETag}},
			{UserID: bob, Put: record("new", 1, true)},
			{UserID: bob, Delete: "gone"},
			{UserID: alice, Put: stale},
		}
		err := b.WriteRecords(ctx(t), ws)
		require.ErrorIs(t, err, store.ErrConflict)
		var we *store.RecordWriteError
		require.True(t, errors.As(err, &we), "%v", err)
		assert.Equal(t, 3, we.Index, "the write that failed")
		assert.Equal(t, 0, we.Applied, "and none written")
		got, err := rs.GetRecord(ctx(t), alice, "queue")
		require.NoError(t, err)
		assert.Equal(t, queue.ETag, got.ETag, "the first write was undone")
		_, err = rs.GetRecord(ctx(t), bob, "new")
		require.ErrorIs(t, err, store.ErrNotFound, "the create was undone")
		_, err = rs.GetRecord(ctx(t), bob, "gone")
		require.NoError(t, err, "the delete was undone")

		// Without it, every write is made, each Put given its ETag.
		ws = ws[:3]
		require.NoError(t, b.WriteRecords(ctx(t), ws))
		got, err = rs.GetRecord(ctx(t), alice, "queue")
		require.NoError(t, err)
		assert.JSONEq(t, `{"n":2}`, string(got.Body))
		assert.Equal(t, ws[0].Put.ETag, got.ETag)
		created, err := rs.GetRecord(ctx(t), bob, "new")
		require.NoError(t, err)
		assert.Equal(t, ws[1].Put.ETag, created.ETag)
		_, err = rs.GetRecord(ctx(t), bob, "gone")
		require.ErrorIs(t, err, store.ErrNotFound)
	})
	t.Run("InOrder", func(t *testing.T) {
		rs, b := open(t)
		// A record created, then replaced under the ETag the batch gives
		// it, then deleted, and the delete of a record not there.
		first := record("r", 0, true)
		first.ETag = store.CreateOnly
		require.NoError(t, b.WriteRecords(ctx(t), []store.RecordWrite{
			{UserID: alice, Put: first},
			{UserID: alice, Put: record("s", 0, false)},
			{UserID: alice, Delete: "s"},
			{UserID: alice, Delete: "never"},
		}))
		assert.Equal(t, []string{"r"}, listRecords(t, rs, alice, store.RecordFilter{}))
		again := record("r", 0, false)
		again.ETag = store.CreateOnly
		err := b.WriteRecords(ctx(t), []store.RecordWrite{{UserID: alice, Delete: "r"}, {UserID: alice, Put: again}})
		require.NoError(t, err, "a create after the delete of the same id in one batch")
		got, err := rs.GetRecord(ctx(t), alice, "r")
		require.NoError(t, err)
		assert.False(t, got.Active)
	})
	t.Run("Turns", func(t *testing.T) {
		st := s.fresh(t)
		rs := records(t, st)
		b, ok := rs.(store.RecordBatch)
		if !ok {
			t.Skipf("%T does not implement store.RecordBatch", rs)
		}
		first := turn("t1", "s1", 0, "I moved to Porto.")
		require.NoError(t, st.AppendTurn(ctx(t), alice, first))
		queue := record("queue", 0, false)
		require.NoError(t, rs.PutRecord(ctx(t), alice, queue))

		// A turn appended with a record whose ETag is stale: neither is
		// written.
		stale := record("queue", 1, false)
		stale.ETag = "stale"
		lost := turn("t2", "s1", 1, "I play the cello.")
		err := b.WriteRecords(ctx(t), []store.RecordWrite{{UserID: alice, Append: lost}, {UserID: alice, Put: stale}})
		require.ErrorIs(t, err, store.ErrConflict)
		turns, err := st.ListTurns(ctx(t), alice, "s1", 0)
		require.NoError(t, err)
		require.Len(t, turns, 1, "the turn of the failed batch is not appended")

		// With the record's ETag, both are, the turn numbered after the
		// session's last; appended again, it is not stored twice.
		second := turn("t2", "s1", 1, "I play the cello.")
		put := record("queue", 1, false)
		put.ETag = queue.ETag
		ws := []store.RecordWrite{{UserID: alice, Put: put}, {UserID: alice, Append: second}}
		require.NoError(t, b.WriteRecords(ctx(t), ws))
		assert.Equal(t, 2, second.Seq)
		again := turn("t2", "s1", 1, "I play the cello.")
		require.NoError(t, b.WriteRecords(ctx(t), []store.RecordWrite{{UserID: alice, Append: again}}))
		assert.Equal(t, 2, again.Seq, "a retried append is given the turn's number")
		turns, err = st.ListTurns(ctx(t), alice, "s1", 0)
		require.NoError(t, err)
		require.Len(t, turns, 2)
		assert.Equal(t, "t2", turns[1].ID)
		turns, err = st.ListTurns(ctx(t), bob, "s1", 0)
		require.NoError(t, err)
		assert.Empty(t, turns, "appended in alice's partition only")

		err = b.WriteRecords(ctx(t), []store.RecordWrite{{UserID: alice, Append: &store.Turn{ID: "t3", SessionID: "s1"}}})
		require.ErrorIs(t, err, store.ErrInvalid, "a turn without messages")
	})
	t.Run("Check", func(t *testing.T) {
		rs, b := open(t)
		def := record("def", 0, false)
		require.NoError(t, rs.PutRecord(ctx(t), bob, def))
		read := store.RecordVersion{ID: "def", ETag: def.ETag}

		// While the record checked is as read, the batch is written and
		// the check writes nothing.
		require.NoError(t, b.WriteRecords(ctx(t), []store.RecordWrite{
			{UserID: alice, Put: record("a1", 0, true)},
			{UserID: bob, Check: &read},
		}))
		_, err := rs.GetRecord(ctx(t), alice, "a1")
		require.NoError(t, err)
		got, err := rs.GetRecord(ctx(t), bob, "def")
		require.NoError(t, err)
		assert.Equal(t, def.ETag, got.ETag, "a check writes nothing")

		// Changed, or gone, the record fails the check, and the batch
		// is not written.
		changed := record("def", 1, false)
		require.NoError(t, rs.PutRecord(ctx(t), bob, changed))
		for _, state := range []string{"changed", "gone"} {
			if state == "gone" {
				require.NoError(t, rs.DeleteRecord(ctx(t), bob, "def"))
			}
			err := b.WriteRecords(ctx(t), []store.RecordWrite{
				{UserID: alice, Put: record("a2", 0, true)},
				{UserID: bob, Check: &read},
			})
			require.ErrorIs(t, err, store.ErrConflict, state)
			var we *store.RecordWriteError
			require.True(t, errors.As(err, &we), "%v", err)
			assert.Equal(t, 1, we.Index, state)
			_, err = rs.GetRecord(ctx(t), alice, "a2")
			require.ErrorIs(t, err, store.ErrNotFound, "%s: the batch was not written", state)
		}

		// A check is of its own partition: alice has no record "def".
		err = b.WriteRecords(ctx(t), []store.RecordWrite{{UserID: alice, Check: &store.RecordVersion{ID: "a1", ETag: "x"}}})
		require.ErrorIs(t, err, store.ErrConflict)
		err = b.WriteRecords(ctx(t), []store.RecordWrite{{UserID: alice, Check: &store.RecordVersion{ID: "a/1", ETag: "x"}}})
		require.ErrorIs(t, err, store.ErrInvalid, "a malformed id to check")
	})
	t.Run("Invalid", func(t *testing.T) {
		rs, b := open(t)
		err := b.WriteRecords(ctx(t), []store.RecordWrite{
			{UserID: alice, Put: record("ok", 0, false)},
			{UserID: alice, Put: &store.Record{ID: "bad", Time: at(0), Body: []byte(`{not json`)}},
		})
		require.ErrorIs(t, err, store.ErrInvalid)
		var we *store.RecordWriteError
		require.True(t, errors.As(err, &we), "%v", err)
		assert.Equal(t, 1, we.Index)
		err = b.WriteRecords(ctx(t), []store.RecordWrite{{UserID: "", Put: record("ok", 0, false)}})
		require.ErrorIs(t, err, store.ErrInvalid, "an empty user id")
		err = b.WriteRecords(ctx(t), []store.RecordWrite{{UserID: alice, Delete: "a/b"}})
		require.ErrorIs(t, err, store.ErrInvalid, "a malformed id to delete")
		assert.Empty(t, listRecords(t, rs, alice, store.RecordFilter{}), "nothing written")
		require.NoError(t, b.WriteRecords(ctx(t), nil), "an empty batch")
	})
}
