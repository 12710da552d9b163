package memoryservice

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentmemory/agentmemory/store"
)

// migrate moves the records an earlier version kept under RegistryUserID
// into their partitions: each scope record into its store's
// (scopesUser), keeping the list of the scope's update records, which
// stay where they are until the sweep retires them. A record is copied
// (create-only) before the old one is deleted, so a migration cut short
// runs again cleanly: a copy made already is kept as it is. A record that
// cannot be read stays, and is logged.
func (s *Service) migrate(ctx context.Context) error {
	docs, err := s.listRecords(ctx, RegistryUserID, store.RecordFilter{Prefix: "scope."})
	if err != nil {
		return fmt.Errorf("memoryservice: migrate scope records: %w", err)
	}
	moved := 0
	for _, d := range docs {
		var sc scopeRecord
		if _, err := decodeRecord(d, &sc); err != nil || checkName("store", sc.Store) != nil {
			s.log.ErrorContext(ctx, "memoryservice: unreadable scope record left unmigrated", "id", d.ID, "err", err)
			continue
		}
		err := s.putRecord(ctx, scopeKey(sc.Store, sc.Scope), store.CreateOnly, d.Time, false, sc)
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("memoryservice: migrate scope record %s: %w", d.ID, err)
		}
		if err := s.deleteRecord(ctx, recKey{RegistryUserID, d.ID}); err != nil {
			return fmt.Errorf("memoryservice: migrate scope record %s: %w", d.ID, err)
		}
		moved++
	}
	if moved > 0 {
		s.log.InfoContext(ctx, "memoryservice: scope records moved to their memory stores' partitions", "records", moved)
	}
	return nil
}
