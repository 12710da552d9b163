// Package mem is an in-process store.Store: every user's documents live in
// maps behind one read-write mutex, for tests, examples and short-lived
// programs. Nothing is persisted.
//
// # Search
//
// It implements the whole portable contract of package store and passes
// the conformance suite in store/storetest: vector legs rank by cosine
// similarity with driver.VectorRanker, the full-text leg is BM25 (k1 = 1.2,
// b = 0.75) over lower-cased word tokens of the user's documents of the
// kind, and legs are fused with driver.Combine. Documents are deep-copied on
// the way in and out, so callers never share memory with the store.
//
// Searches scan every document of the user and kind, which is fine for
// thousands of documents, not millions.
package mem

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

// Config configures a Store.
type Config struct {
	// Dimensions is the vector length the store holds; zero accepts any
	// length (vectors of another length than a query's are then skipped).
	Dimensions int
}

// Store is an in-memory store.Store. Use New; the zero value is not usable.
type Store struct {
	v driver.Validator

	mu     sync.RWMutex
	closed bool
	users  map[string]*userDocs
	etags  uint64                  // last ETag handed out
	log    []*store.DeletionRecord // the deletion log; log[i].Seq == i+1
}

// userDocs is one user's partition.
type userDocs struct {
	interactions map[string]*store.Interaction
	insights     map[string]*store.Insight
	sessions     map[string]*store.Session
	turns        map[string][]*store.Turn // by session, in Seq order
	state        *store.UserState
	records      map[string]*store.Record
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.DeletionLog = (*Store)(nil)
	_ store.Records     = (*Store)(nil)
)

// New returns an empty store.
func New(cfg Config) *Store {
	return &Store{v: driver.Validator{Dimensions: cfg.Dimensions}, users: make(map[string]*userDocs)}
}

// begin checks ctx, the store and the user id before a call.
func (s *Store) begin(ctx context.Context, userID string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mem: %w", err)
	}
	if err := store.CheckUserID(userID); err != nil {
		return err
	}
	return nil
}

// user returns userID's partition, or nil; the caller holds s.mu.
func (s *Store) user(userID string) *userDocs { return s.users[userID] }

// userForWrite returns userID's partition, creating it; the caller holds
// s.mu for writing.
func (s *Store) userForWrite(userID string) *userDocs {
	u := s.users[userID]
	if u == nil {
		u = &userDocs{
			interactions: make(map[string]*store.Interaction),
			insights:     make(map[string]*store.Insight),
			sessions:     make(map[string]*store.Session),
			turns:        make(map[string][]*store.Turn),
			records:      make(map[string]*store.Record),
		}
		s.users[userID] = u
	}
	return u
}

func (s *Store) rlock() error {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return fmt.Errorf("mem: %w", store.ErrClosed)
	}
	return nil
}

func (s *Store) lock() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("mem: %w", store.ErrClosed)
	}
	return nil
}

func inRange(t, since, until time.Time) bool {
	return (since.IsZero() || !t.Before(since)) && (until.IsZero() || t.Before(until))
}

func checkLimit(limit int) error {
	if limit < 0 {
		return fmt.Errorf("%w: negative limit %d", store.ErrInvalid, limit)
	}
	return nil
}

func checkFilterSession(id string) error {
	if id == "" {
		return nil
	}
	return store.CheckID("session id filter", id)
}

// PutInteraction implements store.Store.
func (s *Store) PutInteraction(ctx context.Context, userID string, doc *store.Interaction) error {
	return put(ctx, s, userID, doc, s.v.Interaction, func(u *userDocs, c *store.Interaction) { u.interactions[c.ID] = c }, cloneInteraction)
}

// GetInteraction implements store.Store.
func (s *Store) GetInteraction(ctx context.Context, userID, id string) (*store.Interaction, error) {
	return get(ctx, s, userID, "interaction", id,
		func(u *userDocs) map[string]*store.Interaction { return u.interactions },
		func(*store.Interaction) bool { return true },
		cloneInteraction)
}

// ListInteractions implements store.Store. They are the last f.Limit, in
// time order.
func (s *Store) ListInteractions(ctx context.Context, userID string, f store.InteractionFilter) ([]*store.Interaction, error) {
	return list(ctx, s, userID, f.Limit, f.SessionID,
		func(u *userDocs) map[string]*store.Interaction { return u.interactions },
		func(d *store.Interaction) bool {
			return (f.SessionID == "" || d.SessionID == f.SessionID) &&
				(!f.MetadataPending || d.MetadataPending) &&
				inRange(d.Timestamp, f.Since, f.Until)
		},
		func(a, b *store.Interaction) int {
			return cmp.Or(a.Timestamp.Compare(b.Timestamp), cmp.Compare(a.FirstTurn, b.FirstTurn), cmp.Compare(a.ID, b.ID))
		},
		cloneInteraction, true)
}

// PutInsight implements store.Store.
func (s *Store) PutInsight(ctx context.Context, userID string, doc *store.Insight) error {
	return put(ctx, s, userID, doc, s.v.Insight, func(u *userDocs, c *store.Insight) { u.insights[c.ID] = c }, cloneInsight)
}

// GetInsight implements store.Store.
func (s *Store) GetInsight(ctx context.Context, userID, id string) (*store.Insight, error) {
	return get(ctx, s, userID, "insight", id,
		func(u *userDocs) map[string]*store.Insight { return u.insights },
		func(d *store.Insight) bool { return !d.Superseded() },
		cloneInsight)
}

// newestInsightFirst orders insights by CreatedAt, then ID, both
// descending.
func newestInsightFirst(a, b *store.Insight) int {
	return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
}

// ListInsights implements store.Store.
func (s *Store) ListInsights(ctx context.Context, userID string, f store.InsightFilter) ([]*store.Insight, error) {
	return list(ctx, s, userID, f.Limit, f.SessionID,
		func(u *userDocs) map[string]*store.Insight { return u.insights },
		func(d *store.Insight) bool {
			return (f.IncludeSuperseded || !d.Superseded()) &&
				(f.Type == "" || d.InsightType == f.Type) &&
				(f.Category == "" || d.Category == f.Category) &&
				(f.SessionID == "" || slices.Contains(d.SessionIDs, f.SessionID)) &&
				(f.Processed == nil || d.Processed == *f.Processed) &&
				inRange(d.CreatedAt, f.Since, f.Until)
		},
		newestInsightFirst, cloneInsight, false)
}

// FindInsightByHash implements store.Store.
func (s *Store) FindInsightByHash(ctx context.Context, userID, hash string) (*store.Insight, error) {
	if err := s.begin(ctx, userID); err != nil {
		return nil, err
	}
	if hash == "" {
		return nil, fmt.Errorf("%w: empty content hash", store.ErrInvalid)
	}
	if err := s.rlock(); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	var best *store.Insight
	if u := s.user(userID); u != nil {
		for _, d := range u.insights {
			if d.ContentHash == hash && !d.Superseded() && (best == nil || newestInsightFirst(d, best) < 0) {
				best = d
			}
		}
	}
	if best == nil {
		return nil, fmt.Errorf("mem: insight with hash %q: %w", hash, store.ErrNotFound)
	}
	return cloneInsight(best), nil
}

// SupersedeInsight implements store.Store.
func (s *Store) SupersedeInsight(ctx context.Context, userID, id string, sup store.Supersession) error {
	if err := s.begin(ctx, userID); err != nil {
		return err
	}
	sup, err := s.v.Supersession(id, sup)
	if err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	u := s.user(userID)
	if u == nil || u.insights[id] == nil {
		return fmt.Errorf("mem: supersede insight %q: %w", id, store.ErrNotFound)
	}
	d := u.insights[id]
	if d.Superseded() {
		if d.SupersededBy == sup.By && d.SupersedeReason == sup.Reason {
			return nil
		}
		return fmt.Errorf("mem: insight %q already superseded (%s by %q): %w", id, d.SupersedeReason, d.SupersededBy, store.ErrConflict)
	}
	// Readers copy documents under the read lock, so an update in place
	// under the write lock is safe.
	d.SupersededBy, d.SupersedeReason, d.SupersededAt = sup.By, sup.Reason, sup.At.UTC()
	return nil
}

// PutSession implements store.Store.
func (s *Store) PutSession(ctx context.Context, userID string, doc *store.Session) error {
	if err := s.begin(ctx, userID); err != nil {
		return err
	}
	if err := s.v.Session(userID, doc); err != nil {
		return err
	}
	c := cloneSession(doc)
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	u := s.userForWrite(userID)
	if doc.ETag == store.CreateOnly {
		if _, ok := u.sessions[doc.ID]; ok {
			return fmt.Errorf("mem: session %q already exists: %w", doc.ID, store.ErrConflict)
		}
	} else if doc.ETag != "" {
		old, ok := u.sessions[doc.ID]
		if !ok {
			return fmt.Errorf("mem: session %q no longer exists: %w", doc.ID, store.ErrConflict)
		}
		if old.ETag != doc.ETag {
			return fmt.Errorf("mem: session %q changed since read: %w", doc.ID, store.ErrConflict)
		}
	}
	s.etags++
	c.ETag = strconv.FormatUint(s.etags, 10)
	u.sessions[c.ID] = c
	doc.ETag = c.ETag
	return nil
}

// GetSession implements store.Store.
func (s *Store) GetSession(ctx context.Context, userID, sessionID string) (*store.Session, error) {
	return get(ctx, s, userID, "session", sessionID,
		func(u *userDocs) map[string]*store.Session { return u.sessions },
		func(*store.Session) bool { return true },
		cloneSession)
}

// ListSessions implements store.Store.
func (s *Store) ListSessions(ctx context.Context, userID string, f store.SessionFilter) ([]*store.Session, error) {
	return list(ctx, s, userID, f.Limit, "",
		func(u *userDocs) map[string]*store.Session { return u.sessions },
		func(d *store.Session) bool {
			return (f.Status == "" || d.Status == f.Status) &&
				(f.ReflectionStatus == "" || d.ReflectionStatus == f.ReflectionStatus) &&
				inRange(d.StartTime, f.Since, f.Until)
		},
		func(a, b *store.Session) int {
			return cmp.Or(b.StartTime.Compare(a.StartTime), cmp.Compare(b.ID, a.ID))
		},
		cloneSession, false)
}

// DeleteDocument implements store.Store.
func (s *Store) DeleteDocument(ctx context.Context, userID string, kind store.Kind, id string) error {
	if err := s.begin(ctx, userID); err != nil {
		return err
	}
	if !kind.Valid() {
		return fmt.Errorf("%w: unknown kind %q", store.ErrInvalid, kind)
	}
	if err := store.CheckID("document id", id); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	u := s.user(userID)
	found := false
	if u != nil {
		switch kind {
		case store.KindInteraction:
			_, found = u.interactions[id]
			delete(u.interactions, id)
		case store.KindInsight:
			_, found = u.insights[id]
			delete(u.insights, id)
		case store.KindSessionSummary:
			_, found = u.sessions[id]
			delete(u.sessions, id)
		}
	}
	if !found {
		return fmt.Errorf("mem: %s %q: %w", kind, id, store.ErrNotFound)
	}
	return nil
}

// DeleteSession implements store.Store.
func (s *Store) DeleteSession(ctx context.Context, userID, sessionID string) (int, error) {
	if err := s.begin(ctx, userID); err != nil {
		return 0, err
	}
	if err := driver.SessionToDelete(sessionID); err != nil {
		return 0, err
	}
	if err := s.lock(); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	u := s.user(userID)
	if u == nil {
		return 0, fmt.Errorf("mem: session %q: %w", sessionID, store.ErrNotFound)
	}
	_, doc := u.sessions[sessionID]
	turns, hasTurns := u.turns[sessionID]
	if !doc && !hasTurns {
		return 0, fmt.Errorf("mem: session %q: %w", sessionID, store.ErrNotFound)
	}
	delete(u.sessions, sessionID)
	delete(u.turns, sessionID)
	return len(turns), nil
}

// DeleteUser implements store.Store.
func (s *Store) DeleteUser(ctx context.Context, userID string) error {
	if err := s.begin(ctx, userID); err != nil {
		return err
	}
	if err := s.lock(); err != nil {
		return err
	}
	defer s.mu.Unlock()
	delete(s.users, userID)
	return nil
}

// As implements store.Store. The in-memory store has no client of its own:
// As always reports false.
func (s *Store) As(any) bool { return false }

// Close implements store.Store: it drops every document. Later calls fail
// with store.ErrClosed; closing again is a no-op.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.users = nil
	s.log = nil
	return nil
}
