package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentmemory/agentmemory/store"
)

// AppendTurn implements store.Store: one write transaction, so the number
// it assigns is unique across processes too.
func (s *Store) AppendTurn(ctx context.Context, userID string, t *store.Turn) error {
	if err := s.check(userID); err != nil {
		return err
	}
	if err := s.v.Turn(userID, t); err != nil {
		return err
	}
	seq := t.Seq
	err := s.write(ctx, "append turn", userID, func(tx *writeTx) ([]change, error) {
		var have int
		err := tx.QueryRowContext(ctx, turnSeqSQL, userID, t.SessionID, t.ID).Scan(&have)
		switch {
		case err == nil:
			seq = have
			return nil, nil
		case !errors.Is(err, sql.ErrNoRows):
			return nil, err
		}
		var last int
		if err := tx.QueryRowContext(ctx, lastSeqSQL, userID, t.SessionID).Scan(&last); err != nil {
			return nil, err
		}
		seq = max(t.Seq, last+1)
		c := *t
		c.Seq = seq
		b, err := json.Marshal(&c)
		if err != nil {
			return nil, fmt.Errorf("%w: turn %s: %v", store.ErrInvalid, t.ID, err)
		}
		_, err = tx.ExecContext(ctx, insertTurnSQL, userID, t.SessionID, seq, t.ID, string(b))
		return nil, err
	})
	if err != nil {
		return err
	}
	t.Seq = seq
	return nil
}

// ListTurns implements store.Store.
func (s *Store) ListTurns(ctx context.Context, userID, sessionID string, from int) ([]*store.Turn, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	if err := store.CheckID("session id", sessionID); err != nil {
		return nil, err
	}
	out := []*store.Turn{}
	err := s.read(ctx, "list turns", func(tx *readTx) error {
		rows, err := tx.QueryContext(ctx, `SELECT doc FROM turns WHERE user_id = ? AND session_id = ? AND seq >= ? ORDER BY seq`,
			userID, sessionID, from)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var b []byte
			if err := rows.Scan(&b); err != nil {
				return err
			}
			t := new(store.Turn)
			if err := json.Unmarshal(b, t); err != nil {
				return fmt.Errorf("decode turn of session %s: %w", sessionID, err)
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	return out, err
}
