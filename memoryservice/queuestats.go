package memoryservice

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmemory/agentmemory/store"
)

// QueueStats describes the update queue, which every replica on the
// store shares, and this replica's part in it.
type QueueStats struct {
	// Depth is how many updates are not finished: queued (due or not)
	// or running, on any replica.
	Depth int
	// OldestDue is the due time of the update that has waited longest
	// for a replica to claim it (due, unclaimed, or its claim expired);
	// zero when none is waiting.
	OldestDue time.Time
	// Claims counts the updates this replica claimed since it started,
	// Takeovers those of them whose earlier claim had expired (its
	// holder died or hung), and ExpiredLeases this replica's claims
	// that it found lost (not renewed in time and taken over, or the
	// update deleted) while it still ran the update.
	Claims, Takeovers, ExpiredLeases int64
}

// QueueStats reads the queue's depth and its oldest due update from the
// store (one query of the markers of the updates not finished) and this
// replica's counters.
func (s *Service) QueueStats(ctx context.Context) (QueueStats, error) {
	qs := QueueStats{Claims: s.claims.Load(), Takeovers: s.takeovers.Load(), ExpiredLeases: s.expiredLeases.Load()}
	marks, err := s.listRecords(ctx, activeUser, store.RecordFilter{Prefix: "update."})
	if err != nil {
		return qs, fmt.Errorf("memoryservice: queue stats: %w", err)
	}
	now := s.cfg.Now()
	qs.Depth = len(marks)
	for _, m := range marks {
		if m.Time.After(now) {
			continue // not due yet, or claimed until then
		}
		if qs.OldestDue.IsZero() || m.Time.Before(qs.OldestDue) {
			qs.OldestDue = m.Time
		}
	}
	return qs, nil
}
