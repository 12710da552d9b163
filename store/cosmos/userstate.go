package cosmos

import (
	"context"
	"fmt"
	"net/http"

	"github.com/agentmemory/agentmemory/store"
)

// The user state lives in the sessions container, in the user's
// partition, as the item store.UserStateID marked docTypeUserState.
const docTypeUserState = "user_state"

type wireUserState struct {
	ID      string `json:"id"`
	DocType string `json:"doc_type"`
	*store.UserState
	ETag string `json:"_etag,omitempty"` // shadows the document's: never sent
}

// GetUserState implements store.Store with one point read.
func (s *Store) GetUserState(ctx context.Context, userID string) (*store.UserState, error) {
	if err := s.check(userID); err != nil {
		return nil, err
	}
	b, etag, err := s.read(ctx, store.KindSessionSummary, userID, store.UserStateID)
	if err != nil {
		return nil, mapErr("get user state", err)
	}
	d, err := decode[store.UserState](b)
	if err != nil {
		return nil, err
	}
	d.ETag = etag
	return d, nil
}

// PutUserState implements store.Store with one write: an upsert, a
// create-only write or a conditional replace.
func (s *Store) PutUserState(ctx context.Context, userID string, doc *store.UserState) error {
	if err := s.check(userID); err != nil {
		return err
	}
	if err := s.v.UserState(userID, doc); err != nil {
		return err
	}
	body, err := marshal("user state", wireUserState{ID: store.UserStateID, DocType: docTypeUserState, UserState: doc})
	if err != nil {
		return err
	}
	var etag string
	switch doc.ETag {
	case "":
		etag, err = s.upsert(ctx, store.KindSessionSummary, userID, body)
	case store.CreateOnly:
		etag, err = s.create(ctx, store.KindSessionSummary, userID, body)
		if statusOf(err) == http.StatusConflict {
			return fmt.Errorf("%w: put user state: already exists: %w", store.ErrConflict, err)
		}
	default:
		etag, err = s.replace(ctx, store.KindSessionSummary, userID, store.UserStateID, body, doc.ETag)
		switch statusOf(err) {
		case http.StatusNotFound:
			return fmt.Errorf("%w: put user state: no longer exists: %w", store.ErrConflict, err)
		case http.StatusPreconditionFailed:
			return fmt.Errorf("%w: put user state: stale ETag: %w", store.ErrConflict, err)
		}
	}
	if err != nil {
		return mapWriteErr("put user state", err)
	}
	doc.ETag = etag
	return nil
}
