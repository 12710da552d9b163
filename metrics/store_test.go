package metrics_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/mem"
	"github.com/agentmemory/agentmemory/store/sqlite"
	"github.com/agentmemory/agentmemory/store/storetest"
)

func openSQLite(t *testing.T, dims int) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), sqlitetest.NewFile(t), sqlite.Config{Dimensions: dims})
	require.NoError(t, err)
	return st
}

// The counted store keeps the store's contract: the backends'
// conformance suite passes through it, the deletion log included (on
// store/mem, whose suite runs in a fraction of SQLite's time; the
// counted store only forwards).
func TestCountedStoreConforms(t *testing.T) {
	rec, reg := newRecorder(t)
	storetest.RunConformance(t, func(t *testing.T) store.Store {
		return rec.Store(mem.New(mem.Config{Dimensions: storetest.Dimensions}))
	})
	fams := scrape(t, reg)
	const name = "agentmemory_store_call_duration_seconds"
	for _, op := range []string{"put_interaction", "get_interaction", "list_interactions", "search_interactions",
		"put_insight", "get_insight", "list_insights", "search_insights", "find_insight_by_hash", "supersede_insight",
		"put_session", "get_session", "list_sessions", "search_sessions", "append_turn", "list_turns",
		"get_user_state", "put_user_state", "delete_document", "delete_session", "delete_user",
		"append_deletion", "list_deletions", "last_deletion", "erase_deletion_names",
		"put_record", "get_record", "list_records", "delete_record"} {
		assert.NotZero(t, count(fams, name, "operation", op), op)
	}
	assert.NotZero(t, counter(fams, "agentmemory_store_call_errors_total", "operation", "get_session", "error", "not_found"))
	assert.NotZero(t, counter(fams, "agentmemory_store_call_errors_total", "operation", "put_session", "error", "conflict"))
	assert.NotZero(t, counter(fams, "agentmemory_store_call_errors_total", "operation", "get_interaction", "error", "invalid"))
}

// What a store implements beyond store.Store, and callers find by type
// assertion, the counted store implements too — and nothing it does not.
func TestCountedStoreKeepsTheOptionalInterfaces(t *testing.T) {
	rec, reg := newRecorder(t)
	ctx := context.Background()

	sq := rec.Store(openSQLite(t, 0))
	defer sq.Close()
	_, isLog := sq.(store.DeletionLog)
	assert.True(t, isLog, "store/sqlite keeps a deletion log")
	scrub, isScrubber := sq.(interface{ Scrub(context.Context) error })
	require.True(t, isScrubber, "store/sqlite scrubs its files")
	require.NoError(t, scrub.Scrub(ctx))
	dims, isDims := sq.(interface {
		VectorDimensions(context.Context) ([]int, error)
	})
	require.True(t, isDims, "store/sqlite tells its vector lengths")
	n, err := dims.VectorDimensions(ctx)
	require.NoError(t, err)
	assert.Empty(t, n)
	var db *sql.DB
	assert.True(t, sq.As(&db), "As reaches the backend")
	assert.NotNil(t, db)
	batch, isBatch := store.RecordsOf(sq).(store.RecordBatch)
	require.True(t, isBatch, "store/sqlite writes record batches, and its counted records do")
	require.NoError(t, batch.WriteRecords(ctx, []store.RecordWrite{{UserID: "alice", Put: &store.Record{ID: "r", Body: []byte(`{}`)}}}))

	mm := rec.Store(mem.New(mem.Config{}))
	defer mm.Close()
	_, isLog = mm.(store.DeletionLog)
	assert.True(t, isLog, "store/mem keeps a deletion log")
	_, isScrubber = mm.(interface{ Scrub(context.Context) error })
	assert.False(t, isScrubber, "store/mem has nothing to scrub")
	_, isDims = mm.(interface {
		VectorDimensions(context.Context) ([]int, error)
	})
	assert.False(t, isDims)
	_, isBatch = store.RecordsOf(mm).(store.RecordBatch)
	assert.False(t, isBatch, "store/mem writes records one by one")

	fams := scrape(t, reg)
	assert.Equal(t, uint64(1), count(fams, "agentmemory_store_call_duration_seconds", "operation", "scrub"))
	assert.Equal(t, uint64(1), count(fams, "agentmemory_store_call_duration_seconds", "operation", "vector_dimensions"))
	assert.Equal(t, uint64(1), count(fams, "agentmemory_store_call_duration_seconds", "operation", "write_records"))
}

// A failing store's calls are counted by their error: a closed SQLite
// store fails every call with ErrClosed.
func TestStoreErrorsAreCounted(t *testing.T) {
	rec, reg := newRecorder(t)
	ctx := context.Background()
	st := rec.Store(openSQLite(t, 0))
	_, err := st.GetUserState(ctx, "alice")
	require.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, st.Close())
	for range 3 {
		_, err = st.ListSessions(ctx, "alice", store.SessionFilter{})
		require.ErrorIs(t, err, store.ErrClosed)
	}
	err = st.AppendTurn(ctx, "alice", &store.Turn{ID: "t1", SessionID: "s1", Messages: []store.TurnMessage{{Role: "user", Content: "hi"}}})
	require.ErrorIs(t, err, store.ErrClosed)

	fams := scrape(t, reg)
	const errs = "agentmemory_store_call_errors_total"
	assert.Equal(t, 1.0, counter(fams, errs, "operation", "get_user_state", "error", "not_found"))
	assert.Equal(t, 3.0, counter(fams, errs, "operation", "list_sessions", "error", "closed"))
	assert.Equal(t, 1.0, counter(fams, errs, "operation", "append_turn", "error", "closed"))
	assert.Equal(t, uint64(3), count(fams, "agentmemory_store_call_duration_seconds", "operation", "list_sessions"), "failed calls are timed too")
}
