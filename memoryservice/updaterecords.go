package memoryservice

import (
	"context"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// Update statuses.
const (
	statusQueued     = "queued"
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
	statusFailed     = "failed"
	statusSuperseded = "superseded"
)

// updateRecord is an update_memories operation as the registry keeps it.
type updateRecord struct {
	ID               string    `json:"id"`
	Store            string    `json:"store"`
	Scope            string    `json:"scope"`
	SessionID        string    `json:"session_id"`
	Status           string    `json:"status"`
	PreviousUpdateID string    `json:"previous_update_id,omitempty"`
	SupersededBy     string    `json:"superseded_by,omitempty"`
	CreatedAt        time.Time `json:"created_at"`
	DueAt            time.Time `json:"due_at"`
	// Turns is how many turns the update recorded into its session.
	Turns int `json:"turns"`
	// Reopened marks an update that continues the session of a completed
	// update (previous_update_id): the run ends it again even if no turn
	// was recorded (a crash between reopening and recording).
	Reopened bool `json:"reopened,omitempty"`
	// Before maps the scope's memory items (id to the nanosecond of their
	// last write) as the run began, so a run resumed after a crash lists
	// what the whole run did.
	Before map[string]int64 `json:"before_ns"` // not omitempty: an empty map (a scope that had none) is not nil
	Result *updateResult    `json:"result,omitempty"`
	Error  *apiError        `json:"error,omitempty"`
	// Accepting marks an update whose acceptance may not be finished:
	// its record is written before its turns are recorded. No replica
	// claims it before acceptGrace unless its session holds every turn
	// it records (acceptanceDone); the claim clears it. AcceptTurns is
	// how many turns the acceptance records, with the message ids
	// ID-0, ID-1, …, and Turns counts them already. An update accepted by
	// an earlier version has none: its acceptance is done once it clears
	// Accepting.
	Accepting   bool `json:"accepting,omitempty"`
	AcceptTurns int  `json:"accept_turns,omitempty"`
	// Spent is what the acceptances of the update and of the queued
	// updates it superseded spent, as records written by an earlier
	// version tell (an accept wrote it once its turns were recorded): the
	// run adds its own. An accept now writes none: the pruning its turns
	// set off counts on its replica's meter, which a run there goes on
	// counting.
	Spent *apiUsage `json:"spent,omitempty"`
	// Claim is the replica running the update, while one does; Claims
	// is the history of its claims, oldest first.
	Claim  *updateClaim `json:"claim,omitempty"`
	Claims []claimEntry `json:"claims,omitempty"`
	// FinishedAt is when the update was completed, failed or superseded.
	FinishedAt time.Time `json:"finished_at,omitzero"`
}

// finished is when a finished update finished, as far as its record
// tells: records written before FinishedAt have their last claim's end,
// or their creation.
func (u *updateRecord) finished() time.Time {
	if !u.FinishedAt.IsZero() {
		return u.FinishedAt
	}
	if n := len(u.Claims); n > 0 && !u.Claims[n-1].EndedAt.IsZero() {
		return u.Claims[n-1].EndedAt
	}
	return u.CreatedAt
}

func (u *updateRecord) active() bool {
	return u.Status == statusQueued || u.Status == statusInProgress
}

// updateResponse is an update as the API shows it: what update_memories
// answers and a poll of updates/{update_id} reads.
type updateResponse struct {
	UpdateID     string        `json:"update_id"`
	Status       string        `json:"status"`
	SupersededBy string        `json:"superseded_by,omitempty"`
	Result       *updateResult `json:"result,omitempty"`
	Error        *apiError     `json:"error,omitempty"`
}

func (u *updateRecord) response() updateResponse {
	return updateResponse{UpdateID: u.ID, Status: u.Status, SupersededBy: u.SupersededBy, Result: u.Result, Error: u.Error}
}

// updateResult is what a completed update did.
type updateResult struct {
	MemoryOperations []memoryOperation `json:"memory_operations"`
	Usage            apiUsage          `json:"usage"`
}

// memoryOperation is a memory item an update created, updated or deleted.
type memoryOperation struct {
	Kind       string     `json:"kind"`
	MemoryItem memoryItem `json:"memory_item"`
}

// liveOperations fills a finished update's memory operations with their
// items as the scope holds them now: an item since forgotten (deleted,
// expired, its session forgotten) shows with empty content, and a record
// of an earlier version that kept the text never shows it.
func (s *Service) liveOperations(ctx context.Context, def *memoryStore, rec *updateRecord) error {
	if rec.Result == nil || len(rec.Result.MemoryOperations) == 0 {
		return nil
	}
	now, err := s.scopeItems(ctx, def, rec.Scope)
	if err != nil {
		return err
	}
	byID := make(map[string]memoryItem, len(now))
	for _, it := range now {
		byID[it.MemoryID] = it
	}
	ops := make([]memoryOperation, len(rec.Result.MemoryOperations))
	for i, op := range rec.Result.MemoryOperations {
		if it, ok := byID[op.MemoryItem.MemoryID]; ok && op.Kind != "delete" {
			op.MemoryItem = it
		} else {
			op.MemoryItem.Content = ""
		}
		ops[i] = op
	}
	res := *rec.Result
	res.MemoryOperations = ops
	rec.Result = &res
	return nil
}

// deleteUpdates removes the update records of memory store name written
// before updates had partitions of their own that no scope lists any more,
// once every scope has been forgotten, dropping queued ones from the
// schedule of this replica. It reads the registry's every older update record, as
// deleting a store is rare; deleting a scope reads only the scope's
// (deleteScopeUpdates).
func (s *Service) deleteUpdates(ctx context.Context, name string) error {
	docs, err := s.listRecords(ctx, RegistryUserID, store.RecordFilter{Prefix: "update."})
	if err != nil {
		return err
	}
	for _, d := range docs {
		var rec updateRecord
		if _, err := decodeRecord(d, &rec); err != nil || rec.Store != name {
			continue
		}
		s.dropTimer(rec.ID)
		if err := s.deleteRecord(ctx, recKey{RegistryUserID, d.ID}); err != nil {
			return err
		}
	}
	return nil
}
