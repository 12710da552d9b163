package sqlite

import (
	"path/filepath"
	"testing"
)

// BenchmarkQueryTokens measures tokenizing a question's words through
// FTS5 when none is in the token cache (a question of new words), and
// when all are.
func BenchmarkQueryTokens(b *testing.B) {
	s, err := Open(b.Context(), filepath.Join(b.TempDir(), "s.db"), Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	words := queryWords("When did the sisters plan their summer trip to the mountains with the dog?")
	for _, cold := range []bool{true, false} {
		name := "cached"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if cold {
					s.toks.mu.Lock()
					s.toks.m = nil
					s.toks.mu.Unlock()
				}
				err := s.read(b.Context(), "bench", func(tx *readTx) error {
					_, err := s.queryTokens(b.Context(), tx, words)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
