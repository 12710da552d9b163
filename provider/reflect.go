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

// Reflector returns the provider's reflector, for reflection on demand
// (ReflectLongTerm, Reconcile, ReflectSession) outside the automatic
// triggers.
func (p *MemoryProvider) Reflector() *reflection.Reflector { return p.reflector }

// scheduleReflect queues reflection of userID's pending sessions. Jobs
// for one user coalesce, and run one at a time.
func (p *MemoryProvider) scheduleReflect(ctx context.Context, userID string) {
	p.queue.offer(job{
		vals: carrying(ctx),
		key:  "reflect\x00" + userID,
		what: "reflect for user " + userID,
		run:  func(ctx context.Context) error { return p.reflect(ctx, userID) },
	})
}

// reflect runs session reflection for userID, then follows up; the next
// batch, if any, is queued.
func (p *MemoryProvider) reflect(ctx context.Context, userID string) error {
	more, err := p.reflectBatch(ctx, userID)
	if more {
		p.scheduleReflect(ctx, userID)
	}
	return err
}

// reflectBatch runs one batch of session reflection for userID, then
// follows up; more reports sessions left for the next batch.
func (p *MemoryProvider) reflectBatch(ctx context.Context, userID string) (more bool, err error) {
	res, err := p.reflector.ReflectPending(ctx, userID)
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
		more = res.Remaining > 0 && err == nil
	}
	return more, p.followUp(ctx, userID, fruitful, err)
}

// extract runs ExtractSession for a session whose pruning crossed a
// multiple of Config.ExtractEvery turns. A failure is logged: the next
// crossing, or the session's end, reads what it missed.
func (p *MemoryProvider) extract(ctx context.Context, userID, sessionID string) {
	res, err := p.reflector.ExtractSession(ctx, userID, sessionID)
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
// returned as is. The counts live in the user's store.UserState, so they
// survive restarts and are shared by every process on the store.
func (p *MemoryProvider) followUp(ctx context.Context, userID string, fruitful int, err error) error {
	reconcile, profile := false, false
	if fruitful > 0 || err == nil {
		var cerr error
		// After a failure the counts wait: the retry (or the next
		// trigger) reaches them.
		reconcile, profile, cerr = p.count(ctx, userID, fruitful, err == nil)
		if cerr != nil {
			p.log.WarnContext(ctx, "memory: reflection counts not updated", "user", userID, "err", cerr)
		}
	}
	if err != nil {
		return err // retried: ReflectPending picks up what is still pending
	}
	if reconcile {
		if _, err := p.reflector.Reconcile(ctx, userID); err != nil {
			// Logged, not retried: the next count reaches it again.
			p.log.WarnContext(ctx, "memory: reconciliation failed", "user", userID, "err", err)
		}
	}
	if profile {
		if _, err := p.reflector.ReflectLongTerm(ctx, userID); err != nil {
			p.log.WarnContext(ctx, "memory: long-term profile update failed", "user", userID, "err", err)
		}
	}
	return nil
}

// count adds fruitful to the user's reflection counts and, when decide,
// reports (and resets) the counts that reached Config.ReconcileEvery and
// Config.ProfileEvery: one ETag-guarded write, retried on a conflict.
func (p *MemoryProvider) count(ctx context.Context, userID string, fruitful int, decide bool) (reconcile, profile bool, err error) {
	_, err = store.UpdateUserState(ctx, p.store, userID, func(doc *store.UserState) (bool, error) {
		doc.SinceReconcile += fruitful
		doc.SinceProfile += fruitful
		reconcile = decide && p.cfg.ReconcileEvery > 0 && doc.SinceReconcile >= p.cfg.ReconcileEvery
		profile = decide && p.cfg.ProfileEvery > 0 && doc.SinceProfile >= p.cfg.ProfileEvery
		if reconcile {
			doc.SinceReconcile = 0
		}
		if profile {
			doc.SinceProfile = 0
		}
		doc.UpdatedAt = p.cfg.Now().UTC()
		return reconcile || profile || fruitful > 0, nil
	})
	if err != nil {
		return false, false, fmt.Errorf("provider: reflection counts of %s: %w", userID, err)
	}
	return reconcile, profile, nil
}
