// Package sqlitetest helps tests that use SQLite stores: a new store file
// that opens fast (a copy of an empty one, its schema already created),
// and checks of what a store's files keep after a forget — the bytes of a
// marker left in the database file and its write-ahead log, and a reader
// that keeps the log from being truncated.
//
// # Use
//
//	st, err := sqlite.Open(ctx, sqlitetest.NewFile(t), sqlite.Config{Dimensions: 384})
//
//	release := sqlitetest.HoldWAL(t, st) // checkpoints cannot truncate the WAL
//	… forget, expecting an incomplete erasure …
//	release()
//	assert.Zero(t, sqlitetest.FileHits(t, path, "secret"))
package sqlitetest

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store/sqlite"
)

// FileHits counts the occurrences of marker in the database file at path
// and its -wal and -shm companions; a companion that does not exist counts
// nothing.
func FileHits(t testing.TB, path, marker string) int {
	t.Helper()
	n := 0
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(path + suffix)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		n += bytes.Count(b, []byte(marker))
	}
	return n
}

// HoldWAL opens a read transaction on st's file and reads in it, so that
// SQLite keeps the WAL for it: no checkpoint can truncate the WAL, and no
// forget can be erased from the files, until release is called.
func HoldWAL(t testing.TB, st *sqlite.Store) (release func()) {
	t.Helper()
	var db *sql.DB
	require.True(t, st.As(&db))
	tx, err := db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	require.NoError(t, err)
	var n int
	require.NoError(t, tx.QueryRow(`SELECT count(*) FROM deletion_log`).Scan(&n))
	return func() { _ = tx.Rollback() }
}
