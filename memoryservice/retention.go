package memoryservice

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// DefaultUpdateRetention is how long a finished update's record is kept
// when Config.UpdateRetention is zero.
const DefaultUpdateRetention = 24 * time.Hour

// retireUpdates deletes the records of a scope's updates that finished
// (completed, failed or superseded) longer than Config.UpdateRetention
// ago. Only the scope's finished updates created before that time are
// read: none younger can have finished before it. Older updates, which
// the scope's record lists, are retired likewise and dropped from it.
func (s *Service) retireUpdates(ctx context.Context, sc *scopeRecord) error {
	cut := s.cfg.Now().Add(-s.cfg.UpdateRetention)
	part := updatesUser(scopeHash(sc.Store, sc.Scope))
	docs, err := s.listRecords(ctx, part, store.RecordFilter{Prefix: "update.", State: store.RecordFinished, Until: cut})
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range docs {
		if _, err := s.retire(ctx, recKey{part, d.ID}, d, cut); err != nil {
			errs = append(errs, err)
		}
	}
	old := 0
	for _, ref := range sc.Updates {
		if ref.CreatedAt.Before(cut) {
			old++
		}
	}
	if old == 0 {
		return errors.Join(errs...)
	}
	unlock := s.lockScope("accept", UserID(sc.Store, sc.Scope))
	defer unlock()
	err = s.changeScope(ctx, sc.Store, sc.Scope, func(cur *scopeRecord) bool {
		kept := cur.Updates[:0]
		for _, ref := range cur.Updates {
			if !ref.CreatedAt.Before(cut) {
				kept = append(kept, ref)
				continue
			}
			gone, err := s.retire(ctx, updateKey(ref.ID), nil, cut)
			if err != nil {
				errs = append(errs, err)
			}
			if !gone {
				kept = append(kept, ref)
			}
		}
		changed := len(kept) != len(cur.Updates)
		cur.Updates = kept
		return changed
	})
	return errors.Join(append(errs, err)...)
}

// retire deletes update record k (doc, if read already) if it finished
// before cut, and reports whether the record is gone.
func (s *Service) retire(ctx context.Context, k recKey, doc *store.Record, cut time.Time) (bool, error) {
	if doc == nil {
		var err error
		doc, err = s.rec.GetRecord(ctx, k.user, k.id)
		if errors.Is(err, store.ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("read update record %s to retire: %w", k.id, err)
		}
	}
	var rec updateRecord
	if _, err := decodeRecord(doc, &rec); err != nil {
		s.log.ErrorContext(ctx, "memoryservice: unreadable update record kept", "id", k.id, "err", err)
		return false, err
	}
	if rec.active() || !rec.finished().Before(cut) {
		return false, nil
	}
	if err := s.deleteRecord(ctx, k); err != nil {
		return false, fmt.Errorf("delete retired update record %s: %w", k.id, err)
	}
	return true, nil
}
