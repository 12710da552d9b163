package mem

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentmemory/agentmemory/store"
)

// cloneRecord copies r, its body included, with its time in UTC.
func cloneRecord(r *store.Record) *store.Record {
	c := *r
	c.Time = r.Time.UTC()
	c.Body = slices.Clone(r.Body)
	return &c
}

// PutRecord implements store.Records.
func (s *Store) PutRecord(ctx context.Context, userID string, r *store.Record) error {
	if err := s.begin(ctx, userID); err != nil {
		return err
	}
	if err := s.v.Record(r); err != nil {
		return err
	}
	c := cloneRecord(r)
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	u := s.userForWrite(userID)
	old, ok := u.records[r.ID]
	switch {
	case r.ETag == store.CreateOnly && ok:
		return fmt.Errorf("mem: record %q already exists: %w", r.ID, store.ErrConflict)
	case r.ETag == store.CreateOnly, r.ETag == "":
	case !ok:
		return fmt.Errorf("mem: record %q no longer exists: %w", r.ID, store.ErrConflict)
	case old.ETag != r.ETag:
		return fmt.Errorf("mem: record %q changed since read: %w", r.ID, store.ErrConflict)
	}
	s.etags++
	c.ETag = strconv.FormatUint(s.etags, 10)
	u.records[c.ID] = c
	r.ETag = c.ETag
	return nil
}

// GetRecord implements store.Records.
func (s *Store) GetRecord(ctx context.Context, userID, id string) (*store.Record, error) {
	return get(ctx, s, userID, "record", id,
		func(u *userDocs) map[string]*store.Record { return u.records },
		func(*store.Record) bool { return true },
		cloneRecord)
}

// ListRecords implements store.Records.
func (s *Store) ListRecords(ctx context.Context, userID string, f store.RecordFilter) ([]*store.Record, error) {
	if err := s.v.RecordFilter(f); err != nil {
		return nil, err
	}
	return list(ctx, s, userID, f.Limit, "",
		func(u *userDocs) map[string]*store.Record { return u.records },
		func(r *store.Record) bool {
			return strings.HasPrefix(r.ID, f.Prefix) &&
				(f.State == "" || r.Active == (f.State == store.RecordActive)) &&
				(f.Until.IsZero() || r.Time.Before(f.Until))
		},
		func(a, b *store.Record) int {
			return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(b.ID, a.ID))
		},
		cloneRecord, false)
}

// DeleteRecord implements store.Records.
func (s *Store) DeleteRecord(ctx context.Context, userID, id string) error {
	if err := s.begin(ctx, userID); err != nil {
		return err
	}
	if err := store.CheckID("record id", id); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	u := s.user(userID)
	if u == nil || u.records[id] == nil {
		return fmt.Errorf("mem: record %q: %w", id, store.ErrNotFound)
	}
	delete(u.records, id)
	return nil
}
