package memoryservice

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/usage"
)

// scheduled is a queued update waiting for its due time.
type scheduled struct {
	rec   *updateRecord
	timer *time.Timer
	// meter counts the tokens spent for the update since it was accepted
	// in this process (the pruning of its turns, then its run), and those
	// of the queued updates it superseded.
	meter *usage.Meter
}

// acceptance is an update_memories request, checked, to accept.
type acceptance struct {
	store, scope string
	previousID   string // previous_update_id, if any
	// continues is the completed session the update continues
	// (continuedSession), or "".
	continues string
	msgs      []agent.Message
	delay     time.Duration
}

// accept makes an update durable before it is answered: the record first
// (queued), then the messages as turns, recorded with p, of the scope's
// open memory session. A queued update of the same scope is superseded
// by this one, whose session it continues (the debounce of
// update_delay); failing that, the completed session a.continues is
// reopened and continued. It returns the update as the API shows it on
// acceptance.
func (s *Service) accept(ctx context.Context, p providerLike, a acceptance) (updateResponse, error) {
	userID := UserID(a.store, a.scope)
	unlock := s.lockScope("accept", userID)
	defer unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return updateResponse{}, unavailable("the server is shutting down")
	}
	old := s.pending[userID]
	if old != nil {
		delete(s.pending, userID) // ours now: its timer finds it gone
		old.timer.Stop()
	}
	s.mu.Unlock()
	restore := func() {
		if old != nil {
			s.schedule(old.rec, old.meter)
		}
	}
	meter := &usage.Meter{}
	if old != nil {
		meter = old.meter // the superseded update's work is this one's
	}
	ctx = usage.WithMeter(ctx, meter)
	now := s.cfg.Now()
	rec := &updateRecord{ID: newUpdateID(a.store, a.scope), Store: a.store, Scope: a.scope, Status: statusQueued,
		PreviousUpdateID: a.previousID, CreatedAt: now, DueAt: now.Add(a.delay), SessionID: newID("mss_")}
	// The scope's record, so the store's deletion finds the scope; then
	// the update's marker, so a restart finds the update, before its
	// record (a marker of nothing is dropped at the next start).
	if err := s.noteScope(ctx, a.store, a.scope); err != nil {
		restore()
		return updateResponse{}, err
	}
	if err := s.putRecord(ctx, activeKey(rec.ID), store.CreateOnly, now, true, struct{}{}); err != nil {
		restore()
		return updateResponse{}, err
	}
	if old != nil {
		rec.SessionID = old.rec.SessionID
		rec.Turns = old.rec.Turns
	} else if a.continues != "" {
		rec.SessionID, rec.Reopened = a.continues, true
	}
	if err := s.putRecord(ctx, updateKey(rec.ID), store.CreateOnly, now, true, rec); err != nil {
		restore()
		return updateResponse{}, err
	}
	if rec.Reopened {
		ok, err := s.reopenSession(ctx, userID, a.continues)
		if err != nil {
			restore()
			return updateResponse{}, fmt.Errorf("continue the previous update's session: %w", err)
		}
		if !ok { // gone or busy: a session of its own
			rec.SessionID, rec.Reopened = newID("mss_"), false
			if err := s.putRecord(ctx, updateKey(rec.ID), "", now, true, rec); err != nil {
				restore()
				return updateResponse{}, err
			}
		}
	}
	sess, err := agent.NewSession(rec.SessionID, userID)
	if err != nil {
		restore()
		return updateResponse{}, err
	}
	for i, m := range a.msgs {
		m.ID = rec.ID + "-" + strconv.Itoa(i) // a retried record stores the turn once
		m.CreatedAt = now
		if err := p.Record(ctx, sess, m); err != nil {
			restore()
			return updateResponse{}, fmt.Errorf("record items: %w", err)
		}
		rec.Turns++
	}
	if err := s.putRecord(ctx, updateKey(rec.ID), "", now, true, rec); err != nil {
		restore()
		return updateResponse{}, err
	}
	if old != nil {
		old.rec.Status, old.rec.SupersededBy = statusSuperseded, rec.ID
		if err := s.putRecord(ctx, updateKey(old.rec.ID), "", old.rec.CreatedAt, false, old.rec); err != nil {
			s.log.WarnContext(ctx, "memoryservice: marking a superseded update", "update", old.rec.ID, "err", err)
		} else {
			s.unmark(ctx, old.rec.ID)
		}
	}
	accepted := rec.response() // before the runner owns rec
	s.schedule(rec, meter)
	return accepted, nil
}

// providerLike is the part of provider.MemoryProvider an update uses.
type providerLike interface {
	Record(ctx context.Context, sess *agent.Session, msgs ...agent.Message) error
}

// schedule queues rec to run at its due time (at once if past), its
// tokens counted by meter (a new one when nil).
func (s *Service) schedule(rec *updateRecord, meter *usage.Meter) {
	userID := UserID(rec.Store, rec.Scope)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if meter == nil {
		meter = &usage.Meter{}
	}
	sc := &scheduled{rec: rec, meter: meter}
	sc.timer = time.AfterFunc(max(0, rec.DueAt.Sub(s.cfg.Now())), func() { s.fire(userID, sc) })
	s.pending[userID] = sc
}

// fire starts a due update unless it was superseded meanwhile.
func (s *Service) fire(userID string, sc *scheduled) {
	s.mu.Lock()
	if s.closed || s.pending[userID] != sc {
		s.mu.Unlock()
		return
	}
	delete(s.pending, userID)
	s.enqueueRun(runJob{rec: sc.rec, meter: sc.meter})
	s.mu.Unlock()
}

// enqueueRun queues a due update for a worker, starting one if fewer than
// Config.UpdateWorkers are running: the updates due at once wait their
// turn rather than all running together. The caller holds s.mu.
func (s *Service) enqueueRun(job runJob) {
	s.runQueue = append(s.runQueue, job)
	if s.workers < s.cfg.UpdateWorkers {
		s.workers++
		s.wg.Add(1)
		go s.worker()
	}
}

// worker runs queued updates until the queue is empty or the service
// closes (the updates left queued are still queued or in progress in the
// store, and resume at the next start).
func (s *Service) worker() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		if s.closed || len(s.runQueue) == 0 {
			s.workers--
			s.runQueue = nil // releases the backing array
			s.mu.Unlock()
			return
		}
		job := s.runQueue[0]
		s.runQueue[0] = runJob{}
		s.runQueue = s.runQueue[1:]
		s.mu.Unlock()
		meter := job.meter
		if meter == nil {
			meter = &usage.Meter{}
		}
		s.run(usage.WithMeter(s.runCtx, meter), job.rec)
	}
}

// resume schedules the updates a previous process accepted and did not
// finish: for each scope the newest queued one at its due time, the others
// (and those in progress) at once.
func (s *Service) resume(ctx context.Context) error {
	recs, err := s.unfinishedUpdates(ctx)
	if err != nil {
		return fmt.Errorf("memoryservice: resume updates: %w", err)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].CreatedAt.Before(recs[j].CreatedAt) })
	newest := map[string]*updateRecord{}
	for _, rec := range recs {
		newest[UserID(rec.Store, rec.Scope)] = rec
	}
	// A crash after a new update was written and before the queued one it
	// continues was marked superseded leaves both queued on one session:
	// the older is superseded now, as it would have been.
	// (Or the write that marked it failed, which is only logged.)
	lastOf := map[string]*updateRecord{} // newest unfinished update by session
	for _, rec := range recs {
		lastOf[rec.SessionID] = rec
	}
	kept := recs[:0]
	for _, rec := range recs {
		if last := lastOf[rec.SessionID]; rec.Status == statusQueued && last != rec {
			rec.Status, rec.SupersededBy = statusSuperseded, last.ID
			if err := s.putRecord(ctx, updateKey(rec.ID), "", rec.CreatedAt, false, rec); err != nil {
				return fmt.Errorf("memoryservice: resume updates: supersede %s: %w", rec.ID, err)
			}
			s.unmark(ctx, rec.ID)
			s.log.InfoContext(ctx, "memoryservice: an update left queued by a crash superseded", "update", rec.ID, "superseded_by", last.ID)
			continue
		}
		kept = append(kept, rec)
	}
	recs = kept
	for _, rec := range recs {
		if rec.Status == statusQueued && newest[UserID(rec.Store, rec.Scope)] == rec {
			s.schedule(rec, nil)
			continue
		}
		s.log.InfoContext(ctx, "memoryservice: resuming an update", "update", rec.ID, "status", rec.Status)
		s.mu.Lock()
		s.enqueueRun(runJob{rec: rec})
		s.mu.Unlock()
	}
	return nil
}

// runJob is a due update waiting for a worker.
type runJob struct {
	rec   *updateRecord
	meter *usage.Meter
}

// unfinishedUpdates reads the updates not yet finished: those the
// markers name (dropping the markers of records finished or gone), and
// the older ones kept active under RegistryUserID.
func (s *Service) unfinishedUpdates(ctx context.Context) ([]*updateRecord, error) {
	marks, err := s.listRecords(ctx, activeUser, "update.", store.SessionFilter{})
	if err != nil {
		return nil, err
	}
	var recs []*updateRecord
	for _, m := range marks {
		id := strings.TrimPrefix(m.ID, "update.")
		var rec updateRecord
		_, err := s.getRecord(ctx, updateKey(id), &rec)
		switch {
		case errors.Is(err, store.ErrNotFound) || (err == nil && !rec.active()):
			s.unmark(ctx, id)
		case err != nil:
			s.log.ErrorContext(ctx, "memoryservice: unreadable update record not resumed", "update", id, "err", err)
		default:
			recs = append(recs, &rec)
		}
	}
	older, err := s.listRecords(ctx, RegistryUserID, "update.", store.SessionFilter{Status: store.SessionActive})
	if err != nil {
		return nil, err
	}
	for _, d := range older {
		var rec updateRecord
		if _, err := s.getRecordFrom(d, &rec); err != nil || !rec.active() {
			s.log.ErrorContext(ctx, "memoryservice: unreadable update record not resumed", "id", d.ID, "err", err)
			continue
		}
		recs = append(recs, &rec)
	}
	return recs, nil
}
