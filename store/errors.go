package store

import "errors"

// Sentinel errors. Backends wrap them with %w and callers test them with
// errors.Is.
var (
	// ErrNotFound reports a document that does not exist for the user (or
	// is hidden from the read, like a superseded insight).
	ErrNotFound = errors.New("store: not found")
	// ErrConflict reports a failed precondition: a stale ETag on session
	// state, or an insight already superseded differently.
	ErrConflict = errors.New("store: conflict")
	// ErrInvalid reports bad input: an empty user id, a malformed id, a
	// vector of the wrong dimension, an oversized document…
	ErrInvalid = errors.New("store: invalid input")
	// ErrClosed reports a call on a closed store.
	ErrClosed = errors.New("store: closed")
	// ErrNotScrubbed reports a deletion that was made (committed) but
	// whose old content the store could not yet rewrite out of its files
	// (SQLite: readers kept the WAL from being truncated). Scrubbing again
	// later completes it.
	ErrNotScrubbed = errors.New("store: deleted, but not yet scrubbed from the files")
)
