package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentmemory/agentmemory/store"
)

// GetUserState implements store.Store.
func (s *Store) GetUserState(ctx context.Context, userID string) (*store.UserState, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	var doc *store.UserState
	err := s.read(ctx, "get user state", func(tx *readTx) error {
		var b []byte
		var etag string
		err := tx.QueryRowContext(ctx, `SELECT doc, etag FROM user_state WHERE user_id = ?`, userID).Scan(&b, &etag)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: user state of %s", store.ErrNotFound, userID)
		}
		if err != nil {
			return err
		}
		doc = new(store.UserState)
		if err := json.Unmarshal(b, doc); err != nil {
			return fmt.Errorf("decode user state: %w", err)
		}
		doc.ETag = etag
		return nil
	})
	return doc, err
}

// PutUserState implements store.Store; the ETag check and the write run
// under the database's write lock, atomic across processes.
func (s *Store) PutUserState(ctx context.Context, userID string, doc *store.UserState) error {
	if err := s.check(userID); err != nil {
		return err
	}
	if err := s.v.UserState(userID, doc); err != nil {
		return err
	}
	c := *doc
	c.ETag = ""
	b, err := json.Marshal(&c)
	if err != nil {
		return fmt.Errorf("%w: user state: %v", store.ErrInvalid, err)
	}
	etag := rand.Text()
	err = s.write(ctx, "put user state", userID, func(tx *writeTx) ([]change, error) {
		if doc.ETag != "" {
			var cur string
			err := tx.QueryRowContext(ctx, userStateETagSQL, userID).Scan(&cur)
			switch {
			case doc.ETag == store.CreateOnly && err == nil:
				return nil, fmt.Errorf("%w: user state of %s already exists", store.ErrConflict, userID)
			case doc.ETag == store.CreateOnly && errors.Is(err, sql.ErrNoRows):
			case errors.Is(err, sql.ErrNoRows):
				return nil, fmt.Errorf("%w: user state of %s no longer exists", store.ErrConflict, userID)
			case err != nil:
				return nil, err
			case cur != doc.ETag:
				return nil, fmt.Errorf("%w: user state of %s changed", store.ErrConflict, userID)
			}
		}
		_, err := tx.ExecContext(ctx, upsertUserState, userID, etag, string(b))
		return nil, err
	})
	if err != nil {
		return err
	}
	doc.ETag = etag
	return nil
}
