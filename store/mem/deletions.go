package mem

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

// The deletion log is a slice under the store's mutex, outside every
// user's partition: DeleteUser leaves it, Close drops it.

func (s *Store) logBegin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mem: %w", err)
	}
	return nil
}

func cloneDeletion(r *store.DeletionRecord) *store.DeletionRecord {
	c := *r
	c.At = r.At.UTC()
	c.Items = slices.Clone(r.Items) // DeletedItem holds only strings and ints
	return &c
}

// AppendDeletion implements store.DeletionLog.
func (s *Store) AppendDeletion(ctx context.Context, rec *store.DeletionRecord) error {
	if err := s.logBegin(ctx); err != nil {
		return err
	}
	if err := s.v.DeletionRecord(rec); err != nil {
		return err
	}
	c := cloneDeletion(rec)
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if want := int64(len(s.log)) + 1; rec.Seq != want {
		return fmt.Errorf("mem: append deletion %d: the next number is %d: %w", rec.Seq, want, store.ErrConflict)
	}
	s.log = append(s.log, c)
	return nil
}

// ListDeletions implements store.DeletionLog.
func (s *Store) ListDeletions(ctx context.Context, after int64, limit int) ([]*store.DeletionRecord, error) {
	if err := s.logBegin(ctx); err != nil {
		return nil, err
	}
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	from := int(min(max(after, 0), int64(len(s.log))))
	recs := s.log[from:]
	if limit > 0 && len(recs) > limit {
		recs = recs[:limit]
	}
	out := make([]*store.DeletionRecord, len(recs))
	for i, r := range recs {
		out[i] = cloneDeletion(r)
	}
	return out, nil
}

// LastDeletion implements store.DeletionLog.
func (s *Store) LastDeletion(ctx context.Context) (*store.DeletionRecord, error) {
	if err := s.logBegin(ctx); err != nil {
		return nil, err
	}
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	if len(s.log) == 0 {
		return nil, fmt.Errorf("mem: last deletion: the log is empty: %w", store.ErrNotFound)
	}
	return cloneDeletion(s.log[len(s.log)-1]), nil
}

// EraseDeletionNames implements store.DeletionLog.
func (s *Store) EraseDeletionNames(ctx context.Context, subject string) (int, error) {
	if err := s.logBegin(ctx); err != nil {
		return 0, err
	}
	if subject == "" {
		return 0, fmt.Errorf("%w: erase deletion names: empty subject", store.ErrInvalid)
	}
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	n := 0
	for i, r := range s.log {
		if r.Subject != subject || !driver.HasDeletionNames(r) {
			continue
		}
		// Readers hold clones; replace the record rather than edit it.
		c := cloneDeletion(r)
		driver.EraseNames(c)
		s.log[i] = c
		n++
	}
	return n, nil
}
