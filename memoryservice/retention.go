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

// updateRef is one update of a scope, as the scope's record lists it.
type updateRef struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
}

// maxScopeAttempts bounds the retries of a scope record's write on an
// ETag conflict (another process writing the same scope).
const maxScopeAttempts = 5

// changeScope applies change to the record of a scope of memory store
// name and writes it under the ETag it was read with, retrying on a
// conflict. A scope with no record gets one only when create is set.
// change reports whether there is anything to write.
func (s *Service) changeScope(ctx context.Context, name, scope string, create bool, change func(*scopeRecord) bool) error {
	id := scopeDocID(name, scope)
	for range maxScopeAttempts {
		rec := scopeRecord{Store: name, Scope: scope}
		etag, err := s.getRecord(ctx, id, &rec)
		switch {
		case errors.Is(err, store.ErrNotFound):
			if !create {
				return nil
			}
			etag = store.CreateOnly
		case err != nil:
			return err
		}
		if !change(&rec) {
			return nil
		}
		err = s.putRecord(ctx, id, etag, s.cfg.Now(), false, rec)
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("memoryservice: scope record of %q in %q: %w", scope, name, store.ErrConflict)
}

// indexUpdate lists update id in its scope's record (made if the scope has
// none), before the update's own record is written: a crash between the
// two leaves a name of nothing, which the sweep drops, never a record that
// deleting the scope would not find.
func (s *Service) indexUpdate(ctx context.Context, name, scope, id string, created time.Time) error {
	return s.changeScope(ctx, name, scope, true, func(sc *scopeRecord) bool {
		sc.Updates = append(sc.Updates, updateRef{ID: id, CreatedAt: created})
		return true
	})
}

// deleteScopeUpdates removes the update records a scope's record lists,
// dropping a queued one from the schedule. The caller holds the scope's
// accept and run locks.
func (s *Service) deleteScopeUpdates(ctx context.Context, name, scope string) error {
	userID := UserID(name, scope)
	s.mu.Lock()
	if sc := s.pending[userID]; sc != nil {
		sc.timer.Stop()
		delete(s.pending, userID)
	}
	s.mu.Unlock()
	var sc scopeRecord
	_, err := s.getRecord(ctx, scopeDocID(name, scope), &sc)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, ref := range sc.Updates {
		if err := s.deleteRecord(ctx, updateDocID(ref.ID)); err != nil {
			return err
		}
	}
	return nil
}

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
