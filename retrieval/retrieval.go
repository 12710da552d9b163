package retrieval

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
)

// Defaults for zero Config fields.
const (
	// DefaultTimeout bounds a direct search: one query embedding (about
	// 0.1–0.5 s from a hosted model) and the store's searches
	// (milliseconds).
	DefaultTimeout = 2 * time.Second
	// DefaultAgentTimeout bounds the mini-agent: at least two chat calls
	// (a gpt-4o-mini-class call takes about 0.5–2 s), its searches and
	// their embeddings, up to DefaultMaxRounds rounds.
	DefaultAgentTimeout = 8 * time.Second
	DefaultMaxRounds    = 3
	// DefaultMaxAnswerTokens caps each mini-agent model call.
	DefaultMaxAnswerTokens = 500
	// DefaultCandidates is how many documents each kind's search returns
	// before fusion.
	DefaultCandidates = 20
)

// Config configures a Retriever. Embedder is required; every other zero
// field takes its documented default.
type Config struct {
	// Embedder embeds queries; it must be the one that embedded the stored
	// documents.
	Embedder embed.Embedder
	// Mini runs the mini-agent; nil means direct mode only.
	Mini agent.ChatClient
	// Prompts overrides the prompt set; nil means prompts.Default().
	Prompts *prompts.Set
	// TopK is the number of memories returned; zero means store.DefaultTopK (5).
	TopK int
	// MinSimilarity, when positive, drops vector matches below this cosine
	// similarity: an absolute floor, for an embedder whose scale has been
	// measured. Zero or negative means none, the default: a vector match
	// counts by its relevance relative to the query's own similarities to
	// the user's documents (see Search), the same whatever scale the
	// embedder's cosines live on (text-embedding-3-small's about 0.15–0.5,
	// ada-002's 0.7–0.9). Full-text matches are kept whatever their
	// similarity.
	MinSimilarity float64
	// Candidates is each kind's search depth before fusion; zero means
	// DefaultCandidates.
	Candidates int
	// Timeout bounds a direct search (Search through Retrieve, Auto, and
	// the direct search every Retrieve runs beside the mini-agent); zero
	// means DefaultTimeout (2 s).
	Timeout time.Duration
	// AgentTimeout bounds the mini-agent; zero means DefaultAgentTimeout
	// (8 s). A mini-agent that overruns or fails leaves Retrieve the
	// direct search's memories; only when that fails too is the answer
	// that no memory is available.
	AgentTimeout time.Duration
	// MaxRounds bounds the mini-agent's tool rounds; zero means
	// DefaultMaxRounds.
	MaxRounds int
	// MaxAnswerTokens caps each mini-agent model call's answer; zero means
	// DefaultMaxAnswerTokens.
	MaxAnswerTokens int
	// Rewrite is how vague follow-ups become search queries: RewritePrepend
	// (the default, no model call), RewriteLLM or RewriteOff.
	Rewrite string
	// Logger receives failures; nil means slog.Default().
	Logger *slog.Logger
	// Now resolves relative dates; nil means time.Now.
	Now func() time.Time
}

// Store is what a Retriever reads of a store.Store: the search of each
// kind, and interactions by id for the chunk that follows a hit. It never
// writes.
type Store interface {
	SearchInteractions(ctx context.Context, userID string, q store.SearchRequest) ([]store.Hit[*store.Interaction], error)
	SearchInsights(ctx context.Context, userID string, q store.SearchRequest) ([]store.Hit[*store.Insight], error)
	SearchSessions(ctx context.Context, userID string, q store.SearchRequest) ([]store.Hit[*store.Session], error)
	GetInteraction(ctx context.Context, userID, id string) (*store.Interaction, error)
}

// Retriever searches one store. It is safe for concurrent use.
type Retriever struct {
	st  Store
	cfg Config
}

// New returns a retriever on st.
func New(st Store, cfg Config) (*Retriever, error) {
	switch {
	case st == nil:
		return nil, errors.New("retrieval: nil store")
	case cfg.Embedder == nil:
		return nil, errors.New("retrieval: Config.Embedder is required")
	case cfg.TopK < 0 || cfg.TopK > store.MaxTopK:
		return nil, fmt.Errorf("retrieval: Config.TopK %d outside [0, %d]", cfg.TopK, store.MaxTopK)
	case cfg.MinSimilarity > 1:
		return nil, fmt.Errorf("retrieval: Config.MinSimilarity %v above 1", cfg.MinSimilarity)
	case cfg.Rewrite != "" && cfg.Rewrite != RewritePrepend && cfg.Rewrite != RewriteLLM && cfg.Rewrite != RewriteOff:
		return nil, fmt.Errorf("retrieval: unknown Config.Rewrite %q (want %q, %q or %q)", cfg.Rewrite, RewritePrepend, RewriteLLM, RewriteOff)
	case cfg.Candidates < 0 || cfg.Candidates > store.MaxTopK, cfg.Timeout < 0, cfg.AgentTimeout < 0, cfg.MaxRounds < 0, cfg.MaxAnswerTokens < 0:
		return nil, errors.New("retrieval: negative Candidates, Timeout, AgentTimeout, MaxRounds or MaxAnswerTokens, or Candidates above store.MaxTopK")
	}
	if cfg.Prompts == nil {
		cfg.Prompts = prompts.Default()
	}
	if cfg.Rewrite == "" {
		cfg.Rewrite = RewritePrepend
	}
	if cfg.TopK == 0 {
		cfg.TopK = store.DefaultTopK
	}
	if cfg.Candidates == 0 {
		cfg.Candidates = DefaultCandidates
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.AgentTimeout == 0 {
		cfg.AgentTimeout = DefaultAgentTimeout
	}
	if cfg.MaxRounds == 0 {
		cfg.MaxRounds = DefaultMaxRounds
	}
	if cfg.MaxAnswerTokens == 0 {
		cfg.MaxAnswerTokens = DefaultMaxAnswerTokens
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Retriever{st: st, cfg: cfg}, nil
}

// Config returns the configuration with defaults applied.
func (r *Retriever) Config() Config { return r.cfg }

// Memory is one retrieved document.
type Memory struct {
	Kind store.Kind
	ID   string
	// SessionID is the session the document comes from (empty for the
	// long-term profile).
	SessionID string
	// Time dates the document: an interaction's timestamp, an insight's
	// creation, a session's start.
	Time time.Time
	// Text is what the document says: an interaction's content, an
	// insight's text, a session's summary.
	Text string
	// Summary is an interaction's summary, if any.
	Summary string
	// TurnIDs are the ids of the messages an interaction holds.
	TurnIDs []string
	// Score is the fused score (higher is better).
	Score float64
}

// minSim is the store-level threshold for the configured similarity: -1
// (none) unless an absolute floor is configured.
func (r *Retriever) minSim() float64 {
	if r.cfg.MinSimilarity <= 0 {
		return -1
	}
	return r.cfg.MinSimilarity
}
