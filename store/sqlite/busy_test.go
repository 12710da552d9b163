package sqlite_test

import (
	"database/sql"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// holdWriteLock takes the file's write lock on a connection of its own,
// as another process's write would, and returns its release.
func holdWriteLock(t *testing.T, path string) func() {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	raw.SetMaxOpenConns(1)
	tx, err := raw.BeginTx(t.Context(), nil)
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT OR REPLACE INTO records (user_id, id, time, active, etag, body) VALUES ('other', 'held', '', 0, 'e', '{}')`)
	require.NoError(t, err, "the insert takes the write lock")
	return func() {
		require.NoError(t, tx.Commit())
		require.NoError(t, raw.Close())
	}
}

// A write waits while another process holds the file's write lock, and
// is made once it is free; one that waits longer than BusyTimeout fails,
// and the store writes again once the lock is free.
func TestWritesWaitForAnotherProcesssLock(t *testing.T) {
	path := sqlitetest.NewFile(t)
	s := openAt(t, path, sqlite.Config{BusyTimeout: 300 * time.Millisecond})
	put := func(id string) error {
		return s.PutRecord(t.Context(), "alice", &store.Record{ID: id, Body: []byte(`{}`)})
	}
	require.NoError(t, put("first"))

	release := holdWriteLock(t, path)
	require.Error(t, put("refused"), "the lock outlasts BusyTimeout")
	release()
	require.NoError(t, put("after"))

	release = holdWriteLock(t, path)
	freed := make(chan struct{})
	go func() {
		time.Sleep(100 * time.Millisecond)
		release()
		close(freed)
	}()
	require.NoError(t, put("waited"), "made once the lock is free")
	<-freed
	got, err := s.ListRecords(t.Context(), "alice", store.RecordFilter{})
	require.NoError(t, err)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	assert.ElementsMatch(t, []string{"first", "after", "waited"}, ids)
}

// A deletion's checkpoint waits for a reader in the middle of a
// snapshot (up to BusyTimeout), and the deletion is scrubbed once the
// reader is done.
func TestDeletionWaitsForAReadersSnapshot(t *testing.T) {
	path := sqlitetest.NewFile(t)
	s := openAt(t, path, sqlite.Config{})
	require.NoError(t, s.PutInteraction(t.Context(), "alice", interaction("i1", "s1", 0, "kept in a snapshot for a while")))
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer raw.Close()
	tx, err := raw.BeginTx(t.Context(), &sql.TxOptions{ReadOnly: true})
	require.NoError(t, err)
	var n int
	require.NoError(t, tx.QueryRow(`SELECT count(*) FROM interactions`).Scan(&n), "the reader's snapshot begins")
	done := make(chan struct{})
	go func() {
		time.Sleep(500 * time.Millisecond)
		tx.Rollback()
		close(done)
	}()
	require.NoError(t, s.DeleteUser(t.Context(), "alice"), "scrubbed once the reader is done")
	<-done
}
