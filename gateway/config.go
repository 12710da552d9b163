package gateway

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentmemory/agentmemory/memoryservice"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
)

// Defaults for zero Config fields.
const (
	DefaultIdleTimeout     = 30 * time.Minute
	DefaultMaxToolRounds   = 3
	DefaultMaxBodyBytes    = 16 << 20
	DefaultMaxSessions     = 10000
	DefaultUpstreamTimeout = 10 * time.Minute
)

// Config configures a Handler. Memory and Upstream are required; every
// other zero field takes its default, applied in withDefaults.
type Config struct {
	// Memory is the memory store the gateway's users are scopes of.
	Memory *memoryservice.GatewayStore
	// Upstream is the model endpoint requests are forwarded to.
	Upstream Upstream

	// AutoStoreOff records a request's turn only when it sets
	// memory_config.auto_store true; by default every turn of a known user
	// is recorded unless the request sets it false.
	AutoStoreOff bool
	// RetrievalLimit is how many memories a search injects when a request
	// sets no memory_config.retrieval_limit; zero means
	// store.DefaultTopK (5).
	RetrievalLimit int
	// Rewrite is how a vague follow-up becomes a search query:
	// retrieval.RewritePrepend (the default: the recent user messages put
	// before it, no model call) or retrieval.RewriteLLM (the memory
	// store's chat model rewrites it).
	Rewrite string
	// RetrievalTool also offers the model the retrieve_user_facts tool,
	// run by the gateway in its own loop, unseen by the client, streamed
	// requests included.
	RetrievalTool bool
	// MaxToolRounds bounds the gateway's own tool rounds in one request;
	// zero means DefaultMaxToolRounds.
	MaxToolRounds int

	// IdleTimeout ends a user's session once it has had no request for
	// this long, counted from the end of its last request (never with a
	// request in flight); zero means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxSessions bounds the sessions held in memory: beyond it the least
	// recently used is ended. Zero means DefaultMaxSessions.
	MaxSessions int

	// MaxBodyBytes caps a request body; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// UpstreamTimeout bounds one upstream exchange, streams included. It
	// does not depend on the client: a client that goes away does not
	// cut it short (the turn of an answer that completes is recorded).
	// Zero means DefaultUpstreamTimeout.
	UpstreamTimeout time.Duration

	// Logger receives what the gateway survives; nil means slog.Default().
	Logger *slog.Logger
}

// withDefaults returns c with every zero field that has a default set to
// it.
func (c Config) withDefaults() Config {
	c.RetrievalLimit = cmp.Or(c.RetrievalLimit, store.DefaultTopK)
	c.Rewrite = cmp.Or(c.Rewrite, retrieval.RewritePrepend)
	c.MaxToolRounds = cmp.Or(c.MaxToolRounds, DefaultMaxToolRounds)
	c.IdleTimeout = cmp.Or(c.IdleTimeout, DefaultIdleTimeout)
	c.MaxSessions = cmp.Or(c.MaxSessions, DefaultMaxSessions)
	c.MaxBodyBytes = cmp.Or(c.MaxBodyBytes, DefaultMaxBodyBytes)
	c.UpstreamTimeout = cmp.Or(c.UpstreamTimeout, DefaultUpstreamTimeout)
	c.Logger = cmp.Or(c.Logger, slog.Default())
	return c
}

// validate reports the first field of c that is missing or out of range.
func (c Config) validate() error {
	switch {
	case c.Memory == nil:
		return errors.New("gateway: Config.Memory is required")
	case c.RetrievalLimit < 0 || c.RetrievalLimit > store.MaxTopK:
		return fmt.Errorf("gateway: Config.RetrievalLimit %d outside [0, %d]", c.RetrievalLimit, store.MaxTopK)
	case c.Rewrite != retrieval.RewritePrepend && c.Rewrite != retrieval.RewriteLLM && c.Rewrite != retrieval.RewriteOff:
		return fmt.Errorf("gateway: Config.Rewrite %q: want %q, %q or %q", c.Rewrite, retrieval.RewritePrepend, retrieval.RewriteLLM, retrieval.RewriteOff)
	case c.MaxToolRounds < 0, c.IdleTimeout < 0, c.MaxSessions < 0, c.MaxBodyBytes < 0, c.UpstreamTimeout < 0:
		return errors.New("gateway: negative MaxToolRounds, IdleTimeout, MaxSessions, MaxBodyBytes or UpstreamTimeout")
	}
	return c.Upstream.check()
}
