package provider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/erasure"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/reflection"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
)

// SourceID names the provider on the messages it injects.
const SourceID = "agentmemory"

// Mode is how memory sessions begin and end.
type Mode int

const (
	// ModeManual (the default): a memory session begins with StartSession,
	// or at the agent session's first run, and ends only with EndSession.
	// Many runs share one session. A run on the agent session after
	// EndSession begins the next memory session (as ModeIdle does), so its
	// turn is kept; EndSession then ends that one.
	ModeManual Mode = iota
	// ModePerRun: every run is a memory session of its own, ended in the
	// background after the run.
	ModePerRun
	// ModeIdle: a memory session begins at the first run and ends in the
	// background once no run has happened for Config.IdleTimeout; the
	// agent session's next run begins the next memory session.
	ModeIdle
)

func (m Mode) String() string {
	switch m {
	case ModeManual:
		return "manual"
	case ModePerRun:
		return "per-run"
	case ModeIdle:
		return "idle"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// RetrievalMode is how an agent reaches memory beyond the session context.
type RetrievalMode int

const (
	// RetrievalOnDemand (the default) offers the retrieve_user_facts tool:
	// the model decides when to search memory.
	RetrievalOnDemand RetrievalMode = iota
	// RetrievalAuto searches memory for every user message that passes the
	// pre-filter and injects the top memories, fenced as data.
	RetrievalAuto
	// RetrievalBoth does both.
	RetrievalBoth
	// RetrievalOff does neither: only the session context is injected.
	RetrievalOff
)

func (m RetrievalMode) tool() bool { return m == RetrievalOnDemand || m == RetrievalBoth }
func (m RetrievalMode) auto() bool { return m == RetrievalAuto || m == RetrievalBoth }

// Defaults for zero Config fields.
const (
	DefaultIdleTimeout  = 30 * time.Minute
	DefaultQueueSize    = 256
	DefaultWorkers      = 2
	DefaultMaxAttempts  = 3
	DefaultRetryBackoff = 500 * time.Millisecond
	DefaultWriteTimeout = 30 * time.Second
	DefaultMaxLive      = 10000
	// DefaultReconcileEvery is how many session reflections that stored
	// insights pass between two reconciliations of a user's insights.
	DefaultReconcileEvery = 5
)

// Config configures a MemoryProvider. Mini (or Chat) and Embedder are
// required; every other zero field takes the documented default. The
// models, Embedder, Prompts, Logger and Now are shared: each of
// KeeperConfig, RetrievalConfig and ReflectionConfig takes them unless it
// sets its own.
type Config struct {
	// UserID is the user of agent sessions that carry none; empty means such
	// sessions get no memory (logged).
	UserID string
	// Chat is the main model; it is used for memory work when Mini is nil.
	Chat agent.ChatClient
	// Mini is the cheaper model for metadata and summaries.
	Mini agent.ChatClient
	// Embedder embeds interactions and summaries.
	Embedder embed.Embedder
	// Prompts overrides the prompt set; nil means prompts.Default().
	Prompts *prompts.Set

	// KeeperConfig tunes each session's live memory (K turns per
	// interaction document, ActiveTurns, RecentSessions, TokenBudget, the
	// token Counter…; see keeper.Config for their defaults: 10, 5, 2,
	// 2,000, tokens.BPE). Its Mini, Embedder, Prompts, Logger and Now
	// default to the provider's.
	KeeperConfig keeper.Config

	// Retrieval selects on-demand (the default), auto, both or off.
	Retrieval RetrievalMode
	// RetrievalConfig tunes retrieval (TopK, MinSimilarity, Timeout,
	// AgentTimeout, Rewrite…); its Embedder, Mini, Prompts, Logger and Now
	// default to the provider's.
	RetrievalConfig retrieval.Config

	// Mode selects the session lifecycle; the zero value is ModeManual.
	Mode Mode
	// IdleTimeout ends a ModeIdle session; zero means DefaultIdleTimeout.
	IdleTimeout time.Duration

	// QueueSize bounds the background queue; zero means DefaultQueueSize.
	QueueSize int
	// Workers run background jobs; zero means DefaultWorkers.
	Workers int
	// MaxAttempts tries a failing job this many times; zero means
	// DefaultMaxAttempts.
	MaxAttempts int
	// RetryBackoff is the first wait between attempts, doubling each time;
	// zero means DefaultRetryBackoff.
	RetryBackoff time.Duration

	// WriteTimeout bounds the write of a run's turn in Invoked and Record,
	// which is detached from the caller's context (a run whose answer has
	// arrived is kept even if its caller gives up); zero means
	// DefaultWriteTimeout.
	WriteTimeout time.Duration

	// DeletionLogKey is the secret the deletion log's keyed hashes are
	// made with (erasure.Config.Key), when the store keeps a deletion log
	// (store.DeletionLog; every backend here does): the hashes of user
	// and document ids, and of each record, so that a record rewritten
	// without the key does not verify. Nil means the log's own random
	// key, kept in the log: the id hashes are then pseudonyms that anyone
	// holding the store can test guesses against, and the record hashes
	// plain SHA-256. Keep it secret, outside the store, and stable: a log
	// started with a key opens only with it.
	DeletionLogKey []byte

	// Reflection selects when session reflection runs; the zero value is
	// ReflectOnEnd.
	Reflection ReflectionTrigger
	// ReflectionConfig tunes reflection (categories, confidence threshold,
	// aggregation, reconcile pool…). Its Chat defaults to the provider's
	// Chat (reflection needs the main model's judgement), its Embedder,
	// Prompts, Logger and Now to the provider's.
	ReflectionConfig reflection.Config
	// ProfileEvery updates the long-term profile (ReflectLongTerm) after
	// every ProfileEvery session reflections of a user that stored
	// insights, with ReflectOnEnd. Zero means never automatically: the
	// profile is updated on demand, through Reflector.
	ProfileEvery int
	// ExtractEvery extracts insights from a session every ExtractEvery
	// turns, as its turns are pruned (reflection.ExtractSession), whatever
	// Reflection says: a long session yields insights before it ends, and
	// its end reads only the rest. Zero means never.
	ExtractEvery int
	// ReconcileEvery reconciles a user's insights (Reconcile) after every
	// ReconcileEvery session reflections of theirs that stored insights,
	// with ReflectOnEnd, before any profile update. Zero means
	// DefaultReconcileEvery (5); negative means never automatically.
	ReconcileEvery int

	// SweepInterval is how often the provider looks in the store for
	// session work that no process is doing — the idle end of a session
	// whose timer was in a process that died, the end or reflection of a
	// session whose process died before it ran — and takes it up; it
	// also looks once when it starts. Several processes on one store each
	// sweep; one does each piece of work. Zero means DefaultSweepInterval
	// (a minute); negative never sweeps (the store has one process, or
	// the application ends and reflects its sessions itself).
	SweepInterval time.Duration
	// ClaimTTL is how long a process's claim on a session's outstanding
	// work lasts: after a crash, another process takes the work up once
	// the claim has expired. Work still running when its claim expires
	// may be redone by another process, with the same result (every
	// piece is idempotent), so it should exceed the longest end and
	// reflection. Zero means DefaultClaimTTL (5 minutes).
	ClaimTTL time.Duration

	// MaxLive bounds the sessions held in memory (and the manifests kept);
	// the least recently used give way. A session that gives way loses
	// nothing: its state is in the store and the next run resumes it. Zero
	// means DefaultMaxLive.
	MaxLive int

	// Logger receives what memory survives; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// MemoryProvider is the memory agent.ContextProvider. It is safe for
// concurrent use by many sessions and users.
type MemoryProvider struct {
	store     store.Store
	keeper    *keeper.Keeper
	retriever *retrieval.Retriever
	reflector *reflection.Reflector
	cfg       Config
	log       *slog.Logger
	queue     *queue
	// dlog is the store's deletion log; nil when the store keeps none.
	dlog *erasure.Log

	// owner names this provider on the claims it takes.
	owner string
	// stopSweep ends the sweep loop, which closes sweepDone; nil when the
	// provider does not sweep.
	stopSweep, sweepDone chan struct{}
	closeOnce            sync.Once

	mu        sync.Mutex
	live      *lru[*liveSession]    // by memory session id
	manifests *lru[keeper.Manifest] // by user and agent session id
}

type liveSession struct {
	ks    *keeper.Session
	tool  agent.Tool  // retrieve_user_facts, bound to the session's user
	timer *time.Timer // ModeIdle
	used  time.Time   // when open last returned it; guarded by p.mu
}

// recheckAfter is how long a live session may go unused here before open
// reads its status in the store again: another process on the store may
// have ended it meanwhile, and a turn added to it then would not be
// pruned.
const recheckAfter = time.Second

var (
	_ agent.ContextProvider  = (*MemoryProvider)(nil)
	_ agent.HistoryKeeper    = (*MemoryProvider)(nil)
	_ agent.SourceIdentifier = (*MemoryProvider)(nil)
)

// New returns a provider on st, validating cfg.
func New(st store.Store, cfg Config) (*MemoryProvider, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	k, err := keeper.New(st, cfg.KeeperConfig)
	if err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	r, err := retrieval.New(st, cfg.RetrievalConfig)
	if err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	rf, err := reflection.New(st, cfg.ReflectionConfig)
	if err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	log := cfg.Logger.With("component", "agentmemory")
	var dlog *erasure.Log
	if dl, ok := st.(store.DeletionLog); ok {
		dlog = erasure.New(dl, erasure.Config{Key: cfg.DeletionLogKey, Now: cfg.Now})
	}
	p := &MemoryProvider{
		owner: "provider-" + agent.NewID(),
		dlog:  dlog,
		store: st, keeper: k, retriever: r, reflector: rf, cfg: cfg, log: log,
		queue: newQueue(cfg.QueueSize, cfg.Workers, cfg.MaxAttempts, cfg.RetryBackoff, log),
		live: newLRU(cfg.MaxLive, func(_ string, ls *liveSession) {
			if ls.timer != nil {
				ls.timer.Stop() // an idle session that gives way is ended when it resumes and idles again
			}
		}),
		manifests: newLRU[keeper.Manifest](cfg.MaxLive, nil),
	}
	if cfg.SweepInterval > 0 {
		p.stopSweep, p.sweepDone = make(chan struct{}), make(chan struct{})
		go p.sweepLoop(p.stopSweep, p.sweepDone)
	}
	return p, nil
}

// withDefaults returns c with every zero field that has a default set to
// it, and the shared fields (models, Embedder, Prompts, Logger, Now)
// given to the keeper's, retrieval's and reflection's configurations
// where they set none. Their own defaults are theirs to apply.
func (c Config) withDefaults() Config {
	c.Mini = cmp.Or(c.Mini, c.Chat)
	c.IdleTimeout = cmp.Or(c.IdleTimeout, DefaultIdleTimeout)
	c.QueueSize = cmp.Or(c.QueueSize, DefaultQueueSize)
	c.Workers = cmp.Or(c.Workers, DefaultWorkers)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, DefaultMaxAttempts)
	c.WriteTimeout = cmp.Or(c.WriteTimeout, DefaultWriteTimeout)
	c.RetryBackoff = cmp.Or(c.RetryBackoff, DefaultRetryBackoff)
	c.MaxLive = cmp.Or(c.MaxLive, DefaultMaxLive)
	c.SweepInterval = cmp.Or(c.SweepInterval, DefaultSweepInterval)
	c.ClaimTTL = cmp.Or(c.ClaimTTL, DefaultClaimTTL)
	c.ReconcileEvery = cmp.Or(c.ReconcileEvery, DefaultReconcileEvery)
	c.Logger = cmp.Or(c.Logger, slog.Default())
	if c.Now == nil {
		c.Now = time.Now
	}

	kc := &c.KeeperConfig
	kc.Mini = cmp.Or(kc.Mini, c.Mini)
	c.share(&kc.Embedder, &kc.Prompts, &kc.Logger, &kc.Now)

	rc := &c.RetrievalConfig
	rc.Mini = cmp.Or(rc.Mini, c.Mini)
	c.share(&rc.Embedder, &rc.Prompts, &rc.Logger, &rc.Now)

	fc := &c.ReflectionConfig
	fc.Chat = cmp.Or(fc.Chat, c.Chat, c.Mini) // reflection needs the main model's judgement
	c.share(&fc.Embedder, &fc.Prompts, &fc.Logger, &fc.Now)
	return c
}

// share sets each of a sub-configuration's Embedder, Prompts, Logger and
// Now that is zero to c's.
func (c Config) share(emb *embed.Embedder, p **prompts.Set, log **slog.Logger, now *func() time.Time) {
	*emb = cmp.Or(*emb, c.Embedder)
	*p = cmp.Or(*p, c.Prompts)
	*log = cmp.Or(*log, c.Logger)
	if *now == nil {
		*now = c.Now
	}
}

// validate reports the first of c's own fields that is out of range; the
// keeper, retrieval and reflection validate theirs.
func (c Config) validate() error {
	if c.UserID != "" {
		if err := agent.ValidateUserID(c.UserID); err != nil {
			return fmt.Errorf("provider: Config.UserID: %w", err)
		}
	}
	switch {
	case c.Mode < ModeManual || c.Mode > ModeIdle:
		return fmt.Errorf("provider: unknown Config.Mode %d", c.Mode)
	case c.Retrieval < RetrievalOnDemand || c.Retrieval > RetrievalOff:
		return fmt.Errorf("provider: unknown Config.Retrieval %d", c.Retrieval)
	case c.Reflection < ReflectOnEnd || c.Reflection > ReflectManual:
		return fmt.Errorf("provider: unknown Config.Reflection %d", c.Reflection)
	case c.ProfileEvery < 0, c.ExtractEvery < 0:
		return fmt.Errorf("provider: negative Config.ProfileEvery (%d) or ExtractEvery (%d); zero means never", c.ProfileEvery, c.ExtractEvery)
	case c.IdleTimeout < 0, c.QueueSize < 0, c.Workers < 0, c.MaxAttempts < 0, c.RetryBackoff < 0, c.MaxLive < 0, c.WriteTimeout < 0, c.ClaimTTL < 0:
		return errors.New("provider: negative IdleTimeout, QueueSize, Workers, MaxAttempts, RetryBackoff, MaxLive, WriteTimeout or ClaimTTL")
	}
	return nil
}

// SourceID implements agent.SourceIdentifier.
func (p *MemoryProvider) SourceID() string { return SourceID }

// KeepsHistory implements agent.HistoryKeeper: the provider injects the
// active turns itself, so the agent does not resend its session history.
func (p *MemoryProvider) KeepsHistory() bool { return true }

// userOf returns the user a session belongs to.
func (p *MemoryProvider) userOf(sess *agent.Session) (string, error) {
	if u := sess.UserID(); u != "" {
		return u, nil
	}
	if p.cfg.UserID != "" {
		return p.cfg.UserID, nil
	}
	return "", fmt.Errorf("provider: session %s has no user id and Config.UserID is empty: %w", sess.ID(), agent.ErrInvalidUserID)
}

// liveKey keys the live sessions: by user and session, so that two users
// with the same session id never share one.
func liveKey(userID, id string) string { return userID + "\x00" + id }

// open returns the live memory session id of userID, opening (or
// resuming) it if needed. A resumed session with a full chunk waiting is
// pruned in the background.
func (p *MemoryProvider) open(ctx context.Context, userID, id string) (*liveSession, error) {
	key := liveKey(userID, id)
	now := p.cfg.Now()
	p.mu.Lock()
	ls, _ := p.live.get(key)
	var idle time.Duration
	if ls != nil {
		idle, ls.used = now.Sub(ls.used), now
	}
	p.mu.Unlock()
	if ls != nil && (idle < recheckAfter || ls.ks.Completed() || !p.endedElsewhere(ctx, userID, id)) {
		return ls, nil
	}
	if ls != nil { // ended by another process: opened anew, it is ErrSessionCompleted
		p.dropSession(userID, id)
	}
	ks, err := p.keeper.Open(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if ls, ok := p.live.get(key); ok { // opened concurrently
		p.mu.Unlock()
		return ls, nil
	}
	ls = &liveSession{ks: ks, used: now}
	if p.cfg.Retrieval.tool() {
		ls.tool = p.retriever.Tool(userID)
	}
	p.live.put(key, ls)
	if ks.NeedsPrune() {
		p.schedulePrune(ctx, ks)
	}
	p.mu.Unlock()
	p.markOpen(ctx, userID, id)
	return ls, nil
}

// endedElsewhere reports whether the store shows session id completed; a
// failed read reports false (the live copy is used as it is).
func (p *MemoryProvider) endedElsewhere(ctx context.Context, userID, id string) bool {
	doc, err := p.store.GetSession(ctx, userID, id)
	return err == nil && doc.Status == store.SessionCompleted
}

// StartSession begins (or resumes) the memory session of sess and loads
// its initialization block; after EndSession, the next one, as a run
// would. In ModeManual the first run does this lazily; calling it first
// makes the start explicit and reports its errors.
func (p *MemoryProvider) StartSession(ctx context.Context, sess *agent.Session) error {
	userID, err := p.userOf(sess)
	if err != nil {
		return err
	}
	_, _, err = p.current(ctx, sess, userID, true)
	return err
}

// EndSession prunes what is left of the memory session of sess, writes its
// summary and marks it completed, waiting for the work; it returns what it
// produced. The agent session may go on, in every mode: its next run
// begins a new memory session (named after the agent session's id, kept
// in its state), which a later EndSession ends. Record on the ended
// session fails instead, except in ModeIdle (see Record).
func (p *MemoryProvider) EndSession(ctx context.Context, sess *agent.Session) (*keeper.EndResult, error) {
	userID, err := p.userOf(sess)
	if err != nil {
		return nil, err
	}
	return p.end(ctx, userID, p.sessionID(sess))
}

func (p *MemoryProvider) end(ctx context.Context, userID, id string) (*keeper.EndResult, error) {
	ls, err := p.open(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	p.markEnding(ctx, userID, id)
	res, err := ls.ks.End(ctx)
	if err != nil {
		return res, fmt.Errorf("provider: end session %s: %w", id, err)
	}
	key := liveKey(userID, id)
	p.mu.Lock()
	if cur, ok := p.live.get(key); ok && cur == ls {
		p.live.remove(key)
		if ls.timer != nil {
			ls.timer.Stop()
		}
	}
	p.mu.Unlock()
	p.log.InfoContext(ctx, "memory: session ended", "user", userID, "session", id, "interactions", len(res.Pruned), "summary_chars", len(res.Session.Summary))
	// Sessions of the user that ended while the model was failing get
	// their summary now, if the model is back (this one included), and
	// the user's pending sessions their reflection.
	p.scheduleSettle(ctx, userID, id)
	return res, nil
}

// EndSessionIfIdle ends the memory session of sess as EndSession does, but
// only when the store shows no activity in it — a turn or a write, from
// any process on the store — for idle; otherwise it ends nothing and
// returns how long until the session may be idle, to ask again then. It
// is for an application that ends sessions on an idle timer of its own
// (ModeManual) while several instances serve them: one instance's timer
// does not see the runs another served. Instances asking at once end the
// session once (the others wait for the one ending it). A session that
// has ended already is keeper.ErrSessionCompleted, one that does not
// exist store.ErrNotFound.
func (p *MemoryProvider) EndSessionIfIdle(ctx context.Context, sess *agent.Session, idle time.Duration) (*keeper.EndResult, time.Duration, error) {
	userID, err := p.userOf(sess)
	if err != nil {
		return nil, 0, err
	}
	return p.endIdle(ctx, userID, p.sessionID(sess), idle)
}

// sessionID is the memory session id of an agent session: its id, or the
// one kept in its state (ModePerRun: the current run's session; ModeIdle:
// the session begun after an idle end).
func (p *MemoryProvider) sessionID(sess *agent.Session) string {
	// Every mode: in ModeManual the state is set when a run continues
	// after EndSession.
	var id string
	if ok, _ := sess.State(stateRunSession, &id); ok && id != "" {
		return id
	}
	return sess.ID()
}

const stateRunSession = "agentmemory.run_session"

// LastManifest returns the manifest of the last context injected into a
// run of sess: every document and turn the model was told, and what the
// budget left out.
func (p *MemoryProvider) LastManifest(sess *agent.Session) (keeper.Manifest, bool) {
	userID, err := p.userOf(sess)
	if err != nil {
		return keeper.Manifest{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.manifests.get(liveKey(userID, sess.ID()))
}

// Flush waits until the background work queued so far is done.
func (p *MemoryProvider) Flush(ctx context.Context) error { return p.queue.flush(ctx) }

// Close stops sweeping and accepting background work and drains what is
// queued; when ctx ends first, the remaining work is abandoned (it is
// redone when the sessions resume, or by another process's sweep).
// Sessions are not ended: in ModeIdle, another process's sweep ends them
// once idle. The store is not closed.
func (p *MemoryProvider) Close(ctx context.Context) error {
	p.closeOnce.Do(func() {
		if p.stopSweep != nil {
			close(p.stopSweep)
			<-p.sweepDone
		}
	})
	p.mu.Lock()
	p.live.each(func(_ string, ls *liveSession) {
		if ls.timer != nil {
			ls.timer.Stop()
		}
	})
	p.mu.Unlock()
	return p.queue.close(ctx)
}

func (p *MemoryProvider) schedulePrune(ctx context.Context, ks *keeper.Session) {
	attempt := 0
	p.queue.offer(job{
		vals: carrying(ctx),
		key:  "prune\x00" + ks.UserID() + "\x00" + ks.ID(),
		what: "prune session " + ks.ID(),
		run: func(ctx context.Context) error {
			// The last attempt stores the chunk whatever the model does
			// (flagged), so that a failing model never wedges a session.
			attempt++
			prune := ks.Prune
			if attempt >= p.cfg.MaxAttempts {
				prune = ks.ForcePrune
			}
			res, err := prune(ctx)
			for _, r := range res {
				p.log.Debug("memory: turns pruned", "session", ks.ID(), "interaction", r.Interaction.ID,
					"turns", fmt.Sprintf("%d-%d", r.Interaction.FirstTurn, r.Interaction.LastTurn), "metadata_pending", r.MetadataPending)
			}
			if n := p.cfg.ExtractEvery; n > 0 && len(res) > 0 {
				before, after := res[0].Interaction.FirstTurn-1, res[len(res)-1].Interaction.LastTurn
				if after/n > before/n {
					p.extract(ctx, ks.UserID(), ks.ID())
				}
			}
			return err
		},
	})
}

func (p *MemoryProvider) scheduleEnd(ctx context.Context, userID, id string) {
	p.queue.offer(job{
		vals: carrying(ctx),
		key:  "end\x00" + userID + "\x00" + id,
		what: "end session " + id,
		run: func(ctx context.Context) error {
			_, err := p.end(ctx, userID, id)
			if errors.Is(err, keeper.ErrSessionCompleted) {
				return nil
			}
			return err
		},
	})
}

// Retriever returns the provider's retriever, for searching memory outside
// a run (an admin tool, an MCP server…).
func (p *MemoryProvider) Retriever() *retrieval.Retriever { return p.retriever }
