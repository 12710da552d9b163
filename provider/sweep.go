package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/store"
)

// Several instances of an application (processes, replicas) may share one
// store, each with its own MemoryProvider. What a provider keeps in memory
// — its background queue, its ModeIdle timers — dies with its process, so
// each memory session with work outstanding also has a marker in the store,
// which any provider on the store may take up:
//
//   - a ModeIdle or ModePerRun session gets one when it opens, due when it
//     may have idled out: whoever finds it due reads the session's last
//     activity in the store, and ends it only if it has been idle for
//     Config.IdleTimeout, or pushes the marker back;
//   - a session being ended gets one before its end begins, which stays
//     until its follow-up work (summaries still missing, reflection) is
//     done.
//
// A provider works on a marker's session only after claiming the marker (an
// ETag-guarded write of its name and an expiry, Config.ClaimTTL). Each
// provider's sweep (every Config.SweepInterval, and at once when it starts)
// claims the markers that are due: those whose work nobody claimed in time,
// or whose claim expired with its holder. Everything done under a claim is
// idempotent (an end, a summary, a reflection), so work redone after a
// claim expired while its holder was still alive changes nothing.

// SweepUserID is the partition of the store, a user id no user may have,
// holding the markers of memory sessions with work outstanding: one
// document per session, naming its user and session.
const SweepUserID = "agentmemory.provider-sessions"

// Defaults for the sweep.
const (
	DefaultSweepInterval = time.Minute
	DefaultClaimTTL      = 5 * time.Minute
)

// marker is the content of a marker document (its State.CumulativeSummary,
// which no search reads); the document's StartTime is when the marker is
// next due.
type marker struct {
	User    string `json:"user"`
	Session string `json:"session"`
	// Ending says the session's end was asked for: it is ended at once,
	// not when idle.
	Ending bool `json:"ending,omitempty"`
	// Holder is the provider working on the session, until Until.
	Holder string    `json:"holder,omitempty"`
	Until  time.Time `json:"until,omitzero"`
}

// markerID names the marker of a session without its ids' text.
func markerID(userID, sessionID string) string {
	sum := sha256.Sum256([]byte(userID + "\x00" + sessionID))
	return "session." + hex.EncodeToString(sum[:16])
}

// putMarker writes m, due at due, under etag (store.CreateOnly, a stored
// ETag, or "" for unconditional), and returns the new ETag.
func (p *MemoryProvider) putMarker(ctx context.Context, m marker, due time.Time, etag string) (string, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	doc := &store.Session{ID: markerID(m.User, m.Session), StartTime: due.UTC(), Status: store.SessionActive,
		ReflectionStatus: store.ReflectionProcessed, State: store.SessionState{CumulativeSummary: string(b)},
		UpdatedAt: p.cfg.Now().UTC(), ETag: etag}
	if err := p.store.PutSession(ctx, SweepUserID, doc); err != nil {
		return "", err
	}
	return doc.ETag, nil
}

// decodeMarker reads a marker document.
func decodeMarker(doc *store.Session) (marker, error) {
	var m marker
	if err := json.Unmarshal([]byte(doc.State.CumulativeSummary), &m); err != nil {
		return m, fmt.Errorf("provider: marker %s: %w", doc.ID, err)
	}
	if m.User == "" || m.Session == "" {
		return m, fmt.Errorf("provider: marker %s names no session", doc.ID)
	}
	return m, nil
}

// markOpen gives a session opened here in ModeIdle or ModePerRun its
// marker, due when it may have idled out, unless it has one already. A
// failure is logged: the local timer still ends the session, unless this
// process dies.
func (p *MemoryProvider) markOpen(ctx context.Context, userID, id string) {
	if p.cfg.Mode == ModeManual {
		return
	}
	_, err := p.putMarker(ctx, marker{User: userID, Session: id}, p.cfg.Now().Add(p.cfg.IdleTimeout), store.CreateOnly)
	if err != nil && !errors.Is(err, store.ErrConflict) {
		p.log.WarnContext(ctx, "memory: session marker not written; only this process will end the session when idle", "user", userID, "session", id, "err", err)
	}
}

// markEnding records, before a session's end begins, that it is ending
// and that this provider holds it: should this process die, another
// finishes the end and its follow-up once the claim expires.
func (p *MemoryProvider) markEnding(ctx context.Context, userID, id string) {
	until := p.cfg.Now().Add(p.cfg.ClaimTTL)
	m := marker{User: userID, Session: id, Ending: true, Holder: p.owner, Until: until}
	if _, err := p.putMarker(ctx, m, until, ""); err != nil {
		p.log.WarnContext(ctx, "memory: session marker not written; no other process will finish this end should this one die",
			"user", userID, "session", id, "err", err)
	}
}

// unmark removes a session's marker: nothing is outstanding. A marker
// is one document (no turns): one point delete on Cosmos DB.
func (p *MemoryProvider) unmark(ctx context.Context, userID, id string) {
	err := p.store.DeleteDocument(ctx, SweepUserID, store.KindSessionSummary, markerID(userID, id))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		p.log.WarnContext(ctx, "memory: session marker not removed; a sweep will find nothing to do", "user", userID, "session", id, "err", err)
	}
}

// unmarkUser removes every marker of userID (ForgetUser): a marker names
// its user.
func (p *MemoryProvider) unmarkUser(ctx context.Context, userID string) error {
	docs, err := p.store.ListSessions(ctx, SweepUserID, store.SessionFilter{})
	if err != nil {
		return fmt.Errorf("list session markers: %w", err)
	}
	var errs []error
	for _, d := range docs {
		if m, err := decodeMarker(d); err == nil && m.User == userID {
			if err := p.store.DeleteDocument(ctx, SweepUserID, store.KindSessionSummary, d.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
				errs = append(errs, fmt.Errorf("delete session marker: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// claim takes the marker of a session for this provider until ClaimTTL
// from now, making one when it has none. It reports false, without an
// error, when a provider — this one included: its own work on the
// session is under way — holds an unexpired claim, or another wrote the
// marker first.
func (p *MemoryProvider) claim(ctx context.Context, userID, id string) (m marker, etag string, ok bool, err error) {
	doc, err := p.store.GetSession(ctx, SweepUserID, markerID(userID, id))
	switch {
	case errors.Is(err, store.ErrNotFound):
		m, etag = marker{User: userID, Session: id}, store.CreateOnly
	case err != nil:
		return m, "", false, fmt.Errorf("provider: read the marker of session %s: %w", id, err)
	default:
		if m, err = decodeMarker(doc); err != nil {
			m = marker{User: userID, Session: id} // unreadable: rewritten
		}
		etag = doc.ETag
	}
	now := p.cfg.Now()
	if m.Holder != "" && now.Before(m.Until) {
		return m, "", false, nil
	}
	m.Holder, m.Until = p.owner, now.Add(p.cfg.ClaimTTL)
	etag, err = p.putMarker(ctx, m, m.Until, etag)
	if errors.Is(err, store.ErrConflict) {
		return m, "", false, nil
	}
	if err != nil {
		return m, "", false, fmt.Errorf("provider: claim session %s: %w", id, err)
	}
	return m, etag, true, nil
}

// scheduleTend queues tend for a session: its idle timer fired here, or a
// sweep found its marker due.
func (p *MemoryProvider) scheduleTend(ctx context.Context, userID, id string) {
	p.queue.offer(job{
		vals: carrying(ctx),
		key:  "tend\x00" + userID + "\x00" + id,
		what: "outstanding work of session " + id,
		run:  func(ctx context.Context) error { return p.tend(ctx, userID, id) },
	})
}

// tend does what is outstanding for a session (endIdle, with
// Config.IdleTimeout).
func (p *MemoryProvider) tend(ctx context.Context, userID, id string) error {
	_, _, err := p.endIdle(ctx, userID, id, p.cfg.IdleTimeout)
	return err
}

// endIdle does what is outstanding for a session, under its claim: an
// active session is ended once it has been idle for idle, by the last
// activity the store holds, whichever process served it, or at once when
// its end was asked for; an ended one gets its follow-up work queued. A
// session still in use is left, its marker pushed back, and wait is how
// long until it may be idle; so it is when another claim holds the
// session (wait: until that claim expires). When another provider holds
// the session, or it has ended, this provider lets go of its live copy,
// so that its next run reads the store. A forgotten session is
// store.ErrNotFound, an ended one keeper.ErrSessionCompleted.
func (p *MemoryProvider) endIdle(ctx context.Context, userID, id string, idle time.Duration) (res *keeper.EndResult, wait time.Duration, err error) {
	m, etag, ok, err := p.claim(ctx, userID, id)
	if err != nil {
		return nil, 0, err
	}
	if !ok {
		if m.Holder != p.owner {
			p.dropSession(userID, id)
		}
		return nil, max(m.Until.Sub(p.cfg.Now()), recheckAfter), nil
	}
	doc, err := p.store.GetSession(ctx, userID, id)
	switch {
	case errors.Is(err, store.ErrNotFound): // forgotten
		p.dropSession(userID, id)
		p.unmark(ctx, userID, id)
		return nil, 0, fmt.Errorf("provider: session %s: %w", id, err)
	case err != nil:
		return nil, 0, fmt.Errorf("provider: read session %s: %w", id, err)
	}
	if doc.Status == store.SessionActive {
		if !m.Ending {
			last, err := p.lastActivity(ctx, userID, doc)
			if err != nil {
				return nil, 0, err
			}
			if due := last.Add(idle); p.cfg.Now().Before(due) {
				p.pushBack(ctx, m, etag, userID, id, due)
				return nil, due.Sub(p.cfg.Now()), nil
			}
		}
		res, err := p.end(ctx, userID, id) // on success, end queues the follow-up
		if err == nil || !errors.Is(err, keeper.ErrSessionCompleted) {
			return res, 0, err
		}
	}
	p.dropSession(userID, id)
	p.scheduleSettle(ctx, userID, id)
	return nil, 0, fmt.Errorf("provider: session %s: %w", id, keeper.ErrSessionCompleted)
}

// lastActivity is when the session was last used, by what the store holds:
// its start, its last write, its last turn.
func (p *MemoryProvider) lastActivity(ctx context.Context, userID string, doc *store.Session) (time.Time, error) {
	last := doc.StartTime
	if doc.UpdatedAt.After(last) {
		last = doc.UpdatedAt
	}
	turns, err := p.store.ListTurns(ctx, userID, doc.ID, max(1, doc.State.PrunedThrough))
	if err != nil {
		return last, fmt.Errorf("provider: read the turns of session %s: %w", doc.ID, err)
	}
	if n := len(turns); n > 0 && turns[n-1].Time.After(last) {
		last = turns[n-1].Time
	}
	return last, nil
}

// pushBack lets go of a session still in use: its marker is due again
// at due (unless it changed since the claim), and its timer here, if it
// is live here, fires then.
func (p *MemoryProvider) pushBack(ctx context.Context, m marker, etag, userID, id string, due time.Time) {
	m.Holder, m.Until = "", time.Time{}
	if _, err := p.putMarker(ctx, m, due, etag); err != nil && !errors.Is(err, store.ErrConflict) {
		p.log.WarnContext(ctx, "memory: session marker not pushed back; a sweep will look again", "session", id, "err", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ls, ok := p.live.get(liveKey(userID, id)); ok && ls.timer != nil {
		ls.timer.Reset(due.Sub(p.cfg.Now()))
	}
}

// dropSession lets go of the live copy of a session, if any.
func (p *MemoryProvider) dropSession(userID, id string) {
	p.dropLive(userID, func(ls *liveSession) bool { return ls.ks.ID() == id })
}

// scheduleSettle queues the follow-up of a session's end (settle).
func (p *MemoryProvider) scheduleSettle(ctx context.Context, userID, id string) {
	p.queue.offer(job{
		vals: carrying(ctx),
		key:  "settle\x00" + userID + "\x00" + id,
		what: "follow-up of session " + id,
		run:  func(ctx context.Context) error { return p.settle(ctx, userID, id) },
	})
}

// settle is the follow-up of a session's end: the summaries of the
// user's sessions that ended while the model was failing, then, with
// ReflectOnEnd, reflection of the user's pending sessions (this one
// included), batch after batch. When both succeeded the session's marker goes; otherwise
// the retries, then the sweeps once the claim has expired, do it again.
func (p *MemoryProvider) settle(ctx context.Context, userID, id string) error {
	n, err := p.keeper.RetrySummaries(ctx, userID)
	if n > 0 {
		p.log.InfoContext(ctx, "memory: session summaries completed", "user", userID, "sessions", n)
	}
	// Every batch here, not queued: the marker stays until the user has
	// no session left to reflect on.
	for more := p.cfg.Reflection == ReflectOnEnd; more; {
		var rerr error
		more, rerr = p.reflectBatch(ctx, userID)
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return err
	}
	p.unmark(ctx, userID, id)
	return nil
}

// sweepLoop queues the work of the due markers at once, then every
// Config.SweepInterval (with a tenth of jitter, so that instances started
// together spread their reads), until stop is closed.
func (p *MemoryProvider) sweepLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if err := p.sweep(p.queue.ctx); err != nil && p.queue.ctx.Err() == nil {
			p.log.Warn("memory: looking for outstanding session work", "err", err)
		}
		jitter := time.Duration(rand.Int64N(int64(p.cfg.SweepInterval)/10 + 1))
		t.Reset(p.cfg.SweepInterval + jitter)
	}
}

// sweep queues tend for the sessions whose markers are due, at most half
// the queue's capacity at once (the rest wait for the next sweep): one
// read of the markers' partition.
func (p *MemoryProvider) sweep(ctx context.Context) error {
	due, err := p.store.ListSessions(ctx, SweepUserID, store.SessionFilter{Until: p.cfg.Now().Add(time.Millisecond), Limit: max(1, p.cfg.QueueSize/2)})
	if err != nil {
		return fmt.Errorf("provider: list due session markers: %w", err)
	}
	for _, d := range due {
		m, err := decodeMarker(d)
		if err != nil {
			p.log.WarnContext(ctx, "memory: unreadable session marker dropped", "err", err)
			if err := p.store.DeleteDocument(ctx, SweepUserID, store.KindSessionSummary, d.ID); err != nil && !errors.Is(err, store.ErrNotFound) {
				p.log.WarnContext(ctx, "memory: unreadable session marker not dropped", "marker", d.ID, "err", err)
			}
			continue
		}
		p.scheduleTend(ctx, m.User, m.Session)
	}
	return nil
}
