package sqlitetest

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

func TestFileHitsCountsTheFileAndItsCompanions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	require.NoError(t, os.WriteFile(path, []byte("xx marker xx marker"), 0o600))
	assert.Equal(t, 2, FileHits(t, path, "marker"), "no -wal or -shm file counts nothing")
	require.NoError(t, os.WriteFile(path+"-wal", []byte("marker"), 0o600))
	require.NoError(t, os.WriteFile(path+"-shm", []byte("marker marker"), 0o600))
	assert.Equal(t, 5, FileHits(t, path, "marker"))
	assert.Zero(t, FileHits(t, path, "absent"))
}

func TestHoldWALKeepsTheLogUntilReleased(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	st, err := sqlite.Open(ctx, path, sqlite.Config{Dimensions: 4, BusyTimeout: 5 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	var db *sql.DB
	require.True(t, st.As(&db))
	truncate := func() (busy int) {
		var logFrames, checkpointed int
		require.NoError(t, db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logFrames, &checkpointed))
		return busy
	}

	release := HoldWAL(t, st)
	require.NoError(t, st.PutSession(ctx, "u1", &store.Session{ID: "s1", Status: store.SessionActive}))
	assert.Equal(t, 1, truncate(), "a held reader blocks the truncating checkpoint")
	assert.Positive(t, FileHits(t, path, "s1"))
	wal, err := os.Stat(path + "-wal")
	require.NoError(t, err)
	assert.Positive(t, wal.Size(), "the WAL is kept")

	release()
	assert.Zero(t, truncate(), "released, the checkpoint truncates")
	wal, err = os.Stat(path + "-wal")
	require.NoError(t, err)
	assert.Zero(t, wal.Size())
}

// A new file opens as an empty store of the current schema, with any
// Config, and files are independent.
func TestNewFilesAreFreshStores(t *testing.T) {
	ctx := context.Background()
	path := NewFile(t)
	a, err := sqlite.Open(ctx, path, sqlite.Config{Dimensions: 4})
	require.NoError(t, err)
	defer a.Close()
	require.NoError(t, a.PutSession(ctx, "u", &store.Session{ID: "s1", StartTime: time.Unix(1, 0), Status: store.SessionActive, ReflectionStatus: store.ReflectionPending}))
	other := NewFile(t)
	require.NotEqual(t, path, other)
	b, err := sqlite.Open(ctx, other, sqlite.Config{Dimensions: 8, VectorCacheBytes: -1})
	require.NoError(t, err)
	defer b.Close()
	ss, err := b.ListSessions(ctx, "u", store.SessionFilter{})
	require.NoError(t, err)
	require.Empty(t, ss, "another file holds nothing of the first")
	var db *sql.DB
	require.True(t, b.As(&db))
	var version int
	require.NoError(t, db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version))
	require.Equal(t, sqlite.SchemaVersion, version, "the file is at the current schema")
}
