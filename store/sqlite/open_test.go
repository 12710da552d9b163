package sqlite_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store/sqlite"
)

// A path in a directory that does not exist is refused with an error that
// names the directory; nothing is created.
func TestOpenNamesAMissingDirectory(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "no", "such")
	path := filepath.Join(dir, "memory.db")

	_, err := sqlite.Open(t.Context(), path, sqlite.Config{})
	require.Error(t, err)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.EqualError(t, err, `sqlite: open "`+path+`": directory "`+dir+`" does not exist`)
	_, statErr := os.Stat(filepath.Join(root, "no"))
	assert.ErrorIs(t, statErr, fs.ErrNotExist, "no directory is created")
}

// A path whose directory is a file is refused with an error that says so.
func TestOpenNamesAParentThatIsAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))

	_, err := sqlite.Open(t.Context(), filepath.Join(file, "memory.db"), sqlite.Config{})
	require.Error(t, err)
	assert.ErrorContains(t, err, `"`+file+`" is not a directory`)
}

// A relative path in the working directory opens as before.
func TestOpenRelativePath(t *testing.T) {
	t.Chdir(t.TempDir())
	s, err := sqlite.Open(t.Context(), "memory.db", sqlite.Config{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = os.Stat("memory.db")
	assert.NoError(t, err)
}
