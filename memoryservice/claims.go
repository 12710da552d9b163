package memoryservice

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmemory/agentmemory/lease"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/usage"
)

// updateClaim is a replica's hold on an update while it runs: the
// holder, since when, and until when unless renewed.
type updateClaim struct {
	Holder string    `json:"holder"`
	Since  time.Time `json:"since"`
	Until  time.Time `json:"until"`
}

// How a claim of an update's history ended.
const (
	claimFinished = "finished" // the update completed or failed
	claimReleased = "released" // handed back: the holder stopped, or could not run it
	claimExpired  = "expired"  // not renewed in time; taken over by another claim
	claimLost     = "lost"     // the update was deleted while held
)

// claimEntry is one claim of an update's history, kept in its record so
// that who ran it when can be checked: no two claims of one scope's
// updates overlap.
type claimEntry struct {
	Replica   string    `json:"replica"`
	ClaimedAt time.Time `json:"claimed_at"`
	// RunAt is when the claim's run took the scope's lease and began: a
	// claim may wait for the lease while another replica runs an update
	// of the same scope, and runs never overlap. Zero if it never ran.
	RunAt time.Time `json:"run_at,omitzero"`
	// EndedAt is when the claim ended: for an expired one, the expiry
	// it last had. Zero while held.
	EndedAt time.Time `json:"ended_at,omitzero"`
	End     string    `json:"end,omitempty"`
}

// maxClaimHistory bounds an update's claim history (its newest claims).
const maxClaimHistory = 32

// acceptGrace is how long an update whose acceptance has not finished
// (its turns still being recorded) is not claimed; one older than that
// was left by a replica that died accepting it, and runs as it is.
const acceptGrace = time.Minute

// errClaimLost reports a claim this replica no longer holds: it expired
// and another replica took the update over, or the update was deleted.
// errClaimEnded reports one this replica ended itself (the outcome
// written, or the claim handed back).
var (
	errClaimLost  = errors.New("memoryservice: claim on the update lost")
	errClaimEnded = errors.New("memoryservice: claim on the update ended")
)

// replicaCounters are what QueueStats reports of this replica's claims.
type replicaCounters struct {
	claims, takeovers, expiredLeases atomic.Int64
}

// heldClaim is an update this replica has claimed: its record as last
// written, under etag. Every write of the record while it is held goes
// through write, so the renewals and the run's own writes do not
// conflict with each other.
type heldClaim struct {
	mu       sync.Mutex
	rec      *updateRecord
	etag     string
	done     bool               // the outcome is written, or the claim is lost
	cancel   context.CancelFunc // ends the run, when the claim is lost or let go
	ctx      context.Context    // the run's
	stopped  chan struct{}      // closed when the renewal loop has returned
	scopeRel func()             // set while the run holds its scope's lease
	// localMeter says the run's meter is the one its acceptance counted
	// with on this replica, which the record's Spent is not to be added to.
	localMeter bool
}

// claim takes update id for this replica if it is due, active, not
// being accepted, and not claimed by a replica whose claim is unexpired
// (or by this one before it restarted, under the same ReplicaID): one read and one ETag-guarded write of its record, then the
// marker's due time moved to the claim's expiry. It returns nil when the
// update is not to be claimed (another replica won the write).
//
// marked is when the update's marker, which a poll found, was last
// written; zero when the claim was not made from a marker. A marker
// without a record is dropped only once it is older than acceptGrace:
// an accept writes the marker before the record, so a younger one may
// be of an update another replica is accepting now.
func (s *Service) claim(ctx context.Context, id string, marked time.Time) (*heldClaim, error) {
	// One claim of an update at a time in this replica (its poller and
	// a timer may try together), and none of one it holds.
	s.mu.Lock()
	_, held := s.held[id]
	if held || s.claiming[id] {
		s.mu.Unlock()
		return nil, nil
	}
	s.claiming[id] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.claiming, id)
		s.mu.Unlock()
	}()
	k := updateKey(id)
	var rec updateRecord
	etag, err := s.getRecord(ctx, k, &rec)
	if errors.Is(err, store.ErrNotFound) {
		if s.cfg.Now().Sub(marked) >= acceptGrace {
			s.unmark(ctx, id) // retired, forgotten, or its acceptance failed: the marker is left over
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read update %s to claim it: %w", id, err)
	}
	now := s.cfg.Now()
	switch {
	case !rec.active():
		s.unmark(ctx, id)
		return nil, nil
	case rec.Status == statusQueued && rec.DueAt.After(now):
		return nil, nil
	}
	if rec.Accepting {
		done, recorded, err := s.acceptanceDone(ctx, &rec)
		if err != nil {
			return nil, err
		}
		if !done && now.Sub(rec.CreatedAt) < acceptGrace {
			return nil, nil
		}
		// Past acceptGrace, an acceptance cut short: the run has the
		// turns it recorded.
		rec.Accepting, rec.Turns = false, rec.Turns-(rec.AcceptTurns-recorded)
	}
	takeover := false
	if c := rec.Claim; c != nil {
		earlierLife := c.Holder == s.cfg.ReplicaID && c.Since.Before(s.started)
		if !earlierLife && now.Before(c.Until) {
			s.mark(ctx, id, c.Until) // not due before then
			return nil, nil
		}
		// Expired, or this replica's from before it restarted.
		takeover = true
		if n := len(rec.Claims); n > 0 && rec.Claims[n-1].End == "" {
			rec.Claims[n-1].End, rec.Claims[n-1].EndedAt = claimExpired, c.Until
		}
	}
	rec.Claim = &updateClaim{Holder: s.cfg.ReplicaID, Since: now, Until: now.Add(s.cfg.LeaseTTL)}
	rec.Claims = append(rec.Claims, claimEntry{Replica: s.cfg.ReplicaID, ClaimedAt: now})
	if n := len(rec.Claims); n > maxClaimHistory {
		rec.Claims = slices.Delete(rec.Claims, 0, n-maxClaimHistory)
	}
	rec.Status = statusInProgress
	etag, err = s.writeRecord(ctx, k, etag, rec.CreatedAt, true, &rec)
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		return nil, nil // another replica claimed it first, or it changed
	}
	if err != nil {
		return nil, fmt.Errorf("claim update %s: %w", id, err)
	}
	s.claims.Add(1)
	if takeover {
		s.takeovers.Add(1)
		s.log.InfoContext(ctx, "memoryservice: an update whose claim expired taken over", "update", id)
	}
	s.mark(ctx, id, rec.Claim.Until)
	runCtx, cancel := context.WithCancel(s.runCtx)
	h := &heldClaim{rec: &rec, etag: etag, ctx: runCtx, cancel: cancel, stopped: make(chan struct{})}
	s.mu.Lock()
	s.held[id] = h
	s.mu.Unlock()
	go s.renewLoop(h)
	return h, nil
}

// write applies change to the held update's record and writes it under
// the ETag of its last write; active says whether the update is still
// unfinished. A conflict (another write since) is retried if the claim
// is still this one, and is errClaimLost otherwise.
func (s *Service) write(ctx context.Context, h *heldClaim, active bool, change func(*updateRecord)) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done || h.rec.Claim == nil { // the outcome written, or handed back
		return errClaimEnded
	}
	k := updateKey(h.rec.ID)
	since := h.rec.Claim.Since
	for range 3 {
		change(h.rec)
		etag, err := s.writeRecord(ctx, k, h.etag, h.rec.CreatedAt, active, h.rec)
		if err == nil {
			h.etag = etag
			return nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
		var cur updateRecord
		tag, gerr := s.getRecord(ctx, k, &cur)
		if errors.Is(gerr, store.ErrNotFound) || (gerr == nil && (cur.Claim == nil ||
			cur.Claim.Holder != s.cfg.ReplicaID || !cur.Claim.Since.Equal(since))) {
			h.done = true
			s.expiredLeases.Add(1)
			h.cancel()
			return errClaimLost
		}
		if gerr != nil {
			return gerr
		}
		h.etag = tag
	}
	return fmt.Errorf("memoryservice: update %s: %w", h.rec.ID, store.ErrConflict)
}

// renewLoop extends the claim (and the scope's lease, while the run
// holds it) every third of Config.LeaseTTL until the run ends; a claim
// found lost ends the run.
func (s *Service) renewLoop(h *heldClaim) {
	defer close(h.stopped)
	every := s.cfg.LeaseTTL / 3
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(h.ctx), every)
		until := s.cfg.Now().Add(s.cfg.LeaseTTL)
		err := s.write(ctx, h, true, func(r *updateRecord) { r.Claim.Until = until })
		if err == nil {
			s.markHeld(ctx, h, until)
			s.renewScopeLease(ctx, h)
		}
		cancel()
		if errors.Is(err, errClaimEnded) {
			return
		}
		if errors.Is(err, errClaimLost) {
			s.log.Warn("memoryservice: claim on an update lost (expired and taken over, or deleted): its run stops", "update", h.rec.ID)
			return
		}
		if err != nil {
			s.log.Warn("memoryservice: renewing a claim on an update", "update", h.rec.ID, "err", err)
		}
	}
}

// letGo ends this replica's hold on h once its run is over: a finished
// update's claim is already closed; any other is handed back (the update
// is due again at once, for any replica), except when the replica is
// dying (the test hook), whose claims are left to expire.
func (s *Service) letGo(h *heldClaim) {
	h.cancel()
	<-h.stopped
	s.mu.Lock()
	delete(s.held, h.rec.ID)
	dying := s.dying
	s.mu.Unlock()
	h.mu.Lock()
	done := h.done
	h.mu.Unlock()
	if done || dying {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.runCtx), 10*time.Second)
	defer cancel()
	now := s.cfg.Now()
	err := s.write(ctx, h, true, func(r *updateRecord) {
		r.Claim = nil
		closeClaim(r, claimReleased, now)
	})
	if err != nil {
		s.log.Warn("memoryservice: handing back a claim on an update; it expires instead", "update", h.rec.ID, "err", err)
		return
	}
	s.markHeld(ctx, h, now)
	h.mu.Lock()
	h.done = true
	h.mu.Unlock()
}

// markHeld is mark for a held update, unless its outcome is written
// (its marker dropped): the marker's writes and its drop are made under
// h.mu, in order.
func (s *Service) markHeld(ctx context.Context, h *heldClaim, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.done {
		s.mark(ctx, h.rec.ID, at)
	}
}

// closeClaim ends the open entry of r's claim history as end, at at.
func closeClaim(r *updateRecord, end string, at time.Time) {
	if n := len(r.Claims); n > 0 && r.Claims[n-1].End == "" {
		r.Claims[n-1].End, r.Claims[n-1].EndedAt = end, at
	}
}

// marker is the body of an update's marker, whose record time is when
// the update is next due for a poller.
type marker struct {
	// At is when the marker was written; zero in markers written before
	// it was kept.
	At time.Time `json:"at,omitzero"`
}

// mark writes update id's marker with the time it is next due for a
// poller: its due time while queued, its claim's expiry while claimed.
func (s *Service) mark(ctx context.Context, id string, at time.Time) {
	if err := s.putRecord(ctx, activeKey(id), "", at, true, marker{At: s.cfg.Now()}); err != nil {
		s.log.WarnContext(ctx, "memoryservice: writing an update's marker", "update", id, "err", err)
	}
}

// pollLoop claims due updates every Config.PollInterval (with a tenth
// of jitter, so replicas started together spread their polls), at once
// at start, and whenever nudged (a worker is free, a timer is due),
// until the service closes.
func (s *Service) pollLoop() {
	defer close(s.pollDone)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-s.stopPoll:
			return
		case <-t.C:
		case <-s.nudge:
		}
		if err := s.poll(s.runCtx); err != nil && s.runCtx.Err() == nil {
			s.log.Warn("memoryservice: looking for due updates", "err", err)
		}
		jitter := time.Duration(rand.Int64N(int64(s.cfg.PollInterval)/10 + 1))
		t.Reset(s.cfg.PollInterval + jitter)
	}
}

// poke asks the poll loop for a poll now.
func (s *Service) poke() {
	select {
	case s.nudge <- struct{}{}:
	default:
	}
}

// poll claims due updates, the longest due first, while this replica
// has workers free: one query of the markers due (the partition
// activeUser, filtered by due time), then a read and a write per
// update claimed.
func (s *Service) poll(ctx context.Context) error {
	free := s.free()
	if free <= 0 {
		return nil
	}
	now := s.cfg.Now()
	due, err := s.listRecords(ctx, activeUser, store.RecordFilter{Until: now.Add(time.Millisecond)})
	if err != nil {
		return err
	}
	slices.SortFunc(due, func(a, b *store.Record) int { return a.Time.Compare(b.Time) })
	// Claimed a batch at a time, the batch's claims at once: a replica
	// with several workers free starts them together.
	var (
		mu   sync.Mutex
		errs []error
	)
	for len(due) > 0 && free > 0 && ctx.Err() == nil {
		batch := due[:min(free, len(due))]
		due = due[len(batch):]
		var wg sync.WaitGroup
		for _, d := range batch {
			id, ok := strings.CutPrefix(d.ID, "update.")
			if !ok {
				continue
			}
			wg.Go(func() {
				var m marker
				if _, err := decodeRecord(d, &m); err != nil {
					s.log.WarnContext(ctx, "memoryservice: unreadable marker", "update", id, "err", err)
				}
				h, err := s.claim(ctx, id, m.At)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				}
				if h != nil && s.enqueueRun(h) {
					free--
				}
			})
		}
		wg.Wait()
	}
	return errors.Join(errs...)
}

// free is how many more updates this replica's workers can take.
func (s *Service) free() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0
	}
	return s.cfg.UpdateWorkers - len(s.held)
}

// claimNow claims update id at once (its due time came, on a timer of
// the replica that accepted it) if a worker is free; else a poll takes
// it when one is.
func (s *Service) claimNow(id string) {
	if s.free() <= 0 {
		return
	}
	h, err := s.claim(s.runCtx, id, time.Time{})
	if err != nil {
		s.log.Warn("memoryservice: claiming a due update", "update", id, "err", err)
		return
	}
	if h != nil {
		s.enqueueRun(h)
	}
}

// enqueueRun queues a claimed update for a worker, starting one if fewer
// than Config.UpdateWorkers are running, and reports whether it did: a
// closed service hands the claim back.
func (s *Service) enqueueRun(h *heldClaim) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.letGo(h)
		return false
	}
	s.runQueue = append(s.runQueue, h)
	if s.workers < s.cfg.UpdateWorkers {
		s.workers++
		s.wg.Add(1)
		go s.worker()
	}
	s.mu.Unlock()
	return true
}

// worker runs queued updates until the queue is empty or the service
// closes (the claims left queued are handed back by Close), then asks
// for a poll: it is free.
func (s *Service) worker() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		if s.closed || len(s.runQueue) == 0 {
			s.workers--
			if len(s.runQueue) == 0 {
				s.runQueue = nil // releases the backing array
			}
			closed := s.closed
			s.mu.Unlock()
			if !closed {
				s.poke()
			}
			return
		}
		h := s.runQueue[0]
		s.runQueue[0] = nil
		s.runQueue = s.runQueue[1:]
		s.mu.Unlock()
		// Accepted here: its meter counted what the acceptance spent,
		// even after it answered (pruning in the background). Else the
		// record says what the acceptance had spent by then.
		meter, local := s.takeLocal(h.rec.ID), true
		if meter == nil {
			meter, local = &usage.Meter{}, false
		}
		h.localMeter = local
		s.run(usage.WithMeter(h.ctx, meter), h)
		s.letGo(h)
	}
}

// scopeLeaseUser is the user whose store.UserState holds the lease that
// serialises, across replicas, the runs of a scope's updates and the
// writes that must not overlap them (item writes, expiry, delete_scope).
// It is not the scope's own user, whose lease is its reflection's.
func scopeLeaseUser(name, scope string) string {
	return RegistryUserID + ".lease." + scopeHash(name, scope)
}

// lockRun takes a scope's run lock: this process's lock, then the
// scope's lease in the store (lease.Acquire, as this replica), waiting
// while another replica holds it until ctx ends. The unlock releases
// both.
func (s *Service) lockRun(ctx context.Context, name, scope string) (func(), error) {
	unlock := s.lockScope("run", UserID(name, scope))
	release, err := lease.Acquire(ctx, s.st, scopeLeaseUser(name, scope), s.cfg.ReplicaID, s.leaseConfig())
	if err != nil {
		unlock()
		return nil, fmt.Errorf("memoryservice: the scope's lease: %w", err)
	}
	return func() { release(); unlock() }, nil
}

func (s *Service) leaseConfig() lease.Config {
	return lease.Config{TTL: s.cfg.LeaseTTL, Poll: min(lease.DefaultPoll, s.cfg.PollInterval), Now: s.cfg.Now}
}

// renewScopeLease extends the scope's lease of a run that holds it
// (taking it again as the same owner extends it).
func (s *Service) renewScopeLease(ctx context.Context, h *heldClaim) {
	h.mu.Lock()
	held := h.scopeRel != nil
	name, scope := h.rec.Store, h.rec.Scope
	h.mu.Unlock()
	if !held {
		return
	}
	if _, err := lease.Acquire(ctx, s.st, scopeLeaseUser(name, scope), s.cfg.ReplicaID, s.leaseConfig()); err != nil {
		s.log.Warn("memoryservice: renewing a scope's lease", "update", h.rec.ID, "err", err)
	}
}

// die stops the service as a killed process would: no claim is handed
// back, none renewed, the sweep's lease kept; they expire. For tests.
func (s *Service) die() {
	s.mu.Lock()
	s.dying = true
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = s.Close(ctx)
}
