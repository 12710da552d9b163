// Package driver holds what every store backend shares so that they all
// keep the store.Store contract the same way: document validation, vector
// ranking and the fusion of ranked legs.
//
// Application code should use package store, and open a backend
// (store/sqlite, store/cosmos, store/mem); this package is for writing a
// backend.
//
// # Validation
//
// Validator checks each document and request against the rules every
// backend enforces (user ownership, ids, dimensions, sizes, enumerations)
// and fills the defaults (a missing UserID, ContentHash, status or TopK),
// failing with an error that wraps store.ErrInvalid and names what was
// wrong. SessionToDelete checks the id given to DeleteSession.
//
// # Ranking
//
// A backend that ranks vectors in Go keeps the best candidates with
// VectorRanker; each leg of a search is a []Scored, best first, and
// Combine fuses the legs into the Ranked results of a store.Hit list
// (store.FuseRRF with store.RRFK when there are several legs).
// Backends that score full text in Go score each document with BM25.
//
// # Deletion log
//
// HasDeletionNames and EraseNames are the record-level half of
// store.DeletionLog.EraseDeletionNames.
package driver
