package reflection

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/lease"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/store"
)

// Defaults for zero Config fields.
const (
	DefaultMinConfidence  = prompts.MinConfidence // 0.7
	DefaultAggregateAfter = 3
	DefaultReconcilePool  = 50
	// DefaultProfileBatch is the most insights one long-term reflection
	// folds in; the rest wait for the next call.
	DefaultProfileBatch = 100
)

// DefaultCategories are the insight categories of the financial-advisor
// design.
var DefaultCategories = []prompts.Category{
	{Name: "demographics", Description: "age, family, where they live, occupation and employment"},
	{Name: "financial_goals", Description: "retirement age, savings targets, major purchases, debts to pay off, with amounts and dates"},
	{Name: "risk_profile", Description: "tolerance for risk, investment experience and preferences"},
	{Name: "current_situation", Description: "income, assets, accounts, debts and expenses as they stand"},
	{Name: "concern", Description: "worries, fears and open questions"},
	{Name: "preference", Description: "how they like advice given: format, frequency, channels, products they favour or avoid"},
}

// ErrSessionActive reports reflection asked of a session not yet ended.
var ErrSessionActive = errors.New("reflection: session not completed")

// Config configures a Reflector. Chat and Embedder are required; every
// other zero field takes its documented default.
type Config struct {
	// Chat is the model that reflects: the main model, for its judgement.
	Chat agent.ChatClient
	// Embedder embeds insights and the profile.
	Embedder embed.Embedder
	// Prompts is the prompt set; nil means prompts.Default().
	Prompts *prompts.Set
	// Categories are the insight categories offered to the model; an
	// insight of any other category is dropped. Nil means
	// DefaultCategories.
	Categories []prompts.Category
	// Guidance is the application's own instruction on what reflection
	// should keep or leave out ("Prefer dietary restrictions and seat
	// preferences; never record health details"), added to the prompt as
	// one line. Secrets (passwords, account numbers…) are left out
	// whatever it says. Empty means none.
	Guidance string
	// MinConfidence drops insights the model is less sure of. Zero means
	// DefaultMinConfidence (0.7); negative keeps every insight.
	MinConfidence float64
	// AggregateAfter is the number of no-insight sessions that
	// ReflectPending reflects on together. Zero means
	// DefaultAggregateAfter (3); negative never aggregates.
	AggregateAfter int
	// ReconcilePool is the number of most recent active session insights
	// Reconcile shows the model at once. Zero means DefaultReconcilePool
	// (50).
	ReconcilePool int
	// ProfileBatch is the most insights one ReflectLongTerm folds in (the
	// oldest first). Zero means DefaultProfileBatch (100).
	ProfileBatch int
	// LeaseTTL bounds how long one call holds the user's lease (see
	// Reflector); zero means lease.DefaultTTL (5 minutes).
	LeaseTTL time.Duration
	// Logger receives what reflection survives; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Reflector runs reflection on a store. It is safe for concurrent use:
// calls for one user run one at a time (each reads, then writes), calls
// for different users run in parallel. Across Reflectors — other
// processes or replicas on the same store — a call for a user first takes
// the user's lease in the store (package lease), waiting while another
// holds it, so their calls for one user never interleave either.
type Reflector struct {
	st    store.Store
	cfg   Config
	users userLocks
	owner string // this Reflector's name on the leases it takes
}

// lock checks userID and serialises the calls for it: in this process,
// then across processes through the user's lease. The unlock releases
// both.
func (r *Reflector) lock(ctx context.Context, userID string) (unlock func(), err error) {
	if err := store.CheckUserID(userID); err != nil {
		return nil, fmt.Errorf("reflection: %w", err)
	}
	local := r.users.lock(userID)
	release, err := lease.Acquire(ctx, r.st, userID, r.owner, lease.Config{TTL: r.cfg.LeaseTTL, Now: r.cfg.Now})
	if err != nil {
		local()
		return nil, fmt.Errorf("reflection: %w", err)
	}
	return func() { release(); local() }, nil
}

// userLocks serialises a Reflector's calls per user.
type userLocks struct {
	mu sync.Mutex
	m  map[string]*userLock
}

type userLock struct {
	sync.Mutex
	refs int
}

// lock locks userID and returns the unlock.
func (l *userLocks) lock(userID string) (unlock func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = make(map[string]*userLock)
	}
	u := l.m[userID]
	if u == nil {
		u = &userLock{}
		l.m[userID] = u
	}
	u.refs++
	l.mu.Unlock()
	u.Lock()
	return func() {
		u.Unlock()
		l.mu.Lock()
		if u.refs--; u.refs == 0 {
			delete(l.m, userID)
		}
		l.mu.Unlock()
	}
}

// New returns a Reflector on st. It fails when st, Chat or Embedder is
// missing, a category name is not a lower-case identifier or repeated, or
// a number is out of range.
func New(st store.Store, cfg Config) (*Reflector, error) {
	if st == nil {
		return nil, errors.New("reflection: nil store")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Reflector{st: st, cfg: cfg, owner: "reflector-" + agent.NewID()}, nil
}

// withDefaults returns c with every zero field that has a default set to
// it. An empty, non-nil Categories stays, for validate to refuse.
func (c Config) withDefaults() Config {
	if c.Categories == nil {
		c.Categories = DefaultCategories
	}
	c.Prompts = cmp.Or(c.Prompts, prompts.Default())
	c.MinConfidence = cmp.Or(c.MinConfidence, DefaultMinConfidence)
	c.AggregateAfter = cmp.Or(c.AggregateAfter, DefaultAggregateAfter)
	c.ReconcilePool = cmp.Or(c.ReconcilePool, DefaultReconcilePool)
	c.ProfileBatch = cmp.Or(c.ProfileBatch, DefaultProfileBatch)
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
	case c.Chat == nil:
		return errors.New("reflection: Config.Chat (chat client) is required")
	case c.Embedder == nil:
		return errors.New("reflection: Config.Embedder is required")
	case c.MinConfidence > 1:
		return fmt.Errorf("reflection: Config.MinConfidence %v above 1", c.MinConfidence)
	case c.ReconcilePool < 0, c.ProfileBatch < 0:
		return fmt.Errorf("reflection: negative ReconcilePool (%d) or ProfileBatch (%d)", c.ReconcilePool, c.ProfileBatch)
	case len(c.Categories) == 0:
		return errors.New("reflection: Config.Categories is empty (nil means the defaults)")
	}
	seen := make(map[string]bool)
	for _, cat := range c.Categories {
		if !validCategory(cat.Name) || seen[cat.Name] {
			return fmt.Errorf("reflection: category %q is repeated or not a lower-case identifier ([a-z][a-z0-9_]*)", cat.Name)
		}
		seen[cat.Name] = true
	}
	return nil
}

func validCategory(name string) bool {
	if name == "" || len(name) > 64 || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return true
}

// Config returns the configuration with defaults applied.
func (r *Reflector) Config() Config { return r.cfg }

// complete asks the model for req and parses the answer with parse; an
// unusable answer is asked for once more. A failed call is returned as is.
func complete[T any](ctx context.Context, r *Reflector, what string, req *agent.ChatRequest, parse func([]byte) (T, error)) (T, error) {
	var zero T
	var perr error
	for attempt := 1; attempt <= 2; attempt++ {
		out, err := r.cfg.Chat.Complete(ctx, req)
		if err != nil {
			return zero, fmt.Errorf("reflection: %s: %w", what, err)
		}
		v, err := parse([]byte(out.Message.Text))
		if err == nil {
			return v, nil
		}
		perr = err
		r.cfg.Logger.WarnContext(ctx, "memory: unusable reflection answer from the model", "step", what, "attempt", attempt, "err", err)
	}
	return zero, fmt.Errorf("reflection: %s: %w", what, perr)
}

// embedTexts embeds texts in one call; with a lexical embedder
// (embed.IsLexical), whose vectors retrieval never searches, it computes
// none and returns nil vectors.
func (r *Reflector) embedTexts(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	if embed.IsLexical(r.cfg.Embedder) {
		return make([][]float32, len(texts)), nil
	}
	vecs, err := r.cfg.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("reflection: embed: %w", err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("reflection: embed: %d vectors for %d texts", len(vecs), len(texts))
	}
	return vecs, nil
}

// insightID derives an insight's id from its parts, so that a retried
// reflection rewrites the same document.
func insightID(prefix string, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return prefix + hex.EncodeToString(sum[:16])
}

// union appends to a the items of b it lacks, keeping order.
func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
