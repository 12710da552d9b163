package store

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/internal/ident"
)

// DeletionLogPartition is the partition key value under which a backend
// that partitions by user id (Cosmos DB) keeps the deletion log. It is
// refused as a user id everywhere (CheckUserID), so no user's call can
// read, write or delete the log.
const DeletionLogPartition = ident.ReservedUserID

// The actions of a DeletedItem.
const (
	ActionDeleted   = "deleted"
	ActionRewritten = "rewritten"
)

// MaxReasonBytes caps DeletionRecord.Reason.
const MaxReasonBytes = 64

// DeletionRecord validates rec before AppendDeletion: Seq from 1, At set,
// Hash and Subject present, a short Reason without control characters,
// valid user and item ids where given, every item of a known kind (one of
// Kinds or KindTurn) with a known action, a Count of at least 1 and an
// IDHash, and an encoding of at most MaxDocumentBytes.
func (v Validator) DeletionRecord(rec *DeletionRecord) error {
	if rec == nil {
		return fmt.Errorf("%w: nil deletion record", ErrInvalid)
	}
	if rec.Seq < 1 {
		return fmt.Errorf("%w: deletion record: seq %d, numbers start at 1", ErrInvalid, rec.Seq)
	}
	what := fmt.Sprintf("deletion record %d", rec.Seq)
	switch {
	case rec.At.IsZero():
		return fmt.Errorf("%w: %s: no time", ErrInvalid, what)
	case rec.Hash == "":
		return fmt.Errorf("%w: %s: no hash", ErrInvalid, what)
	case rec.Subject == "":
		return fmt.Errorf("%w: %s: no subject", ErrInvalid, what)
	case rec.Reason == "":
		return fmt.Errorf("%w: %s: no reason", ErrInvalid, what)
	case len(rec.Reason) > MaxReasonBytes:
		return fmt.Errorf("%w: %s: reason is %d bytes, at most %d", ErrInvalid, what, len(rec.Reason), MaxReasonBytes)
	case !utf8.ValidString(rec.Reason):
		return fmt.Errorf("%w: %s: reason is not valid UTF-8", ErrInvalid, what)
	}
	for _, r := range rec.Reason {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: %s: reason %q contains a control character", ErrInvalid, what, rec.Reason)
		}
	}
	if rec.UserID != "" {
		if err := CheckUserID(rec.UserID); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	for i, it := range rec.Items {
		if !it.Kind.Valid() && it.Kind != KindTurn {
			return fmt.Errorf("%w: %s: item %d: unknown kind %q", ErrInvalid, what, i, it.Kind)
		}
		if it.Action != ActionDeleted && it.Action != ActionRewritten {
			return fmt.Errorf("%w: %s: item %d: action %q, want %q or %q", ErrInvalid, what, i, it.Action, ActionDeleted, ActionRewritten)
		}
		if it.Count < 1 {
			return fmt.Errorf("%w: %s: item %d: count %d, at least 1", ErrInvalid, what, i, it.Count)
		}
		if it.IDHash == "" {
			return fmt.Errorf("%w: %s: item %d: no id hash", ErrInvalid, what, i)
		}
		if it.ID != "" {
			if err := CheckID(fmt.Sprintf("%s: item %d id", what, i), it.ID); err != nil {
				return err
			}
		}
	}
	return size(what, rec)
}

// SessionToDelete checks the session id of DeleteSession.
func SessionToDelete(sessionID string) error {
	if err := CheckID("session id", sessionID); err != nil {
		return err
	}
	if sessionID == UserStateID {
		return fmt.Errorf("%w: session id %q is reserved for the user state", ErrInvalid, sessionID)
	}
	return nil
}

// HasDeletionNames reports whether rec still holds a clear name: its UserID
// or an item's ID.
func HasDeletionNames(rec *DeletionRecord) bool {
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
func EraseNames(rec *DeletionRecord) {
	rec.UserID = ""
	for i := range rec.Items {
		rec.Items[i].ID = ""
	}
}
