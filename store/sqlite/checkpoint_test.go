package sqlite

import (
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// putBulky writes n records of about a page each for alice, one write
// each.
func putBulky(t *testing.T, s *Store, from, n int) {
	t.Helper()
	body := []byte(`"` + strings.Repeat("x", 3500) + `"`)
	for i := from; i < from+n; i++ {
		require.NoError(t, s.PutRecord(t.Context(), "alice", &store.Record{ID: fmt.Sprint("r", i), Time: time.Now(), Body: body}))
	}
}

// TestCommitsReachTheDatabaseFileWhileOpen: the checkpointer copies a
// commit's pages from the WAL into the database file while the store is
// open, although the writer's commits never checkpoint and a few pages
// are far from SQLite's automatic 1,000.
func TestCommitsReachTheDatabaseFileWhileOpen(t *testing.T) {
	s, path := openTest(t)
	require.NoError(t, s.PutRecord(t.Context(), "alice", &store.Record{ID: "kept", Time: time.Now(), Body: []byte(`{}`)}))
	// immutable=1 reads the database file alone, as if there were no WAL.
	inFile := func() bool {
		db, err := sql.Open("sqlite", "file:"+path+"?immutable=1")
		require.NoError(t, err)
		defer db.Close()
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM records WHERE user_id = 'alice' AND id = 'kept'`).Scan(&n); err != nil {
			return false // the table itself may not be in the file yet
		}
		return n == 1
	}
	require.Eventually(t, inFile, 10*time.Second, 20*time.Millisecond, "the record is copied into the database file")
}

// TestTheWALStartsOverAfterACheckpoint: the writer does not checkpoint,
// yet rounds of writes, each after the checkpointer has copied the last,
// reuse the WAL from its start instead of growing it.
func TestTheWALStartsOverAfterACheckpoint(t *testing.T) {
	s, path := openTest(t)
	copied := func() {
		t.Helper()
		want := s.wstats.commits.Load()
		require.Eventually(t, func() bool {
			s.ckpt.mu.Lock()
			defer s.ckpt.mu.Unlock()
			return s.ckpt.covered >= want
		}, 10*time.Second, 10*time.Millisecond, "a checkpoint copies the WAL after commit %d", want)
	}
	walSize := func() int64 {
		fi, err := os.Stat(path + "-wal")
		require.NoError(t, err)
		return fi.Size()
	}
	putBulky(t, s, 0, 150)
	copied()
	first := walSize()
	require.Greater(t, first, int64(150*4096), "150 records of most of a page each")
	for round := 1; round <= 3; round++ {
		putBulky(t, s, round*150, 150)
		copied()
	}
	require.Less(t, walSize(), first*3/2, "the WAL of four rounds is about one round's")
	st := s.WriteStats()
	require.GreaterOrEqual(t, st.Checkpoints, int64(4), "a checkpoint after each round at least")
	require.Positive(t, st.CheckpointTime)
}
