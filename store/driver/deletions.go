package driver

import (
	"fmt"

	"github.com/agentmemory/agentmemory/store"
)

// SessionToDelete checks the session id of DeleteSession.
func SessionToDelete(sessionID string) error {
	if err := store.CheckID("session id", sessionID); err != nil {
		return err
	}
	if sessionID == store.UserStateID {
		return fmt.Errorf("%w: session id %q is reserved for the user state", store.ErrInvalid, sessionID)
	}
	return nil
}

// HasDeletionNames reports whether rec still holds a clear name: its UserID
// or an item's ID.
func HasDeletionNames(rec *store.DeletionRecord) bool {
	if rec.UserID != "" {
		return true
	}
	for _, it := range rec.Items {
		if it.ID != "" {
			return true
		}
	}
	return false
}

// EraseNames blanks rec's clear names in place (what EraseDeletionNames
// does to each record of the subject), leaving the chained part as it was.
func EraseNames(rec *store.DeletionRecord) {
	rec.UserID = ""
	for i := range rec.Items {
		rec.Items[i].ID = ""
	}
}
