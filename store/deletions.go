package store

import (
	"context"
	"time"

	"github.com/agentmemory/agentmemory/internal/ident"
)

// DeletionRecord is one entry of a store's deletion log: what a forget call
// removed, when and why, never the removed content. The log spans users;
// package erasure chains its records by hash and verifies the chain.
//
// The chained part names the user and the documents only by keyed hashes
// (Subject, DeletedItem.IDHash). The clear part (UserID, DeletedItem.ID) is
// kept beside it for an operator's reading and is blanked by
// EraseDeletionNames when the user is forgotten whole; blanking it leaves
// the chain intact.
type DeletionRecord struct {
	// Seq numbers the records from 1 without gaps, in append order.
	Seq int64 `json:"seq"`
	// At is when the deletion was made.
	At time.Time `json:"at"`
	// Reason says why ("forget_insight", "forget_session", "forget_user",
	// or a caller's own); it names no content.
	Reason string `json:"reason"`
	// Subject is the keyed hash of the user id.
	Subject string `json:"subject"`
	// Items are the documents removed or rewritten.
	Items []DeletedItem `json:"items,omitempty"`
	// Prev is the Hash of the record numbered Seq-1 ("" for the first), and
	// Hash the hash of this record's chained part and Prev.
	Prev string `json:"prev"`
	Hash string `json:"hash"`
	// Key is set on the first record only: it holds what the log's keyed
	// hashes are checked with (see package erasure).
	Key string `json:"key,omitempty"`

	// UserID is the clear user id, "" once EraseDeletionNames ran for
	// Subject. It is not part of the chain.
	UserID string `json:"user_id,omitempty"`
}

// DeletedItem is one document named by a DeletionRecord.
type DeletedItem struct {
	// Kind is the document's kind (KindTurn for a session's turns).
	Kind Kind `json:"kind"`
	// Action is "deleted" or "rewritten" (a derived document made anew
	// without what was forgotten, such as the long-term profile).
	Action string `json:"action"`
	// Count is how many records the item stands for (a session's turns are
	// one item); 1 for a single document.
	Count int `json:"count"`
	// IDHash is the keyed hash of the document id (chained).
	IDHash string `json:"id_hash"`
	// ID is the clear document id, "" once erased (not chained).
	ID string `json:"id,omitempty"`
}

// DeletionLog is the part of a store that keeps the deletion log. The log
// holds no user content (keyed hashes, kinds, counts, times and reasons)
// and is the one thing a store keeps across users: its calls take no user
// id, and EraseDeletionNames is how a user's clear names leave it.
type DeletionLog interface {
	// AppendDeletion stores rec as the log's next record. It fails with
	// ErrConflict unless rec.Seq is one more than the last stored Seq (1
	// for an empty log), so concurrent appenders serialise by retrying on
	// a fresh read, and with ErrInvalid for a record without Hash or
	// Subject, or larger than MaxDocumentBytes.
	AppendDeletion(ctx context.Context, rec *DeletionRecord) error
	// ListDeletions returns up to limit records with Seq > after, in
	// order; limit <= 0 means all of them.
	ListDeletions(ctx context.Context, after int64, limit int) ([]*DeletionRecord, error)
	// LastDeletion returns the record with the highest Seq, or ErrNotFound
	// for an empty log.
	LastDeletion(ctx context.Context) (*DeletionRecord, error)
	// EraseDeletionNames blanks UserID and every DeletedItem.ID of the
	// records whose Subject is subject, leaving the chained part as it
	// was. It returns how many records it changed.
	EraseDeletionNames(ctx context.Context, subject string) (int, error)
}

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
