package store

import (
	"fmt"

	"github.com/agentmemory/agentmemory/internal/ident"
)

// Limits every backend enforces, so that a document valid in one is valid
// in all (Cosmos DB caps an item at 2 MB).
const (
	// MaxDocumentBytes caps a document's JSON encoding.
	MaxDocumentBytes = 1 << 20
	// MaxTopK caps SearchRequest.TopK.
	MaxTopK = 1000
	// MaxQueryBytes caps SearchRequest.Text.
	MaxQueryBytes = 8 << 10
	// MaxIDBytes caps a user, session or document id, in bytes of UTF-8.
	MaxIDBytes = ident.MaxLen
)

// CheckUserID returns an error wrapping ErrInvalid unless userID is a usable
// user id (see package ident's rule: not blank, at most 255 bytes, no
// control characters, '/', '\\', '?' or '#'), and not DeletionLogPartition.
func CheckUserID(userID string) error {
	if err := ident.CheckUser(userID); err != nil {
		return fmt.Errorf("%w: user id: %v", ErrInvalid, err)
	}
	return nil
}

// CheckID returns an error wrapping ErrInvalid unless id is a usable
// document id; what names the id in the message.
func CheckID(what, id string) error {
	if err := ident.Check(id); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalid, what, err)
	}
	return nil
}
