package memoryservice

import (
	"cmp"
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

// acceptance is an update_memories request, checked, to accept.
type acceptance struct {
	store, scope string
	previousID   string // previous_update_id, if any
	// continues is the completed session the update continues
	// (continuedSession), or "".
	continues string
	msgs      []agent.Message
	delay     time.Duration
	// storeTag is the ETag of the memory store's definition as the
	// accept read it: a batch written whole checks it (errStaleStore).
	storeTag string
}

// accept makes an update durable before it is answered. First enqueue
// writes it as its scope's queued update, superseding the queued update
// it continues, if no replica has claimed it: the debounce of
// update_delay, whichever replica accepted either. Failing that, the
// completed session a.continues is reopened and continued.
//
// The messages become turns of the session. Where the store writes
// batches (store.RecordBatch), they are appended in enqueue's batch, and
// an accept waits for one commit. Otherwise, and when a session is
// reopened, they are recorded with p after it, one by one: until the last
// is, or acceptGrace, no replica claims the update (acceptanceDone), and
// the record is not written again. It returns the update as the API
// shows it on acceptance.
func (s *Service) accept(ctx context.Context, p providerLike, a acceptance) (updateResponse, error) {
	userID := UserID(a.store, a.scope)
	unlock := s.lockScope("accept", userID) // this replica's accepts of the scope in turn, without store conflicts
	defer unlock()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return updateResponse{}, unavailable("the server is shutting down")
	}
	now := s.cfg.Now()
	rec := &updateRecord{ID: newUpdateID(a.store, a.scope), Store: a.store, Scope: a.scope, Status: statusQueued,
		PreviousUpdateID: a.previousID, CreatedAt: now, DueAt: now.Add(a.delay), AcceptTurns: len(a.msgs)}
	old, etag, turns, err := s.enqueue(ctx, p, a, rec)
	if err != nil {
		return updateResponse{}, err
	}
	var oldMeter *usage.Meter // the superseded update's, if accepted here
	if old != nil {
		oldMeter = s.takeLocal(old.ID)
	}
	// The superseded update's meter, accepted here, goes on counting;
	// the pruning the turns set off counts on it (a run here adds it).
	meter := cmp.Or(oldMeter, &usage.Meter{})
	rctx := usage.WithMeter(ctx, meter)
	if turns != nil {
		sess, err := agent.NewSession(rec.SessionID, userID)
		if err == nil {
			err = p.Recorded(rctx, sess, turns...)
		}
		if err != nil {
			s.log.WarnContext(ctx, "memoryservice: the turns of an update stored, not given to the memory session", "update", rec.ID, "err", err)
		}
		s.schedule(rec.ID, rec.DueAt, meter)
		return rec.response(), nil
	}
	if rec.Reopened {
		ok, err := s.reopenSession(ctx, userID, a.continues)
		if err != nil {
			return updateResponse{}, fmt.Errorf("continue the previous update's session: %w", err)
		}
		if !ok { // gone or busy: a session of its own
			if etag, err = s.ownSession(ctx, rec, etag); err != nil {
				return updateResponse{}, err
			}
		}
	}
	sess, err := agent.NewSession(rec.SessionID, userID)
	if err != nil {
		return updateResponse{}, err
	}
	for i, m := range a.msgs {
		m.ID = acceptedMessageID(rec.ID, i) // a retried record stores the turn once
		m.CreatedAt = now
		if err := p.Record(rctx, sess, m); err != nil {
			return updateResponse{}, fmt.Errorf("record items: %w", err)
		}
	}
	s.schedule(rec.ID, rec.DueAt, meter)
	return rec.response(), nil
}

// acceptedMessageID is the id of message i of update id, which its turn
// keeps.
func acceptedMessageID(id string, i int) string { return id + "-" + strconv.Itoa(i) }

// acceptanceDone reports whether the acceptance of rec is finished, and
// how many of the turns it records its session holds. It is finished
// when the session holds all of them, or when the session it reopened
// is gone: forgotten (its chat summary deleted) while the update waited,
// which takes the turns with it. An update accepted by an earlier
// version is done once its record says so.
func (s *Service) acceptanceDone(ctx context.Context, rec *updateRecord) (done bool, recorded int, err error) {
	if !rec.Accepting {
		return true, rec.AcceptTurns, nil
	}
	if rec.AcceptTurns == 0 {
		return false, 0, nil
	}
	userID := UserID(rec.Store, rec.Scope)
	turns, err := s.st.ListTurns(ctx, userID, rec.SessionID, 0)
	if err != nil {
		return false, 0, fmt.Errorf("read the turns of update %s: %w", rec.ID, err)
	}
	want := make(map[string]bool, rec.AcceptTurns)
	for i := range rec.AcceptTurns {
		want[acceptedMessageID(rec.ID, i)] = true
	}
	for _, t := range turns {
		if len(t.Messages) > 0 && want[t.Messages[0].ID] {
			recorded++
		}
	}
	if recorded == rec.AcceptTurns || !rec.Reopened {
		return recorded == rec.AcceptTurns, recorded, nil
	}
	// A session reopened was stored when the acceptance began.
	_, err = s.st.GetSession(ctx, userID, rec.SessionID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return true, recorded, nil
	case err != nil:
		return false, recorded, fmt.Errorf("read the session of update %s: %w", rec.ID, err)
	}
	return false, recorded, nil
}

// stillAccepting reports whether rec is being accepted now: its
// acceptance not finished, and younger than acceptGrace. A failure to
// read its turns counts as still accepting, until acceptGrace.
func (s *Service) stillAccepting(ctx context.Context, rec *updateRecord) bool {
	if !rec.Accepting || s.cfg.Now().Sub(rec.CreatedAt) >= acceptGrace {
		return false
	}
	done, _, err := s.acceptanceDone(ctx, rec)
	if err != nil {
		s.log.WarnContext(ctx, "memoryservice: acceptance of an update not checked", "update", rec.ID, "err", err)
	}
	return !done
}

// enqueue writes rec, being accepted, as the queued update of its scope,
// in one batch of record writes, in this order: the scope's queue record
// names rec (under the ETag it was read with; created, with the scope's
// record, for a new scope); rec's marker, due at its due time, so that
// any replica's poller finds it; rec's record; and, if the queue record
// named a queued update no replica has claimed, that update superseded
// by rec (under its ETag) and its marker dropped, rec continuing its
// session. Where the store has store.RecordBatch the batch is one
// transaction, and a conflict (another replica's accept of the scope, or
// its claim of the superseded update) leaves nothing written: enqueue
// reads again and retries. The batch then appends a.msgs too, as turns
// of rec's session built by p (unless the session is one to reopen
// first), which it returns with their numbers, and rec's acceptance is
// done with it; and it checks, last, that the memory store's definition
// is as the accept read it (a.storeTag), which may be the one this
// replica read for an earlier accept (acceptingStore): changed or
// deleted since, the batch fails and enqueue returns errStaleStore.
// Elsewhere the writes are made one by one, each durable
// before the next (a marker of nothing is dropped by a poll once it is
// older than acceptGrace: until then its record may be on its way).
// Without an update to continue, rec continues a.continues, if set, or
// has a session of its own. It returns the update superseded (nil if
// none) and rec's ETag. A scope being deleted is a retryable 503.
func (s *Service) enqueue(ctx context.Context, p providerLike, a acceptance, rec *updateRecord) (*updateRecord, string, []store.Turn, error) {
	_, batched := s.rec.(store.RecordBatch)
	qk, rk := queueKey(a.store, a.scope), updateKey(rec.ID)
	cacheKey := qk.user + "\x00" + qk.id
	for attempt := range maxScopeAttempts {
		// Only a batch written whole may start from the cache: written
		// one by one, a stale update would be found out after the new
		// one is written naming its session.
		var sc scopeState
		cached := false
		if attempt == 0 && batched {
			sc, cached = s.cachedScope(cacheKey)
		}
		var err error
		if !cached {
			if sc, err = s.readScope(ctx, a); err != nil {
				return nil, "", nil, err
			}
		}
		q, old := sc.q, sc.old
		now := s.cfg.Now()
		if now.Before(q.DeletingUntil) {
			return nil, "", nil, unavailable(fmt.Sprintf("scope %q of memory store %q is being deleted; retry", a.scope, a.store))
		}
		rec.newSession()
		switch {
		case old != nil:
			rec.SessionID, rec.Turns, rec.Spent = old.SessionID, old.Turns+rec.AcceptTurns, old.Spent
		case a.continues != "":
			rec.SessionID, rec.Reopened = a.continues, true
		}
		q.Queued = rec.ID
		var turns []store.Turn
		if batched && !rec.Reopened && len(a.msgs) > 0 {
			if turns, err = acceptedTurns(p, rec, a); err != nil {
				return nil, "", nil, err
			}
		}
		rec.Accepting = len(a.msgs) > 0 && turns == nil
		mk := activeKey(rec.ID)
		ws, err := recordWrites(
			recordPut{qk, sc.qtag, now, false, q},
			recordPut{mk, store.CreateOnly, rec.DueAt, true, marker{At: now}},
			recordPut{rk, store.CreateOnly, rec.CreatedAt, true, rec})
		if err != nil {
			return nil, "", nil, err
		}
		if old != nil {
			old.Status, old.SupersededBy, old.FinishedAt = statusSuperseded, rec.ID, now
			sw, err := recordWrites(recordPut{updateKey(old.ID), sc.oldTag, old.CreatedAt, false, old})
			if err != nil {
				return nil, "", nil, err
			}
			om := activeKey(old.ID)
			ws = append(ws, sw[0], store.RecordWrite{UserID: om.user, Delete: om.id})
		}
		for i := range turns {
			ws = append(ws, store.RecordWrite{UserID: UserID(a.store, a.scope), Append: &turns[i]})
		}
		checkAt := -1 // the check of the store's definition, last
		if batched && a.storeTag != "" {
			checkAt = len(ws)
			sk := storeKey(a.store)
			ws = append(ws, store.RecordWrite{UserID: sk.user, Check: &store.RecordVersion{ID: sk.id, ETag: a.storeTag}})
		}
		err = store.WriteRecords(ctx, s.rec, ws)
		s.queues.drop(cacheKey)
		var we *store.RecordWriteError
		switch {
		case err == nil:
			if batched {
				s.queues.put(cacheKey, queuedState{q: q, qtag: ws[0].Put.ETag, upd: *ws[2].Put})
			}
			return old, ws[2].Put.ETag, turns, nil
		case errors.As(err, &we) && we.Index == 4 && we.Applied == 4: // written one by one, all but the marker's drop
			s.log.WarnContext(ctx, "memoryservice: dropping a superseded update's marker", "update", old.ID, "err", err)
			return old, ws[2].Put.ETag, nil, nil
		case !errors.As(err, &we) || !errors.Is(err, store.ErrConflict):
			return nil, "", nil, err
		case we.Index == checkAt:
			s.defs.drop(a.store)
			return nil, "", nil, errStaleStore
		case we.Applied == 0:
			continue // nothing written: the scope changed meanwhile
		case we.Index != 3 || we.Applied != 3:
			return nil, "", nil, err
		}
		// Written one by one, rec is, but the update it continues changed
		// before it was superseded: superseded still, unless claimed.
		etag := ws[2].Put.ETag
		cur, curTag, err := s.queuedUpdate(ctx, old.ID)
		if err != nil {
			return nil, "", nil, err
		}
		superseded := false
		if cur != nil {
			if superseded, err = s.supersede(ctx, cur, curTag, rec.ID); err != nil {
				return nil, "", nil, err
			}
		}
		if !superseded { // claimed by a replica meanwhile: its session is being ended
			etag, err = s.ownSession(ctx, rec, etag)
			return nil, etag, nil, err
		}
		s.unmark(ctx, old.ID)
		return cur, etag, nil, nil
	}
	return nil, "", nil, fmt.Errorf("memoryservice: queue record of scope %q in %q: %w", a.scope, a.store, store.ErrConflict)
}

// acceptedTurns returns the turns of a.msgs in rec's session, one a
// message, as p builds them, each message with its id in rec
// (acceptedMessageID) and the time of the acceptance.
func acceptedTurns(p providerLike, rec *updateRecord, a acceptance) ([]store.Turn, error) {
	sess, err := agent.NewSession(rec.SessionID, UserID(a.store, a.scope))
	if err != nil {
		return nil, err
	}
	turns := make([]store.Turn, len(a.msgs))
	for i, m := range a.msgs {
		m.ID, m.CreatedAt = acceptedMessageID(rec.ID, i), rec.CreatedAt
		if turns[i], err = p.Turn(sess, m); err != nil {
			return nil, fmt.Errorf("record items: %w", err)
		}
	}
	return turns, nil
}

// scopeState is what an accept reads of its scope before it writes: the
// scope's queue record q, with its ETag (store.CreateOnly when there is
// none yet), and the queued update it names that no replica has claimed,
// old, with its ETag (nil when there is none).
type scopeState struct {
	q      scopeQueue
	qtag   string
	old    *updateRecord
	oldTag string
}

// readScope reads the scope of a as an accept starts from. A scope
// without a queue record has its scope record noted first, so that the
// store's deletion finds the scope before anything of it is written.
func (s *Service) readScope(ctx context.Context, a acceptance) (scopeState, error) {
	var sc scopeState
	qtag, err := s.getRecord(ctx, queueKey(a.store, a.scope), &sc.q)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if err := s.noteScope(ctx, a.store, a.scope); err != nil {
			return sc, err
		}
		qtag = store.CreateOnly
	case err != nil:
		return sc, err
	}
	sc.qtag = qtag
	if sc.q.Queued != "" {
		if sc.old, sc.oldTag, err = s.queuedUpdate(ctx, sc.q.Queued); err != nil {
			return sc, err
		}
	}
	return sc, nil
}

// cachedScope returns the scope's queue record and the update it names as
// this replica last wrote them (queuedState), and whether it keeps them.
// The batch written under their ETags fails if either changed since.
func (s *Service) cachedScope(key string) (scopeState, bool) {
	st, ok := s.queues.get(key)
	if !ok {
		return scopeState{}, false
	}
	var u updateRecord
	if _, err := decodeRecord(&st.upd, &u); err != nil || u.ID != st.q.Queued {
		return scopeState{}, false
	}
	return scopeState{q: st.q, qtag: st.qtag, old: &u, oldTag: st.upd.ETag}, true
}

// newSession gives u, being accepted, a session of its own, continuing
// none.
func (u *updateRecord) newSession() {
	u.SessionID, u.Turns, u.Spent, u.Reopened = newID("mss_"), u.AcceptTurns, nil, false
}

// ownSession gives rec, being accepted, a session of its own where the
// one it was to continue is not to be, and writes its record under etag,
// returning the new ETag.
func (s *Service) ownSession(ctx context.Context, rec *updateRecord, etag string) (string, error) {
	rec.newSession()
	return s.writeRecord(ctx, updateKey(rec.ID), etag, rec.CreatedAt, true, rec)
}

// recordPut is a registry record to write in a batch (recordWrites).
type recordPut struct {
	k      recKey
	etag   string
	at     time.Time
	active bool
	v      any
}

// recordWrites encodes puts as the writes of a batch.
func recordWrites(puts ...recordPut) ([]store.RecordWrite, error) {
	ws := make([]store.RecordWrite, len(puts))
	for i, p := range puts {
		r, err := encodeRecord(p.k, p.etag, p.at, p.active, p.v)
		if err != nil {
			return nil, err
		}
		ws[i] = store.RecordWrite{UserID: p.k.user, Put: r}
	}
	return ws, nil
}

// queuedUpdate reads update id, with its ETag, if it is queued and no
// replica has claimed it: an update a new one of its scope may
// supersede. It is nil otherwise.
func (s *Service) queuedUpdate(ctx context.Context, id string) (*updateRecord, string, error) {
	var rec updateRecord
	tag, err := s.getRecord(ctx, updateKey(id), &rec)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrInvalid) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	if rec.Status != statusQueued || rec.Claim != nil {
		return nil, "", nil
	}
	return &rec, tag, nil
}

// supersede marks old (read with ETag tag) superseded by update by,
// under that ETag, and reports whether it did: an update claimed by a
// replica meanwhile is not superseded.
func (s *Service) supersede(ctx context.Context, old *updateRecord, tag, by string) (bool, error) {
	for range maxScopeAttempts {
		old.Status, old.SupersededBy, old.FinishedAt = statusSuperseded, by, s.cfg.Now()
		err := s.putRecord(ctx, updateKey(old.ID), tag, old.CreatedAt, false, old)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, store.ErrNotFound):
			return false, nil
		case !errors.Is(err, store.ErrConflict):
			return false, fmt.Errorf("supersede update %s: %w", old.ID, err)
		}
		cur, curTag, err := s.queuedUpdate(ctx, old.ID)
		if err != nil || cur == nil {
			return false, err
		}
		old, tag = cur, curTag
	}
	return false, fmt.Errorf("supersede update %s: %w", old.ID, store.ErrConflict)
}

// providerLike is the part of provider.MemoryProvider an update uses.
type providerLike interface {
	Record(ctx context.Context, sess *agent.Session, msgs ...agent.Message) error
	Turn(sess *agent.Session, msgs ...agent.Message) (store.Turn, error)
	Recorded(ctx context.Context, sess *agent.Session, turns ...store.Turn) error
}

// localUpdate is an update accepted by this replica, until claimed:
// a timer for its due time, when it claims the update at once if a
// worker is free (what a poll would do later; correctness does not
// depend on it), and the meter of its tokens so far, which its run
// goes on counting if it runs here.
type localUpdate struct {
	timer *time.Timer
	meter *usage.Meter
	due   time.Time
}

// schedule keeps update id, due at due, as accepted here.
func (s *Service) schedule(id string, due time.Time, meter *usage.Meter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.local[id] = &localUpdate{meter: meter, due: due, timer: time.AfterFunc(max(0, due.Sub(s.cfg.Now())), func() { s.claimNow(id) })}
}

// takeLocal returns the meter of update id if it was accepted here, and
// forgets it: claimed here or elsewhere, its due time has come.
func (s *Service) takeLocal(id string) *usage.Meter {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.local[id]
	if u == nil {
		return nil
	}
	u.timer.Stop()
	delete(s.local, id)
	return u.meter
}

// dropTimer forgets update id, if it was accepted here.
func (s *Service) dropTimer(id string) { s.takeLocal(id) }

// dropStaleLocal forgets the updates accepted here that were due longer
// than a lease ago: another replica claimed them.
func (s *Service) dropStaleLocal() {
	cut := s.cfg.Now().Add(-s.cfg.LeaseTTL)
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, u := range s.local {
		if u.due.Before(cut) {
			u.timer.Stop()
			delete(s.local, id)
		}
	}
}

// resume prepares the updates that a replica accepted and did not
// finish for the pollers: a crash after a new update was written and
// before the queued one it continues was marked superseded leaves both
// queued on one session, and the older is superseded now, as it would
// have been (unless the newer is still being accepted). Older updates,
// kept under RegistryUserID, get markers.
func (s *Service) resume(ctx context.Context) error {
	recs, err := s.unfinishedUpdates(ctx)
	if err != nil {
		return fmt.Errorf("memoryservice: resume updates: %w", err)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].CreatedAt.Before(recs[j].CreatedAt) })
	lastOf := map[string]*updateRecord{} // newest unfinished update by session
	for _, rec := range recs {
		lastOf[rec.SessionID] = rec
	}
	now := s.cfg.Now()
	for _, rec := range recs {
		if rec.Status == statusInProgress && (rec.Claim == nil || rec.Claim.Holder == s.cfg.ReplicaID) {
			s.mark(ctx, rec.ID, now) // cut short unclaimed, or by this replica before it restarted: due at once
		}
		last := lastOf[rec.SessionID]
		if rec.Status != statusQueued || last == rec || s.stillAccepting(ctx, last) {
			continue
		}
		cur, tag, err := s.queuedUpdate(ctx, rec.ID)
		if err != nil {
			return fmt.Errorf("memoryservice: resume updates: %w", err)
		}
		if cur == nil {
			continue
		}
		ok, err := s.supersede(ctx, cur, tag, last.ID)
		if err != nil {
			return fmt.Errorf("memoryservice: resume updates: %w", err)
		}
		if ok {
			s.unmark(ctx, rec.ID)
			s.log.InfoContext(ctx, "memoryservice: an update left queued by a crash superseded", "update", rec.ID, "superseded_by", last.ID)
		}
	}
	return nil
}

// unfinishedUpdates reads the updates not yet finished: those the
// markers name (dropping the markers of records finished or gone), and
// the older ones kept active under RegistryUserID.
func (s *Service) unfinishedUpdates(ctx context.Context) ([]*updateRecord, error) {
	marks, err := s.listRecords(ctx, activeUser, store.RecordFilter{Prefix: "update."})
	if err != nil {
		return nil, err
	}
	var recs []*updateRecord
	marked := map[string]bool{}
	for _, m := range marks {
		marked[strings.TrimPrefix(m.ID, "update.")] = true
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
	older, err := s.listRecords(ctx, RegistryUserID, store.RecordFilter{Prefix: "update.", State: store.RecordActive})
	if err != nil {
		return nil, err
	}
	for _, d := range older {
		var rec updateRecord
		if _, err := decodeRecord(d, &rec); err != nil || !rec.active() {
			s.log.ErrorContext(ctx, "memoryservice: unreadable update record not resumed", "id", d.ID, "err", err)
			continue
		}
		if marked[rec.ID] {
			continue // read already
		}
		// A marker, for the pollers.
		if err := s.putRecord(ctx, activeKey(rec.ID), "", rec.DueAt, true, marker{At: s.cfg.Now()}); err != nil {
			return nil, err
		}
		recs = append(recs, &rec)
	}
	return recs, nil
}
