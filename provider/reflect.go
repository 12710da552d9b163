package provider

import (
	"context"
	"fmt"

	"github.com/agentmemory/agentmemory/reflection"
	"github.com/agentmemory/agentmemory/store"
)

// ReflectionTrigger selects when session reflection runs.
type ReflectionTrigger int

const (
	// ReflectOnEnd (the default): when a session ends, reflection of the
	// user's pending sessions is queued in the background, followed by
	// reconciliation and a profile update when Config.ReconcileEvery and
	// Config.ProfileEvery say so.
	ReflectOnEnd ReflectionTrigger = iota
	// ReflectManual: reflection runs only when the caller asks, through
	// Reflector.
	ReflectManual
)

func (t ReflectionTrigger) String() string {
	switch t {
	case ReflectOnEnd:
		return "on-end"
	case ReflectManual:
		return "manual"
	}
	return fmt.Sprintf("ReflectionTrigger(%d)", int(t))
}

// reflectCount counts a user's session reflections that stored insights
// since the last reconciliation and the last profile update. It lives in
// memory: after a restart the counts begin again.
type reflectCount struct{ sinceReconcile, sinceProfile int }

// Reflector returns the provider's reflector, for reflection on demand
// (ReflectLongTerm, Reconcile, ReflectSession) outside the automatic
// triggers.
func (p *MemoryProvider) Reflector() *reflection.Reflector { return p.rf }

// scheduleReflect queues reflection of userID's pending sessions. Jobs
// for one user coalesce, and run one at a time.
func (p *MemoryProvider) scheduleReflect(userID string) {
	p.q.offer(job{
		key:  "reflect\x00" + userID,
		what: "reflect for user " + userID,
		run:  func(ctx context.Context) error { return p.reflect(ctx, userID) },
	})
}

// reflect runs session reflection for userID, then follows up.
func (p *MemoryProvider) reflect(ctx context.Context, userID string) error {
	res, err := p.rf.ReflectPending(ctx, userID)
	fruitful := 0
	if res != nil {
		for _, s := range res.Sessions {
			if s.Flag == store.FlagInsight {
				fruitful++
			}
		}
		if res.Aggregate != nil && res.Aggregate.Flag == store.FlagInsight {
			fruitful++
		}
		if res.Remaining > 0 && err == nil {
			p.scheduleReflect(userID) // the next batch
		}
	}
	return p.followUp(ctx, userID, fruitful, err)
}

// extract runs ExtractSession for a session whose pruning crossed a
// multiple of Config.ExtractEvery turns. A failure is logged: the next
// crossing, or the session's end, reads what it missed.
func (p *MemoryProvider) extract(ctx context.Context, userID, sessionID string) {
	res, err := p.rf.ExtractSession(ctx, userID, sessionID)
	if err != nil {
		p.log.WarnContext(ctx, "memory: insight extraction failed", "user", userID, "session", sessionID, "err", err)
		return
	}
	fruitful := 0
	if res.Flag == store.FlagInsight {
		fruitful = 1
	}
	_ = p.followUp(ctx, userID, fruitful, nil)
}

// followUp counts fruitful reflections and runs reconciliation and the
// profile update when their counts are reached; err is the reflection's,
// returned as is.
func (p *MemoryProvider) followUp(ctx context.Context, userID string, fruitful int, err error) error {
	p.mu.Lock()
	c, _ := p.reflected.get(userID)
	c.sinceReconcile += fruitful
	c.sinceProfile += fruitful
	// After a failure the counts wait: the retry (or the next trigger)
	// reaches them.
	reconcile := err == nil && p.cfg.ReconcileEvery > 0 && c.sinceReconcile >= p.cfg.ReconcileEvery
	profile := err == nil && p.cfg.ProfileEvery > 0 && c.sinceProfile >= p.cfg.ProfileEvery
	if reconcile {
		c.sinceReconcile = 0
	}
	if profile {
		c.sinceProfile = 0
	}
	p.reflected.put(userID, c)
	p.mu.Unlock()
	if err != nil {
		return err // retried: ReflectPending picks up what is still pending
	}
	if reconcile {
		if _, err := p.rf.Reconcile(ctx, userID); err != nil {
			// Logged, not retried: the next count reaches it again.
			p.log.WarnContext(ctx, "memory: reconciliation failed", "user", userID, "err", err)
		}
	}
	if profile {
		if _, err := p.rf.ReflectLongTerm(ctx, userID); err != nil {
			p.log.WarnContext(ctx, "memory: long-term profile update failed", "user", userID, "err", err)
		}
	}
	return nil
}
