package mem

import (
	"context"

	"github.com/agentmemory/agentmemory/store"
)

// AppendTurn implements store.Store.
func (s *Store) AppendTurn(ctx context.Context, userID string, t *store.Turn) error {
	if err := s.begin(ctx, userID); err != nil {
		return err
	}
	if err := s.v.Turn(userID, t); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	u := s.userForWrite(userID)
	turns := u.turns[t.SessionID]
	for _, have := range turns {
		if have.ID == t.ID {
			t.Seq = have.Seq
			return nil
		}
	}
	if n := len(turns); n > 0 {
		t.Seq = max(t.Seq, turns[n-1].Seq+1)
	} else {
		t.Seq = max(t.Seq, 1)
	}
	c := cloneTurn(*t)
	u.turns[t.SessionID] = append(turns, &c)
	return nil
}

// ListTurns implements store.Store.
func (s *Store) ListTurns(ctx context.Context, userID, sessionID string, from int) ([]*store.Turn, error) {
	if err := s.begin(ctx, userID); err != nil {
		return nil, err
	}
	if err := store.CheckID("session id", sessionID); err != nil {
		return nil, err
	}
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	out := []*store.Turn{}
	if u := s.user(userID); u != nil {
		for _, t := range u.turns[sessionID] {
			if t.Seq >= from {
				c := cloneTurn(*t)
				out = append(out, &c)
			}
		}
	}
	return out, nil
}
