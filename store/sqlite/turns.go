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
	var seq int
	err := s.write(ctx, "append turn", userID, func(tx *writeTx) ([]change, error) {
		var err error
		seq, err = appendTurnRow(ctx, tx, userID, t)
		return nil, err
	})
	if err != nil {
		return err
	}
	t.Seq = seq
	return nil
}

// appendTurnRow appends t, checked, to its session in tx and returns its
// number: that of the turn with t's ID if the session holds one already,
// else one more than the session's last, or t.Seq when that is larger.
func appendTurnRow(ctx context.Context, tx *writeTx, userID string, t *store.Turn) (int, error) {
	var have int
	err := tx.QueryRowContext(ctx, turnSeqSQL, userID, t.SessionID, t.ID).Scan(&have)
	switch {
	case err == nil:
		return have, nil
	case !errors.Is(err, sql.ErrNoRows):
		return 0, err
	}
	var last int
	if err := tx.QueryRowContext(ctx, lastSeqSQL, userID, t.SessionID).Scan(&last); err != nil {
		return 0, err
	}
	c := *t
	c.Seq = max(t.Seq, last+1)
	b, err := json.Marshal(&c)
	if err != nil {
		return 0, fmt.Errorf("%w: turn %s: %v", store.ErrInvalid, t.ID, err)
	}
	if _, err := tx.ExecContext(ctx, insertTurnSQL, userID, t.SessionID, c.Seq, t.ID, string(b)); err != nil {
		return 0, err
	}
	return c.Seq, nil
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
