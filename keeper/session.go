package keeper

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/store"
)

// maxPutAttempts bounds the reload-and-retry loop on an ETag conflict of
// the session document (which holds only small state: turns have records
// of their own).
const maxPutAttempts = 8

// Session is the live memory of one session. It is safe for concurrent use:
// AddTurn and RunMemory may run while a Prune is making model calls.
type Session struct {
	k      *Keeper
	userID string
	id     string
	init   InitBlock
	// legacy is set when the session was written by an earlier version
	// (turns inside the session document, interaction ids by turn range):
	// a prune then also removes any older interaction it overlaps.
	legacy bool

	mu  sync.Mutex
	doc *store.Session // the last state written or read, with its ETag;
	// doc.State.Turns caches the turns the context needs (the unpruned
	// ones and the last ActiveTurns), in Seq order; they are never written
	// into the session document.
	counts map[string]int // token counts of rendered pieces, by key
	// read is the number through which this session has read the stored
	// turns: every turn up to it that the context or a prune needs is
	// cached. It is this session's own, never taken from a document:
	// doc.State.TurnCounter, reloaded from another process's write, may
	// count turns this one has not read.
	read int

	pruneMu sync.Mutex // serialises Prune and End
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// UserID returns the id of the user the session belongs to.
func (s *Session) UserID() string { return s.userID }

// Completed reports whether the session has ended (here or in another
// process that this one has heard of): it takes no more turns.
func (s *Session) Completed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.doc.Status == store.SessionCompleted
}

// Init returns the initialization block loaded when the session opened.
func (s *Session) Init() InitBlock {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.init
}

// State returns a copy of the live session state.
func (s *Session) State() store.SessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.doc.State
	st.Turns = slices.Clone(st.Turns)
	return st
}

// AddTurn appends a turn and stores it before returning: once AddTurn
// returns nil the turn survives a crash. Its messages are first cut to the
// size limits (see FitTurn). The turn's Seq is assigned (the next number
// in the session, across every process writing it) and a zero Time becomes
// now. A turn without an ID gets one from its message ids, so adding the
// same messages again stores nothing: the turn already stored is returned.
func (s *Session) AddTurn(ctx context.Context, t store.Turn) (store.Turn, error) {
	if len(t.Messages) == 0 {
		return t, errors.New("keeper: add turn: no messages")
	}
	t = s.k.NewTurn(s.userID, s.id, t)
	s.mu.Lock()
	if s.doc.Status == store.SessionCompleted {
		s.mu.Unlock()
		return t, fmt.Errorf("%w: %s", ErrSessionCompleted, s.id)
	}
	if i := slices.IndexFunc(s.doc.State.Turns, func(c store.Turn) bool { return c.ID == t.ID }); i >= 0 {
		have := s.doc.State.Turns[i]
		s.mu.Unlock()
		return have, nil
	}
	t.Seq = s.read + 1
	s.mu.Unlock()

	if err := s.k.st.AppendTurn(ctx, s.userID, &t); err != nil {
		return t, fmt.Errorf("keeper: add turn to session %s: %w", s.id, err)
	}
	s.Stored(ctx, t)
	return t, nil
}

// NewTurn returns t as AddTurn stores it in session sessionID of userID,
// without its Seq: its messages cut to the size limits, a zero Time made
// now, an ID from its message ids when it has none. A caller that appends
// the turn to the store itself, in a batch of its own writes
// (store.RecordWrite.Append), builds it here and tells an open Session
// with Stored.
func (k *Keeper) NewTurn(userID, sessionID string, t store.Turn) store.Turn {
	t.Messages = slices.Clone(t.Messages)
	if t.Time.IsZero() {
		t.Time = k.cfg.Now().UTC()
	}
	if t.ID == "" {
		t.ID = store.TurnID(&t)
	}
	if t.ID == "" {
		t.ID = "turn-" + agent.NewID()
	}
	FitTurn(&t)
	t.UserID, t.SessionID = userID, sessionID
	return t
}

// Stored notes t, a turn of the session stored with the number t.Seq, by
// AddTurn or by the caller (NewTurn): the session keeps it in its context
// and counts it towards the next prune. Turns stored before it that the
// session has not seen (added by another process) are read, so the
// context and the next prune see every turn; when that read fails the
// next prune reads them.
func (s *Session) Stored(ctx context.Context, t store.Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := s.read
	s.cache(t)
	switch {
	case t.Seq <= last:
		// Read already (Open read the turns the store held).
	case t.Seq == last+1:
		s.read = t.Seq
	default:
		others, err := s.k.st.ListTurns(ctx, s.userID, s.id, last+1)
		if err != nil {
			s.k.cfg.Logger.WarnContext(ctx, "memory: turns added elsewhere not read; the next prune reads them", "session", s.id, "err", err)
			return
		}
		s.cacheRead(others, last)
	}
}

// cacheRead caches turns, read from the store numbered from after on,
// and records them read; the caller holds s.mu.
func (s *Session) cacheRead(turns []*store.Turn, after int) {
	for _, t := range turns {
		s.cache(*t)
	}
	s.read = max(s.read, after)
	if n := len(turns); n > 0 {
		s.read = max(s.read, turns[n-1].Seq)
	}
}

// cache puts a stored turn into the in-memory turns, in Seq order; the
// caller holds s.mu.
func (s *Session) cache(t store.Turn) {
	st := &s.doc.State
	st.TurnCounter = max(st.TurnCounter, t.Seq)
	if t.Seq <= st.PrunedThrough-s.k.cfg.ActiveTurns {
		return // pruned and out of the context already
	}
	i, found := slices.BinarySearchFunc(st.Turns, t.Seq, func(c store.Turn, seq int) int { return c.Seq - seq })
	if !found {
		st.Turns = slices.Insert(st.Turns, i, t)
	}
}

// refresh reads the turns stored since the last one this session has
// read (by other processes, or missed by a failed read), so that a prune
// or an end covers every turn. It reads from s.read, not from the last
// turn cached: a turn added here may be cached above turns not yet read.
func (s *Session) refresh(ctx context.Context) error {
	s.mu.Lock()
	after := max(s.read, s.doc.State.PrunedThrough-s.k.cfg.ActiveTurns)
	s.mu.Unlock()
	turns, err := s.k.st.ListTurns(ctx, s.userID, s.id, after+1)
	if err != nil {
		return fmt.Errorf("keeper: read turns of session %s: %w", s.id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cacheRead(turns, after)
	return nil
}

// update applies change to a copy of the session document and writes it
// with the current ETag, reloading and reapplying on a conflict. change
// reports whether there is anything to write. The cached turns stay in
// memory; the document is written without them.
func (s *Session) update(ctx context.Context, what string, change func(*store.Session) (bool, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for attempt := 1; ; attempt++ {
		doc := cloneDoc(s.doc)
		write, err := change(doc)
		if err != nil || !write {
			return err
		}
		doc.UpdatedAt = s.k.cfg.Now().UTC()
		w := *doc
		w.State.Turns = nil
		err = s.k.st.PutSession(ctx, s.userID, &w)
		if err == nil {
			doc.ETag = w.ETag
			s.doc = doc
			return nil
		}
		if !errors.Is(err, store.ErrConflict) || attempt == maxPutAttempts {
			return fmt.Errorf("keeper: %s in session %s: %w", what, s.id, err)
		}
		fresh, gerr := s.k.st.GetSession(ctx, s.userID, s.id)
		if gerr != nil {
			return fmt.Errorf("keeper: %s in session %s: reload after conflict: %w", what, s.id, gerr)
		}
		s.k.cfg.Logger.DebugContext(ctx, "memory: session changed elsewhere; reloaded", "session", s.id, "attempt", attempt)
		defaultSummaryThrough(&fresh.State)
		fresh.State.Turns = s.doc.State.Turns
		fresh.State.TurnCounter = max(fresh.State.TurnCounter, s.doc.State.TurnCounter)
		s.doc = fresh
		s.trim()
	}
}

// trim drops cached turns that are pruned and out of the context; the
// caller holds s.mu.
func (s *Session) trim() {
	keepFrom := s.doc.State.PrunedThrough - s.k.cfg.ActiveTurns
	s.doc.State.Turns = slices.DeleteFunc(s.doc.State.Turns, func(t store.Turn) bool { return t.Seq <= keepFrom })
}

// defaultSummaryThrough reads a document of an earlier version, where the
// cumulative summary always covered every pruned turn.
func defaultSummaryThrough(st *store.SessionState) {
	if st.SummaryThrough == 0 {
		st.SummaryThrough = st.PrunedThrough
	}
}

func cloneDoc(d *store.Session) *store.Session {
	c := *d
	c.State.Turns = slices.Clone(d.State.Turns)
	return &c
}

// Pending reports how many turns await pruning.
func (s *Session) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(unpruned(s.doc.State))
}

// NeedsPrune reports whether K turns have accumulated since the last prune.
func (s *Session) NeedsPrune() bool { return s.Pending() >= s.k.cfg.K }
