package memoryservice

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/usage"
)

// run ends the update's memory session (pruning, summary, reflection and
// the profile) and records the memory operations it caused, with the
// tokens counted by the usage.Meter of ctx. h is this replica's claim on
// it; the run holds the scope's lease throughout, so no other replica
// runs an update of the scope, or writes its memories, meanwhile.
func (s *Service) run(ctx context.Context, h *heldClaim) {
	rec := h.rec // the fields the run reads are not written meanwhile; it writes through s.write
	userID := UserID(rec.Store, rec.Scope)
	log := s.log.With("update", rec.ID, "store", rec.Store)
	unlock, err := s.lockRun(ctx, rec.Store, rec.Scope)
	if err != nil {
		if ctx.Err() == nil {
			log.WarnContext(ctx, "memoryservice: update not run; its claim is handed back", "err", err)
		}
		return
	}
	h.mu.Lock()
	h.scopeRel = unlock
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.scopeRel = nil
		h.mu.Unlock()
		unlock()
	}()
	// The scope may have been deleted while this run waited for its
	// lease (the record went with it, and nothing is to be written
	// again), or the claim expired meanwhile: renewing it says.
	now := s.cfg.Now()
	until := now.Add(s.cfg.LeaseTTL)
	if err := s.write(ctx, h, true, func(r *updateRecord) {
		r.Claim.Until = until
		if n := len(r.Claims); n > 0 && r.Claims[n-1].Replica == s.cfg.ReplicaID && r.Claims[n-1].EndedAt.IsZero() {
			r.Claims[n-1].RunAt = now
		}
	}); err != nil {
		if !errors.Is(err, errClaimLost) && ctx.Err() == nil {
			log.WarnContext(ctx, "memoryservice: update not run", "err", err)
		}
		return
	}
	def, _, err := s.loadStore(ctx, rec.Store)
	if err != nil {
		log.WarnContext(ctx, "memoryservice: update of a memory store that is gone", "err", err)
		return
	}
	p, err := s.providerFor(def)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
			// The store's models cannot serve: no retry will help.
			s.finish(ctx, h, fmt.Errorf("the memory store's models: %w", err))
			return
		}
		log.WarnContext(ctx, "memoryservice: update not run; its claim is handed back", "err", err)
		return
	}
	if rec.Before == nil {
		items, err := s.scopeItems(ctx, def, rec.Scope)
		if err != nil {
			s.finish(ctx, h, fmt.Errorf("read the scope's memories: %w", err))
			return
		}
		before := map[string]int64{}
		for _, it := range items {
			before[it.MemoryID] = it.version
		}
		// Kept before any memory is written: a run taken over after a
		// crash lists what the whole run did.
		if err := s.write(ctx, h, true, func(r *updateRecord) { r.Before = before }); err != nil {
			if ctx.Err() == nil {
				log.WarnContext(ctx, "memoryservice: update not run", "err", err)
			}
			return
		}
	}
	var profileErr error // the memories are written, the profile is not
	end := rec.Turns > 0
	if rec.Reopened { // not if forgotten meanwhile, or ended before a crash
		end = s.sessionActive(ctx, userID, rec.SessionID)
	}
	if end {
		sess, err := agent.NewSession(rec.SessionID, userID)
		if err != nil {
			s.finish(ctx, h, err)
			return
		}
		if s.sessionCompleted(ctx, userID, rec.SessionID) {
			// Ended by an earlier claim of this update, whose holder
			// died before writing the outcome: its reflection, if that
			// did not happen, is what is left to do (idempotent: only
			// sessions still pending are reflected).
			if _, err := p.Reflector().ReflectPending(ctx, userID); err != nil {
				s.finish(ctx, h, fmt.Errorf("reflection: %w", err))
				return
			}
		} else {
			if _, err := p.EndSession(ctx, sess); err != nil {
				s.finish(ctx, h, fmt.Errorf("end the memory session: %w", err))
				return
			}
			if err := p.Flush(ctx); err != nil { // session reflection
				s.finish(ctx, h, fmt.Errorf("reflection: %w", err))
				return
			}
		}
		if def.profileEnabled() {
			if _, err := p.Reflector().ReflectLongTerm(ctx, userID); err != nil {
				profileErr = err
			}
		}
	}
	if ctx.Err() != nil {
		return // shutting down: the record stays in progress and resumes
	}
	after, err := s.scopeItems(ctx, def, rec.Scope)
	if err != nil {
		s.finish(ctx, h, fmt.Errorf("read the scope's memories: %w", err))
		return
	}
	meter := usage.From(ctx)
	if meter == nil {
		meter = &usage.Meter{}
	}
	spent := usageOf(meter)
	if !h.localMeter {
		spent = spent.plus(rec.Spent)
	}
	res := &updateResult{MemoryOperations: diffItems(rec.Scope, rec.Before, after, s.cfg.Now()), Usage: spent}
	if profileErr != nil && ctx.Err() == nil {
		log.ErrorContext(ctx, "memoryservice: update failed: long-term profile not updated", "err", profileErr)
		// Failed, as the API has no other way to say it, with the result
		// of what it did write.
		s.store(ctx, h, func(r *updateRecord) {
			r.Result, r.Status = res, statusFailed
			r.Error = &apiError{Code: "profile_not_updated", Type: "server_error",
				Message: "the memories were updated (the result lists them), but the long-term profile was not; the scope's next update makes it anew"}
		})
		return
	}
	s.finish(ctx, h, nil, func(r *updateRecord) { r.Result = res })
}

// diffItems lists what a run did to a scope's memory items: created
// (not in before), updated (another version) and deleted (not in after,
// at now). An operation holds no text: a poll reads the items as they
// are now (liveOperations), so forgetting an item leaves nothing of it in
// the update's record.
func diffItems(scope string, before map[string]int64, after []memoryItem, now time.Time) []memoryOperation {
	ops := []memoryOperation{}
	seen := map[string]bool{}
	for _, it := range after {
		seen[it.MemoryID] = true
		it.Content = ""
		at, had := before[it.MemoryID]
		switch {
		case !had:
			ops = append(ops, memoryOperation{Kind: "create", MemoryItem: it})
		case at != it.version:
			ops = append(ops, memoryOperation{Kind: "update", MemoryItem: it})
		}
	}
	var gone []string
	for id := range before {
		if !seen[id] {
			gone = append(gone, id)
		}
	}
	slices.Sort(gone)
	for _, id := range gone {
		_, _, docID, _ := parseItemID(id)
		ops = append(ops, memoryOperation{Kind: "delete",
			MemoryItem: memoryItem{MemoryID: id, Scope: scope, Kind: kindOfID(id), UpdatedAt: now.Unix(), docID: docID}})
	}
	return ops
}

// finish stores the held update as completed (after the changes
// given), or failed with err. A run cut short (ctx ended: the shutdown,
// or the claim lost) is left in progress, its claim handed back or
// taken over.
func (s *Service) finish(ctx context.Context, h *heldClaim, err error, changes ...func(*updateRecord)) {
	if err != nil && ctx.Err() != nil {
		s.log.WarnContext(context.WithoutCancel(ctx), "memoryservice: update cut short; another claim runs it again", "update", h.rec.ID, "err", err)
		return
	}
	s.store(ctx, h, func(r *updateRecord) {
		for _, c := range changes {
			c(r)
		}
		if err == nil {
			r.Status = statusCompleted
			return
		}
		s.log.ErrorContext(ctx, "memoryservice: update failed", "update", r.ID, "err", err)
		r.Status = statusFailed
		msg := "the update failed; see the server log"
		var ae *apiError
		if errors.As(err, &ae) { // what the client may know, such as a model that cannot serve
			msg = "the update failed: " + ae.Message
		}
		r.Error = &apiError{Code: "update_failed", Message: msg, Type: "server_error"}
	})
}

// store writes a finished update's record, closing its claim, then
// drops its marker.
func (s *Service) store(ctx context.Context, h *heldClaim, change func(*updateRecord)) {
	ctx = context.WithoutCancel(ctx)
	now := s.cfg.Now()
	err := s.write(ctx, h, false, func(r *updateRecord) {
		change(r)
		r.Claim, r.FinishedAt = nil, now
		closeClaim(r, claimFinished, now)
	})
	if err != nil {
		s.log.ErrorContext(ctx, "memoryservice: storing an update's outcome", "update", h.rec.ID, "err", err)
		return
	}
	h.mu.Lock()
	h.done = true
	s.unmark(ctx, h.rec.ID)
	h.mu.Unlock()
	s.dropTimer(h.rec.ID)
}

// unmark drops the marker of an update that finished (a marker left by a
// crash is dropped by the next poll that finds it).
func (s *Service) unmark(ctx context.Context, id string) {
	if err := s.deleteRecord(ctx, activeKey(id)); err != nil {
		s.log.WarnContext(ctx, "memoryservice: dropping a finished update's marker", "update", id, "err", err)
	}
}
