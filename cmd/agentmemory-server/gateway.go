package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agentmemory/agentmemory/gateway"
	"github.com/agentmemory/agentmemory/internal/stack"
	"github.com/agentmemory/agentmemory/memoryservice"
)

// gatewayFlags are the flags of the OpenAI-compatible gateway.
type gatewayFlags struct {
	on       *bool
	store    *string
	upstream *string
	tool     *bool
	idle     *time.Duration
}

func newGatewayFlags(fs *flag.FlagSet) *gatewayFlags {
	return &gatewayFlags{
		on:       fs.Bool("gateway", true, "serve the OpenAI-compatible gateway at /v1/ (on by default when a model is configured or -gateway-upstream is set)"),
		store:    fs.String("gateway-store", "gateway", "the memory store whose scopes are the gateway's users (created if missing)"),
		upstream: fs.String("gateway-upstream", "", "base URL of the OpenAI-compatible server the gateway forwards to (with its /v1; key from OPENAI_API_KEY), instead of the configured model endpoint"),
		tool:     fs.Bool("gateway-retrieval-tool", false, "also offer the model retrieve_user_facts, run by the gateway unseen by the client"),
		idle:     fs.Duration("gateway-idle-timeout", gateway.DefaultIdleTimeout, "end a gateway user's session after this long without a request (its summary is written then)"),
	}
}

// explicit reports whether -gateway was given on the command line.
func explicit(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// upstream is the endpoint the gateway forwards to: -gateway-upstream, or
// the environment's model endpoint; ok is false when there is neither.
func (f *gatewayFlags) endpoint(lookup func(string) (string, bool), m *stack.Models) (gateway.Upstream, bool) {
	if *f.upstream != "" {
		key, _ := lookup("OPENAI_API_KEY")
		return gateway.Upstream{BaseURL: *f.upstream, APIKey: strings.TrimSpace(key)}, true
	}
	if m.OpenAI == nil {
		return gateway.Upstream{}, false
	}
	return gateway.UpstreamFrom(m.OpenAI.Config), true
}

// startGateway makes the gateway, or returns nil when it is off: turned
// off, or on by default with nowhere to forward to (said in the log).
// -gateway given with nowhere to forward to is an error.
func startGateway(ctx context.Context, fs *flag.FlagSet, f *gatewayFlags, lookup func(string) (string, bool), m *stack.Models,
	svc *memoryservice.Service, logger *slog.Logger) (*gateway.Handler, *memoryservice.GatewayStore, error) {
	if !*f.on {
		return nil, nil, nil
	}
	up, ok := f.endpoint(lookup, m)
	if !ok {
		if explicit(fs, "gateway") {
			return nil, nil, errors.New("-gateway needs a model endpoint to forward to: configure a model (OPENAI_API_KEY, OPENAI_BASE_URL or AZURE_OPENAI_ENDPOINT) or set -gateway-upstream")
		}
		logger.Info("agentmemory-server: the OpenAI-compatible gateway is off: no model endpoint to forward to (configure a model or set -gateway-upstream)")
		return nil, nil, nil
	}
	chatModel, embModel := "offline", "lexical"
	if m.OpenAI != nil {
		chatModel, embModel = m.OpenAI.Config.ChatModel, m.OpenAI.Config.EmbeddingModel
	}
	mem, err := svc.GatewayStore(ctx, *f.store, chatModel, embModel)
	if err != nil {
		return nil, nil, fmt.Errorf("-gateway-store %q: %w", *f.store, err)
	}
	gw, err := gateway.New(ctx, gateway.Config{Memory: mem, Upstream: up, RetrievalTool: *f.tool, IdleTimeout: *f.idle, Logger: logger})
	if err != nil {
		return nil, nil, err
	}
	where := up.BaseURL
	if where == "" {
		where = up.Azure.Endpoint
	}
	logger.Info("agentmemory-server: serving the OpenAI-compatible gateway at /v1/", "upstream", where, "memory_store", mem.Name())
	return gw, mem, nil
}

// withGateway serves the gateway at /v1/, behind the service's keys and
// browser guard, and the service everywhere else.
func withGateway(svc *memoryservice.Service, gw *gateway.Handler, mem *memoryservice.GatewayStore) http.Handler {
	if gw == nil {
		return svc
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/", mem.Protect(gw))
	mux.Handle("/", svc)
	return mux
}
