package sqlite

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
)

// newFile returns the path of a store file in a new t.TempDir() that holds
// an empty store at the current schema, to open with any Config: what
// sqlitetest.NewFile gives the other packages' tests, which this package's
// own tests cannot import (sqlitetest imports this package). Creating the
// schema is most of opening a new file (about 0.25 s of a 0.35 s Open under
// the race detector); tests of opening and migrating new files call Open on
// a path of their own instead.
func newFile(t testing.TB) string {
	t.Helper()
	b, err := emptyStore()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "memory.db")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}

// emptyStore returns the bytes of an empty store file, made once per test
// binary: they depend on no Config field, and never change.
var emptyStore = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "sqlite-empty-")
	if err != nil {
		return nil, fmt.Errorf("empty store: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "empty.db")
	st, err := Open(context.Background(), path, Config{})
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
