package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/mem"
)

// On records without a batch of their own (the in-memory store's, and
// records kept as session documents), WriteRecords writes one by one, in
// order: a write that fails stops the batch, the writes before it stay,
// and its error says how many; the delete of a record not there is no
// failure.
func TestWriteRecordsOneByOne(t *testing.T) {
	ctx := context.Background()
	for name, rs := range map[string]store.Records{
		"records":  mem.New(mem.Config{}),
		"sessions": store.SessionRecords(mem.New(mem.Config{})),
	} {
		t.Run(name, func(t *testing.T) {
			_, batched := rs.(store.RecordBatch)
			require.False(t, batched, "these records write one by one")
			put := func(id, etag string) *store.Record {
				return &store.Record{ID: id, Time: time.Unix(0, 0), Body: []byte(`{}`), ETag: etag}
			}
			queue := put("queue", "")
			require.NoError(t, rs.PutRecord(ctx, "alice", queue))
			ws := []store.RecordWrite{
				{UserID: "alice", Put: put("queue", queue.ETag)},
				{UserID: "alice", Delete: "never"},
				{UserID: "bob", Put: put("new", store.CreateOnly)},
				{UserID: "alice", Put: put("queue", queue.ETag)}, // stale by now
				{UserID: "bob", Put: put("after", "")},
			}
			err := store.WriteRecords(ctx, rs, ws)
			require.ErrorIs(t, err, store.ErrConflict)
			var we *store.RecordWriteError
			require.True(t, errors.As(err, &we), "%v", err)
			assert.Equal(t, 3, we.Index)
			assert.Equal(t, 3, we.Applied, "the writes before it stay")
			got, err := rs.GetRecord(ctx, "alice", "queue")
			require.NoError(t, err)
			assert.Equal(t, ws[0].Put.ETag, got.ETag)
			_, err = rs.GetRecord(ctx, "bob", "new")
			require.NoError(t, err)
			_, err = rs.GetRecord(ctx, "bob", "after")
			require.ErrorIs(t, err, store.ErrNotFound, "none after it is made")
		})
	}
}

// Written one by one, a check reads the record: a batch goes on past it
// while the record is as read, and stops at it, with ErrConflict, once it
// changed or is gone.
func TestWriteRecordsChecksOneByOne(t *testing.T) {
	ctx := context.Background()
	for name, rs := range map[string]store.Records{
		"records":  mem.New(mem.Config{}),
		"sessions": store.SessionRecords(mem.New(mem.Config{})),
	} {
		t.Run(name, func(t *testing.T) {
			def := &store.Record{ID: "def", Time: time.Unix(0, 0), Body: []byte(`{}`)}
			require.NoError(t, rs.PutRecord(ctx, "bob", def))
			read := store.RecordVersion{ID: "def", ETag: def.ETag}
			put := func(id string) *store.Record { return &store.Record{ID: id, Time: time.Unix(0, 0), Body: []byte(`{}`)} }
			require.NoError(t, store.WriteRecords(ctx, rs, []store.RecordWrite{
				{UserID: "bob", Check: &read}, {UserID: "alice", Put: put("a1")}}))
			_, err := rs.GetRecord(ctx, "alice", "a1")
			require.NoError(t, err)

			require.NoError(t, rs.PutRecord(ctx, "bob", &store.Record{ID: "def", Time: time.Unix(1, 0), Body: []byte(`{}`)}))
			for _, state := range []string{"changed", "gone"} {
				if state == "gone" {
					require.NoError(t, rs.DeleteRecord(ctx, "bob", "def"))
				}
				err := store.WriteRecords(ctx, rs, []store.RecordWrite{
					{UserID: "bob", Check: &read}, {UserID: "alice", Put: put("a2")}})
				require.ErrorIs(t, err, store.ErrConflict, state)
				var we *store.RecordWriteError
				require.True(t, errors.As(err, &we), "%v", err)
				assert.Equal(t, 0, we.Index, state)
				_, err = rs.GetRecord(ctx, "alice", "a2")
				require.ErrorIs(t, err, store.ErrNotFound, "%s: nothing after the check", state)
			}
		})
	}
}

// Written one by one, a batch's turn is appended where the records keep
// turns too (the in-memory store), and refused, naming the records,
// where they do not (records kept as session documents).
func TestWriteRecordsAppendsTurnsOneByOne(t *testing.T) {
	ctx := context.Background()
	turn := func() *store.Turn {
		return &store.Turn{ID: "t1", SessionID: "s1", Time: time.Unix(0, 0),
			Messages: []store.TurnMessage{{ID: "m1", Role: "user", Content: "I moved to Porto."}}}
	}
	st := mem.New(mem.Config{})
	first := turn()
	require.NoError(t, store.WriteRecords(ctx, st, []store.RecordWrite{{UserID: "alice", Append: first}}))
	assert.Equal(t, 1, first.Seq)
	turns, err := st.ListTurns(ctx, "alice", "s1", 0)
	require.NoError(t, err)
	require.Len(t, turns, 1)

	err = store.WriteRecords(ctx, store.SessionRecords(mem.New(mem.Config{})), []store.RecordWrite{{UserID: "alice", Append: turn()}})
	require.ErrorIs(t, err, store.ErrInvalid)
	assert.Contains(t, err.Error(), "appends no turns")
}
