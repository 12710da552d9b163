package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// UserState is a user's small coordination document, shared by every
// process on the store: who holds the lease on the user's background work
// (reflection, reconciliation, the profile), and the reflection counters
// that trigger reconciliation and profile updates. A user has at most one.
type UserState struct {
	UserID string `json:"user_id"`
	// LeaseOwner holds the lease until LeaseUntil; empty when free. A lease
	// past LeaseUntil is free (its holder died or hung).
	LeaseOwner string    `json:"lease_owner,omitempty"`
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	// SinceReconcile and SinceProfile count the session reflections that
	// stored insights since the last reconciliation and the last profile
	// update.
	SinceReconcile int       `json:"since_reconcile"`
	SinceProfile   int       `json:"since_profile"`
	UpdatedAt      time.Time `json:"updated_at"`
	// ETag is set by the store on every read and write; PutUserState
	// follows PutSession's rules for it (CreateOnly, or the stored ETag).
	ETag string `json:"_etag,omitempty"`
}

// UserStateID is the document id a backend may give the user state where
// it keeps it beside the user's sessions; it is refused as a session id.
const UserStateID = "agentmemory.user-state"

// maxUserStateAttempts bounds UpdateUserState's read-change-write loop.
const maxUserStateAttempts = 8

// UpdateUserState applies change to the user's state (a new, empty one when
// the user has none) and writes it guarded by the ETag it was read with,
// reading again and reapplying change on a conflict. change reports whether
// there is anything to write; UpdateUserState reports whether it wrote.
// After maxUserStateAttempts conflicts in a row it fails with ErrConflict.
func UpdateUserState(ctx context.Context, st UserStates, userID string, change func(*UserState) (bool, error)) (bool, error) {
	for range maxUserStateAttempts {
		doc, err := st.GetUserState(ctx, userID)
		switch {
		case errors.Is(err, ErrNotFound):
			doc = &UserState{ETag: CreateOnly}
		case err != nil:
			return false, err
		}
		write, err := change(doc)
		if err != nil || !write {
			return false, err
		}
		err = st.PutUserState(ctx, userID, doc)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, ErrConflict) {
			return false, err
		}
	}
	return false, fmt.Errorf("%w: user state of %s still changing after %d attempts", ErrConflict, userID, maxUserStateAttempts)
}
