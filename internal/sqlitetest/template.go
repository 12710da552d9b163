package sqlitetest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store/sqlite"
)

// Template makes an empty store file once, its schema created, and
// returns a function that gives each caller a copy of it in the caller's
// own t.TempDir(), to open with the same cfg. Creating the schema is most
// of opening a new file (a quarter of a second under the race detector),
// and suites such as the store conformance suite open a fresh store for
// every test; opening a copy skips it. The template lives in tb's
// t.TempDir(), so the function serves the subtests of tb.
func Template(tb testing.TB, cfg sqlite.Config) (fresh func(t testing.TB) string) {
	tb.Helper()
	tmpl := filepath.Join(tb.TempDir(), "template.db")
	st, err := sqlite.Open(context.Background(), tmpl, cfg)
	require.NoError(tb, err)
	require.NoError(tb, st.Close()) // the last connection checkpoints the WAL into the file
	b, err := os.ReadFile(tmpl)
	require.NoError(tb, err)
	_, err = os.Stat(tmpl + "-wal")
	require.True(tb, os.IsNotExist(err), "the template's WAL is checkpointed and removed on close: %v", err)
	return func(t testing.TB) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "memory.db")
		require.NoError(t, os.WriteFile(path, b, 0o600))
		return path
	}
}
