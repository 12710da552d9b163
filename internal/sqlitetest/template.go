package sqlitetest

import (
	"context"
	"testing"

	"github.com/agentmemory/agentmemory/internal/filetemplate"
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
	return emptyStore.Copy(t, "memory.db")
}

// emptyStore is an empty store file: closed, the last connection has
// checkpointed the WAL into it and removed it.
var emptyStore = filetemplate.New(func(path string) error {
	st, err := sqlite.Open(context.Background(), path, sqlite.Config{})
	if err != nil {
		return err
	}
	return st.Close()
})
