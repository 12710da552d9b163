package store

import (
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

// UserState validates doc for userID, filling an empty UserID.
func (v Validator) UserState(userID string, doc *UserState) error {
	if doc == nil {
		return fmt.Errorf("%w: nil user state", ErrInvalid)
	}
	if err := owner(userID, &doc.UserID); err != nil {
		return err
	}
	if doc.LeaseOwner != "" {
		if err := CheckID("lease owner", doc.LeaseOwner); err != nil {
			return err
		}
	}
	if doc.SinceReconcile < 0 || doc.SinceProfile < 0 {
		return fmt.Errorf("%w: user state: negative counter", ErrInvalid)
	}
	return size("user state", doc)
}

// UserStateID is the document id a backend may give the user state where
// it keeps it beside the user's sessions; it is refused as a session id.
const UserStateID = "agentmemory.user-state"
