// Package store defines the documents agentmemory keeps about each user and
// the Store interface through which every part of agentmemory reads and
// writes them, whatever the storage backend.
//
// # Documents
//
// There are three document kinds, one per container (partition key
// /user_id), with the JSON field names of the Cosmos DB design so that the
// same documents go to every backend unchanged:
//
//   - Interaction: k conversation turns flattened into one searchable
//     document, with LLM metadata and two vectors.
//   - Insight: a session insight extracted by reflection, or the one
//     long-term profile of a user (id "longterm-{user_id}").
//   - Session: one per session: its summary once completed, and the
//     live session state (turns not yet pruned, cumulative summary, turn
//     counter) written with ETag concurrency while it is active.
//
// Beside them a store keeps each session's turns (Turn) and each user's
// coordination document (UserState).
//
// # Interfaces
//
// Store is composed of one small interface per kind: Interactions,
// Insights, Sessions, Turns, UserStates, and Deleter for removals. A
// component that needs only some of them takes those, or a narrower
// interface of its own; anything that holds a Store can pass it.
//
// Every Store method takes the user id right after the context and refuses
// an empty one: a backend keeps each user's documents in their own logical
// partition and never reads, searches or deletes across users, whatever ids
// a caller passes. Failures wrap the sentinel errors ErrNotFound,
// ErrConflict, ErrInvalid and ErrClosed; test them with errors.Is.
//
// # Deletion
//
// Deletion is for good: DeleteDocument removes one document, DeleteSession
// a session's document and turns, DeleteUser everything of a user. The
// deletion log (DeletionLog, DeletionRecord) is the one thing a store keeps
// across users: what each forget call removed, named by keyed hashes, never
// the removed content, chained by package erasure. It outlives DeleteUser;
// EraseDeletionNames takes a forgotten user's clear names out of it. Where a
// backend partitions by user id, the log has the partition
// DeletionLogPartition, which CheckUserID refuses as a user id.
//
// # Backends
//
// store/sqlite (the embedded default), store/cosmos (Azure Cosmos DB for
// NoSQL) and store/mem (in-process, for tests and examples). Each passes
// the conformance suite in store/storetest. The rules they share —
// document validation, vector ranking and rank fusion — are in
// store/driver, which only backends import.
package store
