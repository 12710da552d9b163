package memoryservice

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/usage"
)

// run ends the update's memory session (pruning, summary, reflection and
// the profile) and records the memory operations it caused, with the
// tokens counted by the usage.Meter of ctx.
func (s *Service) run(ctx context.Context, rec *updateRecord) {
	userID := UserID(rec.Store, rec.Scope)
	unlock := s.lockScope("run", userID)
	defer unlock()
	log := s.log.With("update", rec.ID, "store", rec.Store)
	// The scope may have been deleted while this run waited for the lock:
	// its record went with it, and nothing is to be written again.
	var cur updateRecord
	if _, err := s.getRecord(ctx, updateKey(rec.ID), &cur); err != nil || !cur.active() {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
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
			s.finish(ctx, rec, fmt.Errorf("the memory store's models: %w", err))
			return
		}
		log.WarnContext(ctx, "memoryservice: update not run; it resumes at the next start", "err", err)
		return
	}
	if rec.Before == nil {
		before, err := s.scopeItems(ctx, def, rec.Scope)
		if err != nil {
			s.finish(ctx, rec, fmt.Errorf("read the scope's memories: %w", err))
			return
		}
		rec.Before = map[string]int64{}
		for _, it := range before {
			rec.Before[it.MemoryID] = it.version
		}
	}
	rec.Status = statusInProgress
	if err := s.putRecord(ctx, updateKey(rec.ID), "", rec.CreatedAt, true, rec); err != nil {
		log.WarnContext(ctx, "memoryservice: marking an update in progress", "err", err)
	}
	var profileErr error // the memories are written, the profile is not
	end := rec.Turns > 0
	if rec.Reopened { // not if forgotten meanwhile, or ended before a crash
		end = s.sessionActive(ctx, userID, rec.SessionID)
	}
	if end {
		sess, err := agent.NewSession(rec.SessionID, userID)
		if err != nil {
			s.finish(ctx, rec, err)
			return
		}
		if _, err := p.EndSession(ctx, sess); err != nil {
			s.finish(ctx, rec, fmt.Errorf("end the memory session: %w", err))
			return
		}
		if err := p.Flush(ctx); err != nil { // session reflection
			s.finish(ctx, rec, fmt.Errorf("reflection: %w", err))
			return
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
		s.finish(ctx, rec, fmt.Errorf("read the scope's memories: %w", err))
		return
	}
	meter := usage.From(ctx)
	if meter == nil {
		meter = &usage.Meter{}
	}
	res := &updateResult{MemoryOperations: diffItems(rec.Scope, rec.Before, after, s.cfg.Now()), Usage: usageOf(meter)}
	rec.Result = res
	if profileErr != nil && ctx.Err() == nil {
		log.ErrorContext(ctx, "memoryservice: update failed: long-term profile not updated", "err", profileErr)
		// Failed, as the API has no other way to say it, with the result
		// of what it did write.
		rec.Status = statusFailed
		rec.Error = &apiError{Code: "profile_not_updated", Type: "server_error",
			Message: "the memories were updated (the result lists them), but the long-term profile was not; the scope's next update makes it anew"}
		s.store(ctx, rec)
		return
	}
	s.finish(ctx, rec, nil)
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

// finish stores rec as completed, or failed with err. A run cut short by
// the shutdown (ctx ended) is left in progress, to resume at the next
// start.
func (s *Service) finish(ctx context.Context, rec *updateRecord, err error) {
	if err != nil && ctx.Err() != nil {
		s.log.WarnContext(context.WithoutCancel(ctx), "memoryservice: update cut short by the shutdown; it resumes at the next start", "update", rec.ID, "err", err)
		return
	}
	if err != nil {
		s.log.ErrorContext(ctx, "memoryservice: update failed", "update", rec.ID, "err", err)
		rec.Status = statusFailed
		msg := "the update failed; see the server log"
		var ae *apiError
		if errors.As(err, &ae) { // what the client may know, such as a model that cannot serve
			msg = "the update failed: " + ae.Message
		}
		rec.Error = &apiError{Code: "update_failed", Message: msg, Type: "server_error"}
	} else {
		rec.Status = statusCompleted
	}
	s.store(ctx, rec)
}

// store writes a finished update's record, then drops its marker.
func (s *Service) store(ctx context.Context, rec *updateRecord) {
	ctx = context.WithoutCancel(ctx)
	if perr := s.putRecord(ctx, updateKey(rec.ID), "", rec.CreatedAt, false, rec); perr != nil {
		s.log.ErrorContext(ctx, "memoryservice: storing an update's outcome", "update", rec.ID, "err", perr)
		return
	}
	s.unmark(ctx, rec.ID)
}

// unmark drops the marker of an update that finished (a marker left by a
// crash is dropped at the next start).
func (s *Service) unmark(ctx context.Context, id string) {
	if err := s.deleteRecord(ctx, activeKey(id)); err != nil {
		s.log.WarnContext(ctx, "memoryservice: dropping a finished update's marker", "update", id, "err", err)
	}
}
