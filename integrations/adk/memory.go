package adk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"google.golang.org/adk/memory"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	amagent "github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
)

// ErrModePerRun reports a provider.Config with provider.ModePerRun, which
// this package refuses: an ADK invocation is not a memory session of its
// own (see Config.Provider).
var ErrModePerRun = errors.New("adk: provider.ModePerRun is not supported")

// Config configures a Memory.
type Config struct {
	// Provider configures agentmemory: the models and embedder (required,
	// as for provider.New), budgets, retrieval, reflection and the session
	// lifecycle. Mode must be provider.ModeManual (the default: a memory
	// session ends with Memory.EndSession) or provider.ModeIdle (it also
	// ends after Provider.IdleTimeout without an invocation);
	// provider.ModePerRun fails with ErrModePerRun, because ADK names no
	// memory session per invocation that AddSessionToMemory could find
	// again. Provider.UserID is ignored: every ADK session carries its
	// user.
	Provider provider.Config
}

// Memory is agentmemory for ADK: a memory.Service, the plugin that gives
// an agent its session memory (Plugin) and the retrieve_user_facts tool
// (Tool). It is safe for concurrent use by many sessions and users.
type Memory struct {
	st  store.Store
	p   *provider.MemoryProvider
	log *slog.Logger

	mu   sync.Mutex
	runs map[string]*run // by invocation id, from before the run to after it
}

var _ memory.Service = (*Memory)(nil)

// New returns a Memory on st, building its provider.MemoryProvider from
// cfg.Provider. The store is not closed by Close.
func New(st store.Store, cfg Config) (*Memory, error) {
	if st == nil {
		return nil, errors.New("adk: nil store")
	}
	if cfg.Provider.Mode == provider.ModePerRun {
		return nil, ErrModePerRun
	}
	pc := cfg.Provider
	pc.UserID = ""
	if pc.Logger == nil {
		pc.Logger = slog.Default()
	}
	p, err := provider.New(st, pc)
	if err != nil {
		return nil, fmt.Errorf("adk: %w", err)
	}
	return &Memory{
		st:   st,
		p:    p,
		log:  pc.Logger.With("component", "agentmemory-adk"),
		runs: map[string]*run{},
	}, nil
}

// Provider returns the memory provider behind m, for what ADK has no hook
// for: reflection on demand (Reflector), ExportUser, ForgetInsight,
// ForgetUser, Flush.
func (m *Memory) Provider() *provider.MemoryProvider { return m.p }

// Close drains the background work (pruning, summaries, reflection), as
// provider.MemoryProvider.Close does. Sessions are not ended.
func (m *Memory) Close(ctx context.Context) error { return m.p.Close(ctx) }

// AddSessionToMemory implements memory.Service: it stores every completed
// invocation of s (a user message answered by the agent) as one turn of
// s's memory session, unless memory holds it already, and queues any
// pruning. A turn's messages keep their events' ids and times, and its
// tool calls and results go to the turn's metadata, so adding the same
// session again, or a session the plugin has recorded, stores nothing
// twice. An invocation still running, or that ended without an answer, is
// left for a later call.
//
// The memory session of an ADK session has s's id and user. Once it has
// ended (EndSession, or idle under provider.ModeIdle), later invocations go
// to a new memory session with the id followed by "~2" (then "~3"…), which
// begins with the ended one's summary: an ADK session may be added at any
// time.
//
// Each turn is durable when AddSessionToMemory returns.
func (m *Memory) AddSessionToMemory(ctx context.Context, s session.Session) error {
	if s == nil {
		return errors.New("adk: add session to memory: nil session")
	}
	if err := checkIDs(s.UserID(), s.ID()); err != nil {
		return fmt.Errorf("adk: add session to memory: %w", err)
	}
	_, err := m.record(ctx, s.UserID(), s.ID(), invocations(s.Events(), ""))
	return err
}

// record stores the turns memory does not hold yet and returns how many
// it stored.
func (m *Memory) record(ctx context.Context, userID, sessionID string, turns []invocation) (int, error) {
	c, err := m.readChain(ctx, userID, sessionID, true)
	if err != nil {
		return 0, fmt.Errorf("adk: add session %s to memory: %w", sessionID, err)
	}
	var sess *amagent.Session
	n := 0
	for _, t := range turns {
		if t.storedIn(c.stored) {
			continue
		}
		if sess == nil {
			if sess, err = amagent.NewSession(c.open, userID); err != nil {
				return n, fmt.Errorf("adk: add session %s to memory: %w", sessionID, err)
			}
		}
		err := m.p.Invoked(ctx, t.invoked(sess))
		if errors.Is(err, keeper.ErrSessionCompleted) { // ended meanwhile: the next one takes the turn
			if sess, err = m.openSession(ctx, userID, sessionID); err == nil {
				err = m.p.Invoked(ctx, t.invoked(sess))
			}
		}
		if err != nil {
			return n, fmt.Errorf("adk: add session %s to memory: invocation %s: %w", sessionID, t.id, err)
		}
		n++
	}
	return n, nil
}

// EndSession ends the open memory session of s: it first stores the
// invocations memory does not hold yet (as AddSessionToMemory), then prunes
// what is left, writes the session summary and marks it completed, waiting
// for the work; session reflection is queued per the provider's
// configuration. It fails with an error wrapping keeper.ErrSessionCompleted
// when every memory session of s has ended and s has nothing new, and with
// one wrapping store.ErrNotFound when memory holds nothing of s.
func (m *Memory) EndSession(ctx context.Context, s session.Session) (*keeper.EndResult, error) {
	if s == nil {
		return nil, errors.New("adk: end session: nil session")
	}
	userID, id := s.UserID(), s.ID()
	if err := checkIDs(userID, id); err != nil {
		return nil, fmt.Errorf("adk: end session: %w", err)
	}
	if _, err := m.record(ctx, userID, id, invocations(s.Events(), "")); err != nil {
		return nil, err
	}
	c, err := m.readChain(ctx, userID, id, false)
	switch {
	case err != nil:
		return nil, fmt.Errorf("adk: end session %s: %w", id, err)
	case c.last == "":
		return nil, fmt.Errorf("adk: end session %s: memory holds no turn of it: %w", id, store.ErrNotFound)
	case c.open != c.last:
		return nil, fmt.Errorf("adk: end session %s: %w", id, keeper.ErrSessionCompleted)
	}
	sess, err := amagent.NewSession(c.open, userID)
	if err != nil {
		return nil, fmt.Errorf("adk: end session %s: %w", id, err)
	}
	res, err := m.p.EndSession(ctx, sess)
	if err != nil {
		return res, fmt.Errorf("adk: end session %s: %w", id, err)
	}
	return res, nil
}

// LastManifest returns the manifest of the memory injected into the last
// invocation of the user's ADK session: every document and turn the model
// was told, and what the budget left out. Manifests are kept in memory,
// for the provider's MaxLive most recent sessions.
func (m *Memory) LastManifest(ctx context.Context, userID, sessionID string) (keeper.Manifest, bool) {
	if checkIDs(userID, sessionID) != nil {
		return keeper.Manifest{}, false
	}
	c, err := m.readChain(ctx, userID, sessionID, false)
	if err != nil {
		return keeper.Manifest{}, false
	}
	for _, id := range []string{c.open, c.last} {
		if id == "" {
			continue
		}
		if sess, err := amagent.NewSession(id, userID); err == nil {
			if man, ok := m.p.LastManifest(sess); ok {
				return man, true
			}
		}
	}
	return keeper.Manifest{}, false
}

// SearchMemory implements memory.Service with agentmemory's direct
// retrieval (no model call): the user's interactions, insights and session
// summaries that match the query, best first, at most the retrieval
// configuration's TopK. Each entry's ID is the document's id, its
// Timestamp the document's date, and its content the document's text with
// its citation (id, date, kind), relative dates resolved, fenced as data.
// CustomMetadata holds "kind", "session_id" (the memory session it came
// from: the ADK session's id, with "~n" for the n-th memory session of one
// ADK session), "event_ids" (the ADK events an interaction holds) and
// "score".
//
// A request without a user or query fails. Memory is per user: AppName
// does not narrow the search (one store per application keeps them
// apart). A failing store or model is logged and the search answers with
// no memories, so that ADK's preload_memory never fails an invocation.
func (m *Memory) SearchMemory(ctx context.Context, req *memory.SearchRequest) (*memory.SearchResponse, error) {
	if req == nil {
		return nil, errors.New("adk: search memory: nil request")
	}
	if err := amagent.ValidateUserID(req.UserID); err != nil {
		return nil, fmt.Errorf("adk: search memory: user id %q: %w", req.UserID, err)
	}
	if strings.TrimSpace(req.Query) == "" {
		return nil, errors.New("adk: search memory: empty query")
	}
	found, err := m.p.Retriever().Search(ctx, req.UserID, req.Query, retrieval.SearchOptions{})
	if err != nil {
		m.log.WarnContext(ctx, "memory: search failed; answering with no memories", "user", req.UserID, "err", err)
		return &memory.SearchResponse{Memories: []memory.Entry{}}, nil
	}
	res := &memory.SearchResponse{Memories: make([]memory.Entry, 0, len(found))}
	for _, f := range found {
		res.Memories = append(res.Memories, memory.Entry{
			ID:        f.ID,
			Content:   genai.NewContentFromText(prompts.FenceMemories(retrieval.Format([]retrieval.Memory{f})), genai.RoleUser),
			Timestamp: f.Time,
			CustomMetadata: map[string]any{
				"kind":       string(f.Kind),
				"session_id": f.SessionID,
				"event_ids":  f.TurnIDs,
				"score":      f.Score,
			},
		})
	}
	return res, nil
}
