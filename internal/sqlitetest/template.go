package sqlitetest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store/sqlite"
)

// NewFile returns the path of a store file in a new t.TempDir() that
// holds an empty store at the current schema, to open with any
// sqlite.Config. Creating the schema is most of opening a new file (a
// quarter of a second under the race detector), and most tests open a
// fresh store; opening a copy skips it. Opening a new file is the business
// of store/sqlite's own Open and migration tests.
//
// The empty store is made once per test binary and copied for each call:
// its bytes depend on no Config field (the schema is the same for all).
func NewFile(t testing.TB) string {
	t.Helper()
	b, err := emptyStore()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "memory.db")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

// emptyStore returns the bytes of an empty store file, made on first use.
// They never change, so every test of the binary may share them.
var emptyStore = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "sqlitetest-")
	if err != nil {
		return nil, fmt.Errorf("empty store: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "empty.db")
	st, err := sqlite.Open(context.Background(), path, sqlite.Config{})
	if err != nil {
		return nil, fmt.Errorf("empty store: %w", err)
	}
	// The last connection checkpoints the WAL into the file and removes
	// it: the file alone is the store.
	if err := st.Close(); err != nil {
		return nil, fmt.Errorf("empty store: %w", err)
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("empty store: its WAL is not removed on close (%v)", err)
	}
	return os.ReadFile(path)
})
