package retrieval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
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
	// noTools holds the mini model's refusal of tools (an error wrapping
	// agent.ErrToolsUnsupported) once it is seen: the mini-agent is not
	// run again.
	noTools atomic.Pointer[error]
}

// New returns a retriever on st.
func New(st Store, cfg Config) (*Retriever, error) {
	if st == nil {
		return nil, errors.New("retrieval: nil store")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Retriever{st: st, cfg: cfg}, nil
}

// withDefaults returns c with every zero field that has a default set to
// it.
func (c Config) withDefaults() Config {
	c.Prompts = cmp.Or(c.Prompts, prompts.Default())
	c.Rewrite = cmp.Or(c.Rewrite, RewritePrepend)
	c.TopK = cmp.Or(c.TopK, store.DefaultTopK)
	c.Candidates = cmp.Or(c.Candidates, DefaultCandidates)
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.AgentTimeout = cmp.Or(c.AgentTimeout, DefaultAgentTimeout)
	c.MaxRounds = cmp.Or(c.MaxRounds, DefaultMaxRounds)
	c.MaxAnswerTokens = cmp.Or(c.MaxAnswerTokens, DefaultMaxAnswerTokens)
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
	case c.Embedder == nil:
		return errors.New("retrieval: Config.Embedder is required")
	case c.TopK < 0 || c.TopK > store.MaxTopK:
		return fmt.Errorf("retrieval: Config.TopK %d outside [0, %d]", c.TopK, store.MaxTopK)
	case c.MinSimilarity > 1:
		return fmt.Errorf("retrieval: Config.MinSimilarity %v above 1", c.MinSimilarity)
	case c.Rewrite != RewritePrepend && c.Rewrite != RewriteLLM && c.Rewrite != RewriteOff:
		return fmt.Errorf("retrieval: unknown Config.Rewrite %q (want %q, %q or %q)", c.Rewrite, RewritePrepend, RewriteLLM, RewriteOff)
	case c.Candidates < 0 || c.Candidates > store.MaxTopK, c.Timeout < 0, c.AgentTimeout < 0, c.MaxRounds < 0, c.MaxAnswerTokens < 0:
		return errors.New("retrieval: negative Candidates, Timeout, AgentTimeout, MaxRounds or MaxAnswerTokens, or Candidates above store.MaxTopK")
	}
	return nil
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
