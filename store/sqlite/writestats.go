package sqlite

import (
	"sync/atomic"
	"time"
)

// WriteStats are a store's figures for its writes since it was opened,
// for an operator's metrics (the memory server exports them). Durations
// are summed, as database/sql's DBStats.WaitDuration is, so that the
// rates of two figures give a mean: Commit over Commits is the mean
// commit, Wait over Writes the mean wait of a write for its batch, and
// the rate of Busy how much of the time the one writer is at work. A
// Busy rate near 1 s/s is a writer saturated: writes queue for it, and
// Wait grows.
type WriteStats struct {
	// Commits counts the transactions committed: one per batch of
	// writes (group commit), or per write when a batch's commit failed
	// and its writes were committed one by one.
	Commits int64
	// Writes counts the writes committed (not those that failed).
	Writes int64
	// Wait is the time the committed writes spent queued, each from its
	// call to the start of the batch that took it.
	Wait time.Duration
	// Busy is the writer's time in batches: from BEGIN to the answers.
	Busy time.Duration
	// Commit is the time in COMMIT, which writes the WAL's frames and
	// syncs it.
	Commit time.Duration
	// Checkpoints counts the passive checkpoints the store ran in the
	// background, and CheckpointTime is their time.
	Checkpoints    int64
	CheckpointTime time.Duration
}

// writeCounters are WriteStats as they are counted.
type writeCounters struct {
	commits, writes             atomic.Int64
	wait, busy, commit          atomic.Int64 // nanoseconds
	checkpoints, checkpointTime atomic.Int64
}

// WriteStats returns the store's write figures so far. It is safe to
// call at any time, also after Close.
func (s *Store) WriteStats() WriteStats {
	c := &s.wstats
	return WriteStats{
		Commits:        c.commits.Load(),
		Writes:         c.writes.Load(),
		Wait:           time.Duration(c.wait.Load()),
		Busy:           time.Duration(c.busy.Load()),
		Commit:         time.Duration(c.commit.Load()),
		Checkpoints:    c.checkpoints.Load(),
		CheckpointTime: time.Duration(c.checkpointTime.Load()),
	}
}
