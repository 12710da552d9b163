package filetemplate

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The file is made once, and each copy is a test's own.
func TestCopiesAreMadeOnceAndApart(t *testing.T) {
	made := 0
	tp := New(func(path string) error {
		made++
		return os.WriteFile(path, []byte("empty"), 0o600)
	})
	a, b := tp.Copy(t, "a.db"), tp.Copy(t, "b.db")
	assert.Equal(t, 1, made)
	assert.NotEqual(t, a, b)
	require.NoError(t, os.WriteFile(a, []byte("changed"), 0o600))
	got, err := os.ReadFile(b)
	require.NoError(t, err)
	assert.Equal(t, "empty", string(got), "a copy changed leaves the others as made")
}

// A file whose WAL is left beside it is not complete: no copy is made.
func TestAWALLeftBesideIsAnError(t *testing.T) {
	tp := New(func(path string) error {
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			return err
		}
		return os.WriteFile(path+"-wal", []byte("frames"), 0o600)
	})
	_, err := tp.bytes()
	assert.ErrorContains(t, err, "a WAL is left beside the file")
}
