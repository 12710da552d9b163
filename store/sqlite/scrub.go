package sqlite

import (
	"context"
	"fmt"
)

// Scrub rewrites what a deletion leaves readable in the file: the
// full-text segments, which keep a deleted document's words until a merge
// rewrites them, and the WAL, which keeps old pages until a checkpoint
// (freed pages are zeroed as they are freed: secure_delete is on).
// DeleteUser scrubs by itself; call Scrub after deleting single documents
// or sessions that must not be recoverable from the file. Its cost grows
// with the full-text index of the whole file.
func (s *Store) Scrub(ctx context.Context) error {
	err := s.write(ctx, "scrub", "", func(tx *writeTx) ([]change, error) {
		return nil, optimizeFTS(ctx, tx)
	})
	if err != nil {
		return err
	}
	return s.checkpoint(ctx, "scrub")
}

// optimizeFTS merges every full-text index into one segment, dropping the
// terms of deleted rows.
func optimizeFTS(ctx context.Context, tx txn) error {
	for _, fts := range []string{"interactions_fts", "insights_fts", "sessions_fts"} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+fts+` (`+fts+`) VALUES ('optimize')`); err != nil {
			return fmt.Errorf("%s: optimize: %w", fts, err)
		}
	}
	return nil
}
