package sqlite

import (
	"context"
	"testing"

	"github.com/agentmemory/agentmemory/internal/filetemplate"
)

// newFile is sqlitetest.NewFile for this package's own tests, which cannot
// import sqlitetest (it imports this package): the path of a copy of an
// empty store at the current schema, in a new t.TempDir(). Tests of
// opening and migrating new files call Open on a path of their own.
func newFile(t testing.TB) string {
	t.Helper()
	return emptyStore.Copy(t, "memory.db")
}

// emptyStore is an empty store file, made once per test binary.
var emptyStore = filetemplate.New(func(path string) error {
	st, err := Open(context.Background(), path, Config{})
	if err != nil {
		return err
	}
	return st.Close()
})
