package store

import (
	"context"
	"time"
)

// Record is a small document a component keeps for its own coordination:
// a queue entry, a claim, a cursor. The store never searches, embeds or
// indexes its body; it keeps it under the record's id in one user's
// partition, with the same ETag concurrency as Sessions, and lists a
// partition's records by id prefix, state and time. A service's
// bookkeeping kept this way costs a fraction of a session document's
// write (no full-text index, no vectors, no secondary indexes beyond the
// listing's).
type Record struct {
	// ID names the record in its partition; it follows the store's id
	// rules (CheckID).
	ID string `json:"id"`
	// Time is the record's own time, by which ListRecords orders and
	// bounds: when it was made, or when it is due. Its year in UTC is
	// 0000-9999; it comes back in UTC.
	Time time.Time `json:"time"`
	// Active marks a record whose work is not finished, for a listing of
	// active records only.
	Active bool `json:"active,omitempty"`
	// Body is the record's content, a JSON value in UTF-8 the store keeps
	// as it is given (a compact value comes back byte for byte).
	Body []byte `json:"body"`
	// ETag is set by the store on every read and write; PutRecord follows
	// PutSession's rules for it (empty, CreateOnly, or the stored ETag).
	ETag string `json:"_etag,omitempty"`
}

// RecordFilter selects records for ListRecords. The zero value selects
// all of a partition's records.
type RecordFilter struct {
	// Prefix, if set, keeps records whose ID starts with it: a string
	// prefix, compared exactly, never a pattern or a word.
	Prefix string
	// State, if set, keeps only active (RecordActive) or only finished
	// (RecordFinished) records; another value is ErrInvalid.
	State RecordState
	// Until, if non-zero, keeps records whose Time is strictly before it.
	Until time.Time
	// Limit caps the number returned, keeping the most recent ones; zero
	// means no limit, and a negative limit is ErrInvalid.
	Limit int
}

// RecordState selects records by Record.Active in a RecordFilter.
type RecordState string

// The states a RecordFilter selects.
const (
	RecordActive   RecordState = "active"
	RecordFinished RecordState = "finished"
)

// Records keeps small coordination documents per partition (Record).
// A backend that offers it implements it beside Store; a caller falls
// back to session documents where it is missing (the memory service
// does). Every method takes ctx and the partition's user id first, fails
// with ErrInvalid for an empty or malformed user id or record id, and
// touches only that partition; every call after Close fails with
// ErrClosed. DeleteUser removes a partition's records with the rest of
// the user's documents.
type Records interface {
	// PutRecord writes r under the rules of PutSession's ETag: with an
	// empty r.ETag it inserts or replaces unconditionally; with
	// CreateOnly it inserts only if no record has that id, and fails with
	// ErrConflict otherwise; with any other ETag it succeeds only if the
	// stored record has that ETag, and fails with ErrConflict if it has
	// another or no longer exists. On success r.ETag holds the new ETag.
	// A body that is not valid JSON, or an encoding over
	// MaxDocumentBytes, is ErrInvalid.
	PutRecord(ctx context.Context, userID string, r *Record) error
	// GetRecord returns the record with its ETag, or ErrNotFound.
	GetRecord(ctx context.Context, userID, id string) (*Record, error)
	// ListRecords returns the partition's records matching f, most recent
	// first (by Time, then ID, both descending).
	ListRecords(ctx context.Context, userID string, f RecordFilter) ([]*Record, error)
	// DeleteRecord removes the record for good, or fails with
	// ErrNotFound.
	DeleteRecord(ctx context.Context, userID, id string) error
}
