// Command agentmemory-server serves agentmemory over HTTP as the Azure AI
// Foundry Memory Store API (package memoryservice), so that any language's
// official client — or curl — stores and searches long-term memory:
//
//	go run ./cmd/agentmemory-server [-addr 127.0.0.1:8080] [-db agentmemory.db] [-offline] [-v] [-tls-cert F -tls-key F]
//	    [-trust-forwarded] [-sweep-interval 1m] [-update-retention 24h] [-allowed-origins https://app.example,...]
//	    [-rate-limit 100] [-rate-burst 200] [-max-conns 512] [-update-workers 4]
//	    [-read-header-timeout 10s] [-read-timeout 1m] [-write-timeout 5m] [-idle-timeout 1m]
//	    [-metrics-addr 10.0.0.5:9090]
//	    [-gateway=true] [-gateway-store gateway] [-gateway-upstream URL] [-gateway-retrieval-tool]
//	    [-inspector=true]
//
// # Memory and models
//
// Memory lives in the SQLite file -db (created if missing), or in Azure
// Cosmos DB when AZURE_COSMOS_ENDPOINT is set. The model endpoint and its
// credentials come from the environment as for the demo and
// cmd/agentmemory-mcp (see docs/library.md); each memory store runs on the chat
// and embedding models (Azure: deployments) its definition names, on that
// endpoint. Without a model configured every store runs on the offline
// "no LLM" client and the lexical embedder, which the server says at
// start.
//
// # MCP
//
// The MCP tools of package mcpserver are served for one scope of a memory
// store at /mcp/{store}/{scope} over streamable HTTP, behind the same keys.
//
// # The OpenAI-compatible gateway
//
// /v1/chat/completions, /v1/models and /v1/memory are the gateway of
// package gateway: an OpenAI client pointed at the server gets memory.
// It forwards to the configured model endpoint, or to -gateway-upstream
// (an OpenAI-compatible base URL, with OPENAI_API_KEY as its key), and
// its users are the scopes of memory store -gateway-store (created if
// missing). It is on by default when there is an endpoint to forward to,
// and says in the log when there is none; -gateway=false turns it off.
// It is behind the same keys and browser guard as the API, and a key
// limited to other memory stores is refused.
//
// # The inspector
//
// /inspector/ serves the memory inspector of package inspector: web
// pages that show, for a scope of a memory store (or a gateway user), its
// profile, insights, sessions, interactions, deletion log and updates,
// and forget from it. It is behind the same keys (a browser signs in
// with one, kept in a cookie) and browser protections; -inspector=false
// turns it off.
//
// # Keys
//
// API keys come from AGENTMEMORY_SERVER_KEYS (comma-separated) and from
// the file named by AGENTMEMORY_SERVER_KEYS_FILE (one key a line); a key
// followed by memory store names (space-separated) is limited to those
// stores, and gets 403 for any other. Clients send a key as
// "Authorization: Bearer <key>" or "api-key: <key>"; a key has 16 bytes
// at least. With no key configured the server listens on loopback only
// (a host name of -addr must resolve to loopback addresses only), answers
// only requests addressed to a loopback Host, and says so. Cross-origin
// writes from web pages are refused unless their origin is in
// -allowed-origins (or AGENTMEMORY_SERVER_ALLOWED_ORIGINS); each key has
// its request rate limit (-rate-limit, -rate-burst; 429 with
// Retry-After), and connections their cap and timeouts. /healthz
// and /readyz need no key.
//
// # Metrics
//
// /metrics serves the server's Prometheus series (package metrics) behind
// the same keys as the API, or, with -metrics-addr, on that address of
// their own instead, without authentication: for a private network that
// only the operator's Prometheus reaches. Each replica is scraped as a
// target of its own.
//
// # TLS and shutdown
//
// The official Azure SDKs send a Bearer token
// only over HTTPS: serve it with -tls-cert and -tls-key (or behind a TLS
// proxy, with -trust-forwarded so that the address clients poll is the
// proxy's, and the inspector's cookie Secure) for them. SIGINT or SIGTERM drains: no new requests,
// requests in flight answered, updates in progress finished (queued ones
// stay queued in the store and complete after the next start).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agentmemory/agentmemory/internal/stack"
	"github.com/agentmemory/agentmemory/memoryservice"
	"github.com/agentmemory/agentmemory/metrics"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.LookupEnv, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "agentmemory-server:", err)
		stop()
		os.Exit(1)
	}
}

// drainTimeout bounds the shutdown: requests in flight, then updates in
// progress and background memory work.
const drainTimeout = 30 * time.Second

// keys reads the API keys from the environment. Each entry is a key,
// optionally followed by the names of the memory stores it is limited to,
// separated by spaces: entries are comma-separated in
// AGENTMEMORY_SERVER_KEYS and one a line in AGENTMEMORY_SERVER_KEYS_FILE
// (where blank lines and lines starting with # are skipped).
func keys(lookup func(string) (string, bool)) ([]memoryservice.APIKey, error) {
	var out []memoryservice.APIKey
	add := func(entry string) {
		if f := strings.Fields(entry); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			out = append(out, memoryservice.APIKey{Key: f[0], Stores: f[1:]})
		}
	}
	if v, ok := lookup("AGENTMEMORY_SERVER_KEYS"); ok {
		for _, e := range strings.Split(v, ",") {
			add(e)
		}
	}
	if path, ok := lookup("AGENTMEMORY_SERVER_KEYS_FILE"); ok && path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("AGENTMEMORY_SERVER_KEYS_FILE: %w", err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			add(line)
		}
	}
	return out, nil
}

// run serves until ctx ends. listening, if not nil, receives the address
// once the server accepts connections.
func run(ctx context.Context, args []string, lookup func(string) (string, bool), stderr io.Writer, listening chan<- string) error {
	fs := flag.NewFlagSet("agentmemory-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", ":8080", "address to listen on (loopback only without an API key)")
	db := fs.String("db", "agentmemory.db", "SQLite memory file (unused with AZURE_COSMOS_ENDPOINT)")
	offline := fs.Bool("offline", false, "use the offline no-LLM client even if a model is configured")
	verbose := fs.Bool("v", false, "log at debug level")
	tlsCert := fs.String("tls-cert", "", "PEM certificate file: serve HTTPS (with -tls-key)")
	tlsKey := fs.String("tls-key", "", "PEM private key file of -tls-cert")
	trustForwarded := fs.Bool("trust-forwarded", false, "behind a proxy that sets them: take the public scheme and host of Operation-Location, and whether the inspector's cookie is Secure, from the Forwarded or X-Forwarded-Proto/-Host headers (never read otherwise)")
	sweep := fs.Duration("sweep-interval", memoryservice.DefaultSweepInterval, "how often memories past their store's default_ttl_seconds, and update records past -update-retention, are deleted")
	retention := fs.Duration("update-retention", memoryservice.DefaultUpdateRetention, "how long a finished update's record stays readable by its poller")
	originsDefault, _ := lookup("AGENTMEMORY_SERVER_ALLOWED_ORIGINS")
	origins := fs.String("allowed-origins", originsDefault, "comma-separated web origins (https://app.example) whose pages may call the server from a browser (default $AGENTMEMORY_SERVER_ALLOWED_ORIGINS)")
	rate := fs.Float64("rate-limit", memoryservice.DefaultRateLimit, "requests a second per API key (without keys: for all requests); negative for no limit")
	burst := fs.Int("rate-burst", memoryservice.DefaultRateBurst, "requests per API key in a burst above -rate-limit")
	workers := fs.Int("update-workers", memoryservice.DefaultUpdateWorkers, "how many memory updates run at once; the others due wait their turn")
	metricsAddr := fs.String("metrics-addr", "", "serve /metrics on this address of its own, without authentication (for a private network), instead of behind the API keys on -addr")
	poll := fs.Duration("poll-interval", memoryservice.DefaultPollInterval, "how often this replica looks in the store for due memory updates to claim (one query each)")
	leaseTTL := fs.Duration("lease-ttl", memoryservice.DefaultLeaseTTL, "how long a replica's claim on a running update lasts unrenewed: a dead replica's update is taken over after it")
	replicaID := fs.String("replica-id", "", "this replica's name in the claims it takes (letters, digits, '-', '_', '.'); empty: a random one at each start")
	inspect := fs.Bool("inspector", true, "serve the memory inspector's web pages at /inspector/ (behind the API keys)")
	limits := connFlags(fs)
	gwFlags := newGatewayFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := limits.check(); err != nil {
		return err
	}
	if *rate == 0 || *burst <= 0 {
		return errors.New("-rate-limit must not be 0 (negative for no limit) and -rate-burst must be positive")
	}
	if *workers <= 0 {
		return errors.New("-update-workers must be positive")
	}
	if *sweep <= 0 || *retention <= 0 {
		return errors.New("-sweep-interval and -update-retention must be positive")
	}
	if *poll <= 0 || *leaseTTL <= 0 {
		return errors.New("-poll-interval and -lease-ttl must be positive")
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return errors.New("-tls-cert and -tls-key go together")
	}
	logger := stack.Logger(stderr, *verbose)

	ks, err := keys(lookup)
	if err != nil {
		return err
	}
	where, err := listenAddr(ctx, *addr, len(ks) > 0, net.DefaultResolver.LookupIPAddr)
	if err != nil {
		return err
	}
	m, err := stack.ModelsFromEnv(lookup, *offline)
	if err != nil {
		return err
	}
	logKey, err := stack.DeletionLogKey(lookup)
	if err != nil {
		return err
	}
	// Each memory store runs on the models its definition names, on the
	// environment's endpoint. A SQLite file then takes vectors of any
	// length (each store's of its own model's); Cosmos DB's vector index
	// has the environment's embedding model's length, and a store of
	// another is refused.
	var models memoryservice.Models = &offlineModels{chat: m.Chat, emb: m.Embedder, log: logger}
	dims, storeDims := m.Embedder.Dimensions(), 0
	if m.OpenAI != nil {
		models = newEndpointModels(m.OpenAI, logger)
		if !stack.CosmosConfigured(lookup) {
			dims = 0
		} else {
			storeDims = dims
		}
	}
	reg := metrics.NewRegistry()
	rec, err := metrics.New(reg)
	if err != nil {
		return err
	}
	st, desc, err := stack.OpenStore(ctx, lookup, *db, dims, logger)
	if err != nil {
		return err
	}
	defer st.Close()
	scrape := metrics.Handler(reg, logger)
	cfg := memoryservice.Config{Models: models, Dimensions: storeDims, Keys: ks, Logger: logger,
		SweepInterval: *sweep, UpdateRetention: *retention, TrustForwarded: *trustForwarded, DeletionLogKey: logKey,
		AllowedOrigins: splitList(*origins), RateLimit: *rate, RateBurst: *burst, UpdateWorkers: *workers,
		ObserveRequest: rec.Request, WrapModels: rec.Models,
		PollInterval: *poll, LeaseTTL: *leaseTTL, ReplicaID: *replicaID}
	if *metricsAddr == "" {
		cfg.Metrics = scrape
	}
	svc, err := memoryservice.New(ctx, rec.Store(st), cfg)
	if err != nil {
		return err
	}
	if err := rec.WatchQueue(func(ctx context.Context) (metrics.QueueStats, error) {
		qs, err := svc.QueueStats(ctx)
		return metrics.QueueStats(qs), err
	}); err != nil {
		_ = svc.Close(context.Background())
		return err
	}
	if sq, ok := st.(*sqlite.Store); ok {
		if err := rec.WatchWrites(func() metrics.WriteStats { return metrics.WriteStats(sq.WriteStats()) }); err != nil {
			_ = svc.Close(context.Background())
			return err
		}
	}
	gw, gwStore, err := startGateway(ctx, fs, gwFlags, lookup, m, svc, logger)
	if err != nil {
		_ = svc.Close(context.Background())
		return err
	}
	closeAll := func(ctx context.Context) error {
		var err error
		if gw != nil {
			err = gw.Close(ctx)
		}
		return errors.Join(err, svc.Close(ctx))
	}
	handler, err := withInspector(withGateway(svc, gw, gwStore), svc, *inspect, logger)
	if err != nil {
		_ = closeAll(context.Background())
		return err
	}
	tcp, err := net.Listen("tcp", where)
	if err != nil {
		_ = closeAll(context.Background())
		return err
	}
	var metricsSrv *http.Server
	if *metricsAddr != "" {
		mln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			_ = tcp.Close()
			_ = closeAll(context.Background())
			return fmt.Errorf("-metrics-addr: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", scrape)
		metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: limits.readHeader, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
		go func() {
			if err := metricsSrv.Serve(mln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				logger.Error("agentmemory-server: serving /metrics", "err", err)
			}
		}()
		logger.Info("agentmemory-server: serving /metrics without authentication, for a private network", "metrics_addr", mln.Addr().String())
	}
	ln := newLimitListener(tcp, limits.maxConns)
	if m.Offline {
		logger.Warn("agentmemory-server: no model configured: running offline (no LLM: deterministic rules, lexical embedder) whatever models a memory store names; set OPENAI_API_KEY, OPENAI_BASE_URL or AZURE_OPENAI_ENDPOINT for a real model")
	}
	if len(ks) == 0 {
		logger.Warn("agentmemory-server: no API key configured: listening on loopback only, without authentication; set AGENTMEMORY_SERVER_KEYS to serve other hosts")
	}
	logger.Info("agentmemory-server: serving the Memory Store API", "addr", ln.Addr().String(), "max_conns", limits.maxConns, "models", m.Description, "memory", desc, "keys", len(ks), "tls", *tlsCert != "")
	if *inspect {
		logger.Info("agentmemory-server: serving the memory inspector at /inspector/")
	}
	srv := &http.Server{Handler: handler, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	limits.apply(srv)
	served := make(chan error, 1)
	go func() {
		if *tlsCert != "" {
			served <- srv.ServeTLS(ln, *tlsCert, *tlsKey)
			return
		}
		served <- srv.Serve(ln)
	}()
	if listening != nil {
		listening <- ln.Addr().String()
	}
	select {
	case err := <-served:
		if metricsSrv != nil {
			_ = metricsSrv.Close()
		}
		_ = closeAll(context.Background())
		return err
	case <-ctx.Done():
	}
	logger.Info("agentmemory-server: draining")
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
	defer cancel()
	err = srv.Shutdown(dctx)
	if metricsSrv != nil { // scraped until the API is drained
		if merr := metricsSrv.Shutdown(dctx); merr != nil && err == nil {
			err = merr
		}
	}
	if cerr := closeAll(dctx); cerr != nil && err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("drain: %w", err)
	}
	logger.Info("agentmemory-server: stopped")
	return nil
}

// splitList reads a comma-separated list, dropping empty entries.
func splitList(v string) []string {
	var out []string
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}
