package cosmos

import (
	"context"

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
	etag, err := s.putETag(ctx, userID, store.UserStateID, body, doc.ETag, "put user state")
	if err != nil {
		return err
	}
	doc.ETag = etag
	return nil
}
