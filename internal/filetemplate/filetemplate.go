// Package filetemplate gives tests copies of a file made once per test
// binary: an empty store, say, whose making is most of opening a new
// one. Each test gets its own copy in its own t.TempDir().
package filetemplate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Template is a file made on first use, by the function given to New, and
// copied for every test that asks.
type Template struct {
	bytes func() ([]byte, error)
}

// New returns the template that make writes at the path it is given, in
// a directory of its own that is removed afterwards. The file alone must
// hold what make made: a SQLite store must be closed, its WAL
// checkpointed into the file and removed; a "-wal" file left beside it is
// an error.
func New(make func(path string) error) *Template {
	return &Template{bytes: sync.OnceValues(func() ([]byte, error) {
		dir, err := os.MkdirTemp("", "filetemplate-")
		if err != nil {
			return nil, fmt.Errorf("file template: %w", err)
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "template")
		if err := make(path); err != nil {
			return nil, fmt.Errorf("file template: %w", err)
		}
		if _, err := os.Stat(path + "-wal"); !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("file template: a WAL is left beside the file (%v)", err)
		}
		return os.ReadFile(path)
	})}
}

// Copy writes a copy of the template as name in a new t.TempDir() and
// returns its path.
func (tp *Template) Copy(t testing.TB, name string) string {
	t.Helper()
	b, err := tp.bytes()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, b, 0o600))
	return path
}
