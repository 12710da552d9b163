package memoryservice

import (
	"context"
	"errors"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// DefaultUpdateRetention is how long a finished update's record is kept
// when Config.UpdateRetention is zero.
const DefaultUpdateRetention = 24 * time.Hour

// retireUpdates deletes the records of a scope's updates that finished
// (completed, failed or superseded) longer than Config.UpdateRetention
// ago, and drops them, and names of records that are gone, from the
// scope's record. Only updates created before that time are read: none
// younger can have finished before it.
func (s *Service) retireUpdates(ctx context.Context, sc *scopeRecord) error {
	cut := s.cfg.Now().Add(-s.cfg.UpdateRetention)
	old := 0
	for _, ref := range sc.Updates {
		if ref.CreatedAt.Before(cut) {
			old++
		}
	}
	if old == 0 {
		return nil
	}
	unlock := s.lockScope("accept", UserID(sc.Store, sc.Scope))
	defer unlock()
	return s.changeScope(ctx, sc.Store, sc.Scope, false, func(cur *scopeRecord) bool {
		kept := cur.Updates[:0]
		for _, ref := range cur.Updates {
			if !ref.CreatedAt.Before(cut) || !s.retire(ctx, ref.ID, cut) {
				kept = append(kept, ref)
			}
		}
		changed := len(kept) != len(cur.Updates)
		cur.Updates = kept
		return changed
	})
}

// retire deletes update id's record if it finished before cut, and
// reports whether the record is gone.
func (s *Service) retire(ctx context.Context, id string, cut time.Time) bool {
	doc, err := s.st.GetSession(ctx, RegistryUserID, updateDocID(id))
	if errors.Is(err, store.ErrNotFound) {
		return true
	}
	if err != nil {
		s.log.WarnContext(ctx, "memoryservice: reading an update record to retire", "update", id, "err", err)
		return false
	}
	var rec updateRecord
	if _, err := s.getRecordFrom(doc, &rec); err != nil {
		s.log.WarnContext(ctx, "memoryservice: unreadable update record kept", "update", id, "err", err)
		return false
	}
	// A finished record is not written again: its document's last write
	// is when it finished.
	if rec.active() || !doc.UpdatedAt.Before(cut) {
		return false
	}
	if err := s.deleteRecord(ctx, doc.ID); err != nil {
		s.log.WarnContext(ctx, "memoryservice: deleting a retired update record", "update", id, "err", err)
		return false
	}
	return true
}
