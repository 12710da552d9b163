package memoryservice

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/store"
)

// Defaults for zero Config fields.
const (
	DefaultMaxBodyBytes = 4 << 20
	DefaultUpdateDelay  = 300 * time.Second
	// DefaultUpdateWorkers is how many updates run at once when
	// Config.UpdateWorkers is zero.
	DefaultUpdateWorkers = 4
	// DefaultPollInterval is how often a replica looks for due updates
	// when Config.PollInterval is zero.
	DefaultPollInterval = 5 * time.Second
	// DefaultLeaseTTL is how long a claim lasts unrenewed when
	// Config.LeaseTTL is zero: a dead replica's update is taken over
	// within it and one poll interval.
	DefaultLeaseTTL = 20 * time.Second
)

// Config configures a Service. Models, or Chat (or Mini) and Embedder, are
// required.
type Config struct {
	// Models, when set, gives each memory store the clients of the models
	// its definition names (checked when the store is created). Nil means
	// every store runs on Chat, Mini and Embedder, and its chat_model and
	// embedding_model are only recorded.
	Models Models
	// Chat, Mini and Embedder are the models every memory store runs on
	// when Models is nil.
	Chat, Mini agent.ChatClient
	Embedder   embed.Embedder
	// Dimensions is the vector length the store holds, when it holds one
	// length only (store/cosmos's vector index, store/sqlite opened with
	// Dimensions): a memory store whose embedding model makes vectors of
	// another length is refused at create, with a 400 naming
	// definition.embedding_model and both lengths. Zero means the store
	// takes any length (store/sqlite opened with Dimensions 0, whose
	// searches compare only vectors of the query's length), so memory
	// stores on embedding models of different lengths share one file;
	// each scope's vectors are all its store's model's, since a store's
	// models never change. A lexical embedder stores no vectors and is
	// never refused.
	Dimensions int
	// Keys are the API keys accepted as "Authorization: Bearer <key>" or
	// "api-key: <key>", each at least MinKeyLen bytes. Empty means no
	// authentication: then only requests addressed to a loopback Host
	// (localhost, 127.0.0.0/8, [::1]) are served, and the command listens
	// on loopback only.
	Keys []APIKey
	// MaxBodyBytes caps a request body; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// DefaultUpdateDelay is update_memories' delay when the request gives
	// none; zero means DefaultUpdateDelay (300 s, the API's default).
	DefaultUpdateDelay time.Duration
	// Logger receives request logs and what the service survives; nil
	// means slog.Default().
	Logger *slog.Logger
	// DeletionLogKey is every memory store's provider.Config.DeletionLogKey.
	DeletionLogKey []byte
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// SearchTTL is how long a search can be continued by a later one
	// (previous_search_id), on any replica: its record is kept in the
	// store, and the sweep deletes it after; zero means DefaultSearchTTL
	// (an hour).
	SearchTTL time.Duration
	// MaxSearches caps the search records each memory store keeps for
	// previous_search_id (the sweep deletes the oldest over it; each
	// keeps at most the newest 20 messages and 8 KiB of its
	// conversation); zero means DefaultMaxSearches.
	MaxSearches int
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
	// or X-Forwarded-Proto and X-Forwarded-Host, and PublicScheme its
	// scheme (the inspector's cookie is Secure over HTTPS). Set it only
	// behind a proxy that sets or strips those headers, as any client can
	// send them; false (the default) never reads them.
	TrustForwarded bool

	// AllowedOrigins are the web origins ("https://app.example": scheme,
	// host and optional port) whose pages may call the service from a
	// browser: their cross-origin requests are served and their CORS
	// preflights answered. Any other cross-origin request that is not
	// GET, HEAD or OPTIONS is refused with 403.
	AllowedOrigins []string
	// RateLimit is how many requests a second each API key may make (a
	// service without keys has one limit for all its requests), in
	// bursts of RateBurst; a request over it is answered 429 with
	// Retry-After. Requests that fail authentication have the same limit
	// per client address. Zero means DefaultRateLimit; negative means no
	// limit. A RateBurst of zero means DefaultRateBurst (or RateLimit, if
	// more).
	RateLimit float64
	RateBurst int
	// UpdateWorkers is how many updates run at once; the others due
	// wait their turn, in the order they became due. Zero means
	// DefaultUpdateWorkers.
	UpdateWorkers int

	// ObserveRequest, when set, is told of every request an operation of
	// the API answered: the operation's name in snake_case
	// ("update_memories", "search_memories", "get_update", …), the
	// status answered and how long the answer took. A request no
	// operation answered — refused before one (no key, rate limit,
	// browser protections), of no such path, or to /mcp — is told as
	// "other". Package metrics' Recorder.Request counts them.
	ObserveRequest func(op string, status int, d time.Duration)
	// WrapModels, when set, wraps the clients a memory store runs on
	// (Models' or Chat, Mini and Embedder; a nil one is passed as nil)
	// before the service uses them, such as package metrics'
	// Recorder.Models, which counts their calls and tokens.
	WrapModels func(chat, mini agent.ChatClient, emb embed.Embedder) (agent.ChatClient, agent.ChatClient, embed.Embedder)
	// Metrics, when set, is served at GET /metrics behind the keys (and,
	// without keys, to loopback only) like the API, such as package
	// metrics' Handler.
	Metrics http.Handler
	// ReplicaID names this replica in the claims it takes on updates and
	// leases (see "Replicas" in the package documentation); empty means a
	// random id at every start. It must be a valid store id (letters,
	// digits, '-', '_', '.', at most 255 bytes).
	ReplicaID string
	// PollInterval is how often the replica reads the store's due
	// updates to claim one (one query per poll); zero means
	// DefaultPollInterval.
	PollInterval time.Duration
	// LeaseTTL is how long a claim on a running update, a scope's lease
	// and the sweep's last without renewal (they are renewed every third
	// of it): a replica that dies holding one leaves it to expire, and
	// another replica takes the work over. Zero means DefaultLeaseTTL.
	LeaseTTL time.Duration
}

// MinKeyLen is the length an API key needs at least, in bytes.
const MinKeyLen = 16

// ErrShortKey is wrapped by New's error for an API key shorter than
// MinKeyLen.
var ErrShortKey = errors.New("memoryservice: API key too short")

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
	rec store.Records // the registry's records: st's own, or its sessions
	cfg Config
	log *slog.Logger
	mux *http.ServeMux

	mu        sync.Mutex
	providers map[string]*provider.MemoryProvider // by memory store name
	local     map[string]*localUpdate             // the updates accepted here and not yet claimed, by id
	queues    recent[queuedState]                 // the scopes' queue records as this replica last wrote them
	defs      recent[storeVersion]                // the memory stores' definitions as this replica last read them
	scopeMu   map[string]*scopeLock               // serialises a scope's accepts and runs in this process
	// unfinished are the forgets not yet logged or erased that the
	// registry could not keep (keepForget), by receipt, with their memory
	// store's name.
	unfinished map[*provider.Receipt]string
	closed     bool
	ready      bool
	stopSweep  chan struct{} // closed by Close
	sweepDone  chan struct{} // closed when the sweep loop has returned
	lastRetire time.Time     // when the sweep last retired finished updates
	wg         sync.WaitGroup
	runCtx     context.Context
	cancelRun  context.CancelFunc
	limit      *limiter     // nil: no rate limit
	failures   *addrLimiter // failed authentications by address; nil: no limit
	// runQueue holds the claimed updates waiting for one of the
	// Config.UpdateWorkers workers; workers is how many are running.
	runQueue []*heldClaim
	workers  int

	// held are the claims this replica holds, by update id: running or
	// waiting in runQueue.
	held     map[string]*heldClaim
	claiming map[string]bool // updates being claimed
	started  time.Time       // claims of this ReplicaID since are this process's
	stopPoll chan struct{}   // closed by Close
	pollDone chan struct{}   // closed when the poll loop has returned
	nudge    chan struct{}   // a poll now (a worker is free, an update is due)
	sweeping bool            // this replica holds the sweep's lease
	dying    bool            // test hook: stop without handing claims back
	replicaCounters
}

// New returns a service on st. Its poller claims the due updates in the
// store, whichever replica accepted them: those accepted but not
// completed before a restart run at their due time, those a replica
// was running when it stopped once their claim is handed back or
// expires.
func New(ctx context.Context, st store.Store, cfg Config) (*Service, error) {
	if st == nil {
		return nil, errors.New("memoryservice: nil store")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Service{st: st, rec: store.RecordsOf(st), cfg: cfg, log: cfg.Logger,
		providers: map[string]*provider.MemoryProvider{}, local: map[string]*localUpdate{},
		scopeMu: map[string]*scopeLock{}, unfinished: map[*provider.Receipt]string{}, runCtx: runCtx, cancelRun: cancel,
		stopSweep: make(chan struct{}), sweepDone: make(chan struct{}),
		held: map[string]*heldClaim{}, claiming: map[string]bool{}, started: cfg.Now(), stopPoll: make(chan struct{}), pollDone: make(chan struct{}), nudge: make(chan struct{}, 1)}
	s.limit = newLimiter(cfg.RateLimit, cfg.RateBurst, len(cfg.Keys), time.Now)
	s.failures = newAddrLimiter(cfg.RateLimit, cfg.RateBurst, maxAddresses, time.Now)
	s.routes()
	if err := s.migrateRecords(ctx); err != nil {
		cancel()
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		cancel()
		return nil, err
	}
	if err := s.resume(ctx); err != nil {
		cancel()
		return nil, err
	}
	s.mu.Lock()
	s.ready = true
	s.mu.Unlock()
	go s.sweepLoop(cfg.SweepInterval)
	go s.pollLoop()
	return s, nil
}

// withDefaults returns c with every zero (or negative) field that has a
// default set to it; RateBurst's default follows RateLimit.
func (c Config) withDefaults() Config {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.DefaultUpdateDelay <= 0 {
		c.DefaultUpdateDelay = DefaultUpdateDelay
	}
	c.Logger = cmp.Or(c.Logger, slog.Default())
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.SweepInterval <= 0 {
		c.SweepInterval = DefaultSweepInterval
	}
	if c.SearchTTL <= 0 {
		c.SearchTTL = DefaultSearchTTL
	}
	if c.MaxSearches <= 0 {
		c.MaxSearches = DefaultMaxSearches
	}
	if c.UpdateRetention <= 0 {
		c.UpdateRetention = DefaultUpdateRetention
	}
	if c.UpdateWorkers <= 0 {
		c.UpdateWorkers = DefaultUpdateWorkers
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	if c.ReplicaID == "" {
		c.ReplicaID = newID("replica-")
	}
	c.RateLimit = cmp.Or(c.RateLimit, DefaultRateLimit)
	if c.RateBurst <= 0 {
		c.RateBurst = max(DefaultRateBurst, int(math.Ceil(c.RateLimit)))
	}
	return c
}

// validate reports the first field of c that is missing or out of range.
func (c Config) validate() error {
	if c.Models == nil && c.Chat == nil && c.Mini == nil {
		return errors.New("memoryservice: Config.Models, Config.Chat or Config.Mini is required")
	}
	if c.Models == nil && c.Embedder == nil {
		return errors.New("memoryservice: Config.Models or Config.Embedder is required")
	}
	if c.Dimensions < 0 {
		return fmt.Errorf("memoryservice: Config.Dimensions %d is negative", c.Dimensions)
	}
	if err := store.CheckID("Config.ReplicaID", c.ReplicaID); err != nil {
		return fmt.Errorf("memoryservice: %w", err)
	}
	if err := checkOrigins(c.AllowedOrigins); err != nil {
		return err
	}
	for i, k := range c.Keys {
		if len(k.Key) < MinKeyLen {
			return fmt.Errorf("memoryservice: Config.Keys[%d] has %d bytes; a key needs at least %d: %w", i, len(k.Key), MinKeyLen, ErrShortKey)
		}
		for _, name := range k.Stores {
			if err := checkName("stores", name); err != nil {
				return fmt.Errorf("memoryservice: Config.Keys[%d]: %w", i, err)
			}
		}
	}
	return nil
}

// Close stops taking updates and claiming them, leaves the queued ones
// queued in the store (any replica runs them), waits for those in
// progress until ctx ends, hands back the claims of those cut short (so
// another replica takes them over at once), gives up the sweep's lease
// and drains the providers' background work. The store is not closed.
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed, s.ready = true, false
	close(s.stopSweep)
	close(s.stopPoll)
	for id, u := range s.local {
		u.timer.Stop()
		delete(s.local, id)
	}
	s.mu.Unlock()
	for _, done := range []chan struct{}{s.sweepDone, s.pollDone} {
		select { // a sweep or poll under way finishes first, or is cut short
		case <-done:
		case <-ctx.Done():
			s.cancelRun()
			<-done
		}
	}

	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		s.cancelRun() // runs still going are cut short; their claims are handed back below
		err = fmt.Errorf("memoryservice: updates in progress abandoned: %w", ctx.Err())
		<-done
	}
	s.mu.Lock()
	left := s.runQueue // claimed, never started
	s.runQueue = nil
	s.mu.Unlock()
	for _, h := range left {
		s.letGo(h)
	}
	s.releaseSweep()
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

// scopeLock is the lock of one scope's accepts or runs, kept in
// Service.scopeMu while refs (holders and waiters) is above zero.
type scopeLock struct {
	sync.Mutex
	refs int // guarded by Service.mu
}

// lockScope serialises the accepts (what "accept") or the runs ("run")
// of one scope. The lock is dropped from the map when its last holder or
// waiter is done, so the map holds only the scopes in use.
func (s *Service) lockScope(what, userID string) func() {
	key := what + "\x00" + userID
	s.mu.Lock()
	l, ok := s.scopeMu[key]
	if !ok {
		l = &scopeLock{}
		s.scopeMu[key] = l
	}
	l.refs++
	s.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		s.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(s.scopeMu, key)
		}
		s.mu.Unlock()
	}
}

func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
