// Package memoryservice serves agentmemory over HTTP as the Azure AI
// Foundry Memory Store API (the wire format of the official clients, such
// as npm @azure/ai-projects 2.8.0's project.beta.memoryStores), so that an
// application in any language reaches the same memory as the Go library.
//
// The API maps onto agentmemory rather than beside it:
//
//   - A memory store is a definition kept in the store itself, under a
//     reserved user id (RegistryUserID) that no scope can name. Its
//     user_profile_details become the reflection guidance of the store's
//     own provider.MemoryProvider.
//   - A scope of a memory store is one agentmemory user, whose id joins
//     the store's name and the scope (UserID), so no scope of one memory
//     store is reachable through another.
//   - update_memories records the items as turns of a memory session of
//     the scope before it answers 202, then, after update_delay, ends the
//     session (pruning, summary, reflection, the long-term profile) and
//     lists the memory items created, updated and deleted. The operation's
//     record is kept in the store, so an accepted update completes after a
//     restart.
//   - Memory items of kind user_profile are the scope's insights and its
//     long-term profile; chat_summary items are its session summaries;
//     procedural items, in a store with procedural_memory_enabled, are its
//     insights of ProceduralCategory (how the user wants things done),
//     which reflection draws from the conversation like the others.
//     search_memories is agentmemory's retrieval; delete_scope is
//     provider.MemoryProvider.ForgetUser.
//   - A store's default_ttl_seconds expires its scopes' memories: a
//     session (with its turns and summary), an interaction or an insight
//     last written longer ago than the TTL is never listed, got or found,
//     and a sweep every Config.SweepInterval deletes it with
//     provider.MemoryProvider.ForgetBefore (logged as
//     provider.ReasonExpired).
//
// Service is an http.Handler; cmd/agentmemory-server runs it.
package memoryservice

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/prompts"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/reflection"
	"github.com/agentmemory/agentmemory/store"
)

// ProceduralCategory is the insight category of procedural memory: a
// memory store with procedural_memory_enabled offers it to reflection
// beside reflection.DefaultCategories, and its insights are the memory
// items of kind procedural.
var ProceduralCategory = prompts.Category{Name: "procedural",
	Description: "how the user wants things done: steps, order, routines and rules to follow"}

// Defaults for zero Config fields.
const (
	DefaultMaxBodyBytes = 4 << 20
	DefaultUpdateDelay  = 300 * time.Second
)

// Config configures a Service. Chat (or Mini) and Embedder are required.
type Config struct {
	// Chat, Mini and Embedder are the models every memory store runs on
	// (a store's chat_model and embedding_model are recorded, not used to
	// choose them).
	Chat, Mini agent.ChatClient
	Embedder   embed.Embedder
	// Keys are the API keys accepted as "Authorization: Bearer <key>" or
	// "api-key: <key>". Empty means no authentication (the command then
	// listens on loopback only).
	Keys []APIKey
	// MaxBodyBytes caps a request body; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// DefaultUpdateDelay is update_memories' delay when the request gives
	// none; zero means DefaultUpdateDelay (300 s, the API's default).
	DefaultUpdateDelay time.Duration
	// Logger receives request logs and what the service survives; nil
	// means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// SweepInterval is how often memories older than their store's
	// default_ttl_seconds are removed (they are hidden from every read
	// as soon as they expire); zero means DefaultSweepInterval.
	SweepInterval time.Duration
	// UpdateRetention is how long an update's record (what the poller of
	// updates/{update_id} reads) is kept once the update completed,
	// failed or was superseded; the sweep then deletes it. Zero means
	// DefaultUpdateRetention (24 hours).
	UpdateRetention time.Duration
	// TrustForwarded makes the address clients poll (Operation-Location)
	// the one a proxy in front says it serves, from the Forwarded header
	// or X-Forwarded-Proto and X-Forwarded-Host. Set it only behind a
	// proxy that sets or strips those headers, as any client can send
	// them; false (the default) never reads them.
	TrustForwarded bool
}

// APIKey is a key the service accepts.
type APIKey struct {
	// Key is the secret.
	Key string
	// Stores limits the key to the memory stores of these names (it may
	// create them, and lists only them); empty means every store.
	Stores []string
}

// Service serves the Memory Store API on a store. It is an http.Handler,
// safe for concurrent use. Close it to drain updates in progress.
type Service struct {
	st  store.Store
	cfg Config
	log *slog.Logger
	mux *http.ServeMux

	mu        sync.Mutex
	providers map[string]*provider.MemoryProvider // by memory store name
	pending   map[string]*scheduled               // queued update by scope user id
	scopeMu   map[string]*sync.Mutex              // serialises a scope's accepts and runs
	closed    bool
	ready     bool
	stopSweep chan struct{} // closed by Close
	sweepDone chan struct{} // closed when the sweep loop has returned
	wg        sync.WaitGroup
	runCtx    context.Context
	cancelRun context.CancelFunc
}

// New returns a service on st and resumes the updates that were accepted
// but not completed before a restart (queued ones at their due time,
// in-progress ones at once).
func New(ctx context.Context, st store.Store, cfg Config) (*Service, error) {
	if st == nil {
		return nil, errors.New("memoryservice: nil store")
	}
	if cfg.Chat == nil && cfg.Mini == nil {
		return nil, errors.New("memoryservice: Config.Chat or Config.Mini is required")
	}
	if cfg.Embedder == nil {
		return nil, errors.New("memoryservice: Config.Embedder is required")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.DefaultUpdateDelay <= 0 {
		cfg.DefaultUpdateDelay = DefaultUpdateDelay
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = DefaultSweepInterval
	}
	if cfg.UpdateRetention <= 0 {
		cfg.UpdateRetention = DefaultUpdateRetention
	}
	for i, k := range cfg.Keys {
		if k.Key == "" {
			return nil, fmt.Errorf("memoryservice: Config.Keys[%d] is empty", i)
		}
		for _, name := range k.Stores {
			if err := checkName("stores", name); err != nil {
				return nil, fmt.Errorf("memoryservice: Config.Keys[%d]: %w", i, err)
			}
		}
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Service{st: st, cfg: cfg, log: cfg.Logger,
		providers: map[string]*provider.MemoryProvider{}, pending: map[string]*scheduled{},
		scopeMu: map[string]*sync.Mutex{}, runCtx: runCtx, cancelRun: cancel, stopSweep: make(chan struct{}), sweepDone: make(chan struct{})}
	s.routes()
	if err := s.resume(ctx); err != nil {
		cancel()
		return nil, err
	}
	s.mu.Lock()
	s.ready = true
	s.mu.Unlock()
	go s.sweepLoop(cfg.SweepInterval)
	return s, nil
}

// Close stops taking updates, leaves the queued ones queued in the store
// (a restart resumes them), waits for those in progress until ctx ends,
// and drains the providers' background work. The store is not closed.
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed, s.ready = true, false
	close(s.stopSweep)
	for _, p := range s.pending {
		p.timer.Stop()
	}
	s.pending = map[string]*scheduled{}
	s.mu.Unlock()
	select { // a sweep under way finishes first, or is cut short
	case <-s.sweepDone:
	case <-ctx.Done():
		s.cancelRun()
		<-s.sweepDone
	}

	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		s.cancelRun() // runs still going are abandoned; they stay in_progress and resume on restart
		err = fmt.Errorf("memoryservice: updates in progress abandoned: %w", ctx.Err())
		<-done
	}
	s.mu.Lock()
	ps := s.providers
	s.providers = map[string]*provider.MemoryProvider{}
	s.mu.Unlock()
	for _, p := range ps {
		if cerr := p.Close(ctx); cerr != nil && err == nil {
			err = cerr
		}
	}
	s.cancelRun()
	return err
}

// Ready reports whether the service takes requests: resumed, not closing.
func (s *Service) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready
}

// providerFor returns the memory store's provider, made on first use with
// the store's user_profile_details as the reflection guidance.
func (s *Service) providerFor(def *memoryStore) (*provider.MemoryProvider, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, unavailable("the server is shutting down")
	}
	if p, ok := s.providers[def.Name]; ok {
		return p, nil
	}
	cfg := provider.Config{Chat: s.cfg.Chat, Mini: s.cfg.Mini, Embedder: s.cfg.Embedder, Logger: s.log, Now: s.cfg.Now}
	if o := def.Definition.Options; o != nil && o.UserProfileDetails != "" {
		cfg.ReflectionConfig.Guidance = o.UserProfileDetails
	}
	if def.proceduralEnabled() {
		cfg.ReflectionConfig.Categories = append(slices.Clone(reflection.DefaultCategories), ProceduralCategory)
	}
	p, err := provider.New(s.st, cfg)
	if err != nil {
		return nil, err
	}
	s.providers[def.Name] = p
	return p, nil
}

// dropProvider closes and forgets a deleted memory store's provider.
func (s *Service) dropProvider(ctx context.Context, name string) {
	s.mu.Lock()
	p := s.providers[name]
	delete(s.providers, name)
	s.mu.Unlock()
	if p != nil {
		if err := p.Close(ctx); err != nil {
			s.log.WarnContext(ctx, "memoryservice: closing a deleted store's provider", "store", name, "err", err)
		}
	}
}

// lockScope serialises the accepts (what "accept") or the runs ("run")
// of one scope.
func (s *Service) lockScope(what, userID string) func() {
	key := what + "\x00" + userID
	s.mu.Lock()
	m, ok := s.scopeMu[key]
	if !ok {
		m = &sync.Mutex{}
		s.scopeMu[key] = m
	}
	s.mu.Unlock()
	m.Lock()
	return m.Unlock
}

func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
