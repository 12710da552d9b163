package mem

import (
	"context"
	"fmt"
	"strconv"

	"github.com/agentmemory/agentmemory/store"
)

// GetUserState implements store.Store.
func (s *Store) GetUserState(ctx context.Context, userID string) (*store.UserState, error) {
	if err := s.begin(ctx, userID); err != nil {
		return nil, err
	}
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	if u := s.user(userID); u != nil && u.state != nil {
		c := *u.state
		return &c, nil
	}
	return nil, fmt.Errorf("mem: user state of %q: %w", userID, store.ErrNotFound)
}

// PutUserState implements store.Store.
func (s *Store) PutUserState(ctx context.Context, userID string, doc *store.UserState) error {
	if err := s.begin(ctx, userID); err != nil {
		return err
	}
	if err := s.v.UserState(userID, doc); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	u := s.userForWrite(userID)
	switch {
	case doc.ETag == store.CreateOnly && u.state != nil:
		return fmt.Errorf("mem: user state of %q already exists: %w", userID, store.ErrConflict)
	case doc.ETag == store.CreateOnly, doc.ETag == "":
	case u.state == nil:
		return fmt.Errorf("mem: user state of %q no longer exists: %w", userID, store.ErrConflict)
	case u.state.ETag != doc.ETag:
		return fmt.Errorf("mem: user state of %q changed since read: %w", userID, store.ErrConflict)
	}
	s.etags++
	c := *doc
	c.ETag = strconv.FormatUint(s.etags, 10)
	u.state = &c
	doc.ETag = c.ETag
	return nil
}
