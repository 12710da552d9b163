package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/keeper"
	"github.com/agentmemory/agentmemory/memoryservice"
	"github.com/agentmemory/agentmemory/provider"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/tokens"
)

// Handler is the gateway: an http.Handler serving the routes the package
// documentation lists. It is safe for concurrent use. Close it to stop
// ending idle sessions.
type Handler struct {
	cfg       Config
	mem       *memoryservice.GatewayStore
	p         *provider.MemoryProvider
	retriever *retrieval.Retriever
	up        Upstream
	log       *slog.Logger
	mux       *http.ServeMux
	sessions  *sessions
	// counter measures the Responses door's context as the memory
	// store's keeper counts it (its default counter); tallies keep what
	// it counted of each chain.
	counter tokens.Counter
	tallies *tallies
}

// New returns a gateway on cfg.Memory's store, forwarding to cfg.Upstream.
func New(ctx context.Context, cfg Config) (*Handler, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p, err := cfg.Memory.Provider()
	if err != nil {
		return nil, fmt.Errorf("gateway: memory store %q: %w", cfg.Memory.Name(), err)
	}
	// The gateway searches with a retriever of its own (its rewrite mode)
	// on the provider's models.
	rc := p.Retriever().Config()
	rc.Rewrite = cfg.Rewrite
	rc.Logger = cfg.Logger
	rt, err := retrieval.New(cfg.Memory.Store(), rc)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	h := &Handler{cfg: cfg, mem: cfg.Memory, p: p, retriever: rt, up: cfg.Upstream, log: cfg.Logger.With("component", "gateway"), counter: &tokens.BPE{}, tallies: &tallies{max: cfg.MaxSessions}}
	h.sessions = newSessions(cfg.MaxSessions, cfg.IdleTimeout, h.endSession, h.log)
	h.routes()
	return h, nil
}

// endSession ends the memory session an agent session is in (pruning,
// summary and reflection follow in the background): with ifIdle, only
// once the store shows it idle for Config.IdleTimeout, whichever replica
// served it, and otherwise it returns how long until it may be.
func (h *Handler) endSession(sess *agent.Session, ifIdle bool) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), h.cfg.UpstreamTimeout)
	defer cancel()
	var wait time.Duration
	var err error
	if ifIdle {
		_, wait, err = h.p.EndSessionIfIdle(ctx, sess, h.cfg.IdleTimeout)
	} else {
		_, err = h.p.EndSession(ctx, sess)
	}
	if err != nil && !errors.Is(err, keeper.ErrSessionCompleted) && !errors.Is(err, store.ErrNotFound) {
		h.log.WarnContext(ctx, "gateway: ending an idle session failed; it ends at its next idle time", "session", sess.ID(), "err", err)
	}
	return wait
}

// routes builds the mux. The two doors share everything but their
// translation: the Responses door translates its request into the fields
// of a Chat Completions request (newChatRequest) and runs it through
// h.exchange with an emitter that translates the answer back (see
// emitter).
func (h *Handler) routes() {
	m := http.NewServeMux()
	m.HandleFunc("POST /v1/chat/completions", h.serveChat)
	m.HandleFunc("POST /v1/responses", h.serveResponses)
	m.HandleFunc("GET /v1/models", h.serveModels)
	m.HandleFunc("GET /v1/memory", h.listMemory)
	m.HandleFunc("DELETE /v1/memory", h.forgetUser)
	m.HandleFunc("DELETE /v1/memory/{id}", h.forgetMemory)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, notFound("path", "no such operation: %s %s", r.Method, r.URL.Path))
	})
	h.mux = m
}

// ServeHTTP implements http.Handler, logging each request: its route,
// status, what memory did (the X-Memory header) and how long it
// took, streams included. No user id or content is logged.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	_, route := h.mux.Handler(r) // the pattern: a path names users' memories
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	h.mux.ServeHTTP(rec, r)
	level := slog.LevelInfo
	if rec.status >= 500 {
		level = slog.LevelError
	}
	h.log.Log(r.Context(), level, "gateway request", "route", route, "status", rec.status,
		"memory", rec.Header().Get(Header), "duration_ms", time.Since(start).Milliseconds())
}

// statusRecorder keeps the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController the connection's writer (to
// flush each streamed event).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush waits until the session ends under way and the background memory
// work queued so far (pruning, summaries, reflection of ended sessions)
// are done.
func (h *Handler) Flush(ctx context.Context) error {
	if err := h.sessions.settle(ctx); err != nil {
		return err
	}
	return h.p.Flush(ctx)
}

// Close stops ending idle sessions and waits, until ctx ends, for the
// ends under way. Sessions still open stay open in the store. The memory
// store's provider and the store are the Memory Store API's to close.
func (h *Handler) Close(ctx context.Context) error {
	if !h.sessions.close(ctx.Done()) {
		return fmt.Errorf("gateway: session ends abandoned: %w", ctx.Err())
	}
	return nil
}

// serveModels passes GET /v1/models through to the upstream.
func (h *Handler) serveModels(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.UpstreamTimeout)
	defer cancel()
	resp, err := h.up.do(ctx, http.MethodGet, "models", "", nil)
	if err != nil {
		h.unreachable(w, r, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		relayError(w, resp)
		return
	}
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// unreachable answers a request whose upstream could not be reached.
func (h *Handler) unreachable(w http.ResponseWriter, r *http.Request, err error) {
	h.log.WarnContext(r.Context(), "gateway: upstream unreachable", "err", err)
	status := http.StatusBadGateway
	if errors.Is(err, context.DeadlineExceeded) {
		status = http.StatusGatewayTimeout
	}
	writeError(w, upstreamFailed(status, "the model endpoint could not be reached: %v", err))
}
