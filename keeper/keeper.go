package keeper

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/tokens"
)

// Defaults for zero Config fields.
const (
	DefaultK              = 10
	DefaultActiveTurns    = 5
	DefaultRecentSessions = 2
	DefaultTokenBudget    = 2000
)

// ErrSessionCompleted reports an attempt to open or add to a session that
// has already ended.
var ErrSessionCompleted = errors.New("keeper: session already completed")

// Config configures a Keeper. Mini and Embedder are required; every other
// zero field takes the documented default.
type Config struct {
	// Mini is the chat model for interaction metadata and summaries.
	Mini agent.ChatClient
	// Embedder embeds interaction content and summaries.
	Embedder embed.Embedder
	// Prompts is the prompt set; nil means prompts.Default().
	Prompts *prompts.Set
	// Counter counts tokens for the context budget; nil means tokens.BPE
	// with o200k_base.
	Counter tokens.Counter
	// K is the number of turns per interaction document: a prune happens
	// when K turns have accumulated since the last one. Zero means
	// DefaultK (10).
	K int
	// ActiveTurns is the number of most recent turns always kept in the
	// context, pruned or not. Zero means DefaultActiveTurns (5).
	ActiveTurns int
	// RecentSessions is the number of recent completed session summaries in
	// the initialization block. Zero means DefaultRecentSessions (2);
	// negative means none.
	RecentSessions int
	// TokenBudget caps the context in tokens: the oldest active turns give
	// way first, then the oldest session summaries; the profile and the
	// cumulative summary never do. Zero means DefaultTokenBudget (2,000).
	TokenBudget int
	// Logger receives failures that memory survives; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Store is what a Keeper needs of a store.Store: the turns and the
// session document of each session it keeps, the interactions it stores
// as turns are pruned (removing those a new one overlaps), and the user's
// profile and recent sessions for a new session's context. It searches
// nothing.
type Store interface {
	store.Turns
	GetSession(ctx context.Context, userID, sessionID string) (*store.Session, error)
	PutSession(ctx context.Context, userID string, doc *store.Session) error
	ListSessions(ctx context.Context, userID string, f store.SessionFilter) ([]*store.Session, error)
	PutInteraction(ctx context.Context, userID string, doc *store.Interaction) error
	ListInteractions(ctx context.Context, userID string, f store.InteractionFilter) ([]*store.Interaction, error)
	DeleteDocument(ctx context.Context, userID string, kind store.Kind, id string) error
	GetInsight(ctx context.Context, userID, id string) (*store.Insight, error)
}

// Keeper opens sessions on a store. It is safe for concurrent use.
type Keeper struct {
	st  Store
	cfg Config
}

// New returns a keeper on st. It fails when st, Mini or Embedder is
// missing or a count is negative.
func New(st Store, cfg Config) (*Keeper, error) {
	if st == nil {
		return nil, errors.New("keeper: nil store")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Keeper{st: st, cfg: cfg}, nil
}

// withDefaults returns c with every zero field that has a default set to
// it.
func (c Config) withDefaults() Config {
	c.Prompts = cmp.Or(c.Prompts, prompts.Default())
	if c.Counter == nil {
		c.Counter = &tokens.BPE{}
	}
	c.K = cmp.Or(c.K, DefaultK)
	c.ActiveTurns = cmp.Or(c.ActiveTurns, DefaultActiveTurns)
	c.RecentSessions = cmp.Or(c.RecentSessions, DefaultRecentSessions)
	c.TokenBudget = cmp.Or(c.TokenBudget, DefaultTokenBudget)
	c.Logger = cmp.Or(c.Logger, slog.Default())
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// validate reports the first field of c (with its defaults) that is
// missing or out of range.
func (c Config) validate() error {
	switch {
	case c.Mini == nil:
		return errors.New("keeper: Config.Mini (chat client) is required")
	case c.Embedder == nil:
		return errors.New("keeper: Config.Embedder is required")
	case c.K < 0, c.ActiveTurns < 0, c.TokenBudget < 0:
		return fmt.Errorf("keeper: negative K (%d), ActiveTurns (%d) or TokenBudget (%d)", c.K, c.ActiveTurns, c.TokenBudget)
	}
	return nil
}

// Config returns the keeper's configuration with defaults applied.
func (k *Keeper) Config() Config { return k.cfg }

// Open starts or resumes the session sessionID of userID. A new session
// document is written (status active); an existing active one is resumed
// with its unpruned turns and cumulative summary. The initialization block
// (the user's long-term profile and recent completed sessions) is loaded
// once, here; if that read fails the session opens without it and the
// failure is logged.
func (k *Keeper) Open(ctx context.Context, userID, sessionID string) (*Session, error) {
	if err := store.CheckUserID(userID); err != nil {
		return nil, fmt.Errorf("keeper: open: %w", err)
	}
	if err := store.CheckID("session id", sessionID); err != nil {
		return nil, fmt.Errorf("keeper: open: %w", err)
	}
	doc, err := k.st.GetSession(ctx, userID, sessionID)
	created := false // this call wrote the new session document
	if errors.Is(err, store.ErrNotFound) {
		doc = &store.Session{
			ID:               sessionID,
			UserID:           userID,
			StartTime:        k.cfg.Now().UTC(),
			Status:           store.SessionActive,
			ReflectionStatus: store.ReflectionPending,
			EmbeddingModel:   k.cfg.Embedder.Model(),
			ETag:             store.CreateOnly,
		}
		doc.UpdatedAt = doc.StartTime
		err = k.st.PutSession(ctx, userID, doc)
		created = err == nil
		if errors.Is(err, store.ErrConflict) { // another process created it first: resume theirs
			doc, err = k.st.GetSession(ctx, userID, sessionID)
		}
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("keeper: open session %s: %w", sessionID, err)
	case doc.Status == store.SessionCompleted:
		return nil, fmt.Errorf("%w: %s", ErrSessionCompleted, sessionID)
	}
	s := &Session{k: k, userID: userID, id: sessionID, doc: doc, counts: make(map[string]int)}
	// A document of an earlier version: turns inside it, or pruned turns
	// without a recorded summary position.
	s.legacy = len(doc.State.Turns) > 0 || (doc.State.PrunedThrough > 0 && doc.State.SummaryThrough == 0)
	defaultSummaryThrough(&doc.State)
	if err := s.migrate(ctx); err != nil {
		return nil, fmt.Errorf("keeper: open session %s: %w", sessionID, err)
	}
	if !created { // a session this call created has no turns to resume
		turns, err := k.st.ListTurns(ctx, userID, sessionID, max(1, doc.State.PrunedThrough-k.cfg.ActiveTurns+1))
		if err != nil {
			return nil, fmt.Errorf("keeper: open session %s: read turns: %w", sessionID, err)
		}
		s.cacheRead(turns, max(0, doc.State.PrunedThrough-k.cfg.ActiveTurns))
	}
	s.init = k.loadInit(ctx, userID, sessionID)
	return s, nil
}

// migrate moves the turns a session document of an earlier version holds
// into turn records (idempotently: a repeated migration after a crash finds
// them stored), then writes the document without them.
func (s *Session) migrate(ctx context.Context) error {
	legacy := s.doc.State.Turns
	if len(legacy) == 0 {
		return nil
	}
	for _, t := range legacy {
		t.ID = store.TurnID(&t)
		if t.ID == "" {
			t.ID = fmt.Sprintf("turn-legacy-%d", t.Seq)
		}
		t.UserID, t.SessionID = s.userID, s.id
		FitTurn(&t)
		if err := s.k.st.AppendTurn(ctx, s.userID, &t); err != nil {
			return fmt.Errorf("migrate turn %d: %w", t.Seq, err)
		}
	}
	s.doc.State.Turns = nil
	// update writes the document without turns: all it takes is a write.
	return s.update(ctx, "migrate turns", func(*store.Session) (bool, error) { return true, nil })
}

// ReloadInit reads the session's initialization block again, for when the
// profile or the recent sessions changed after it opened (an insight
// forgotten, say). A failed read leaves the parts it could not read out,
// logged.
func (s *Session) ReloadInit(ctx context.Context) {
	ib := s.k.loadInit(ctx, s.userID, s.id)
	s.mu.Lock()
	s.init = ib
	s.mu.Unlock()
}

// InitBlock is what a session starts with: the user's long-term profile and
// their most recent completed sessions, newest first.
type InitBlock struct {
	Profile *store.Insight
	Recent  []*store.Session
}

func (k *Keeper) loadInit(ctx context.Context, userID, sessionID string) InitBlock {
	var ib InitBlock
	p, err := k.st.GetInsight(ctx, userID, store.LongTermID(userID))
	switch {
	case err == nil:
		ib.Profile = p
	case !errors.Is(err, store.ErrNotFound):
		k.cfg.Logger.WarnContext(ctx, "memory: long-term profile unavailable; session starts without it", "user", userID, "session", sessionID, "err", err)
	}
	if k.cfg.RecentSessions < 0 {
		return ib
	}
	recent, err := k.st.ListSessions(ctx, userID, store.SessionFilter{Status: store.SessionCompleted, Limit: k.cfg.RecentSessions + 1})
	if err != nil {
		k.cfg.Logger.WarnContext(ctx, "memory: recent sessions unavailable; session starts without them", "user", userID, "session", sessionID, "err", err)
		return ib
	}
	for _, r := range recent {
		if r.ID != sessionID && r.Summary != "" && len(ib.Recent) < k.cfg.RecentSessions {
			ib.Recent = append(ib.Recent, r)
		}
	}
	return ib
}
