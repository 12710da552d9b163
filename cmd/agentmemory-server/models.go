package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/llm/openai"
	"github.com/agentmemory/agentmemory/memoryservice"
)

// probeTimeout bounds the one request that checks a model name new to
// the process.
const probeTimeout = 30 * time.Second

// endpointModels are the clients of the model names memory store
// definitions give, on the endpoint and credentials the environment
// configures (memoryservice.Models). The environment's own model names
// get its own clients. A chat model of another name is checked once per
// process with a tiny request, and an embedding model of another name is
// asked its vector length (its native one: OPENAI_EMBEDDING_DIMENSIONS
// applies to the environment's model only); a 404 (an unknown model or
// Azure deployment) is memoryservice.ErrUnknownModel, and a check that
// fails otherwise is an error (a 503 at store creation) and is not kept:
// the next use of the name checks it again.
type endpointModels struct {
	env *openai.Clients
	log *slog.Logger

	chats byName[agent.ChatClient]
	embs  byName[embed.Embedder]
}

func newEndpointModels(env *openai.Clients, log *slog.Logger) *endpointModels {
	return &endpointModels{env: env, log: log}
}

// byName keeps one client per model name. Two callers asking for a new
// name at once may both make one; the first kept is the one every caller
// gets.
type byName[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

// get returns the client kept for name, or makes one with build and keeps
// it; kept reports whether this call's client was the one kept.
func (b *byName[T]) get(name string, build func() (T, error)) (v T, kept bool, err error) {
	b.mu.Lock()
	v, ok := b.m[name]
	b.mu.Unlock()
	if ok {
		return v, false, nil
	}
	if v, err = build(); err != nil {
		return v, false, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if prev, ok := b.m[name]; ok {
		return prev, false, nil
	}
	if b.m == nil {
		b.m = map[string]T{}
	}
	b.m[name] = v
	return v, true, nil
}

// unknown maps an endpoint's 404 to memoryservice.ErrUnknownModel.
func unknown(err error) error {
	if errors.Is(err, openai.ErrNotFound) {
		return fmt.Errorf("%w: %w", memoryservice.ErrUnknownModel, err)
	}
	return err
}

// Chat implements memoryservice.Models.
func (m *endpointModels) Chat(ctx context.Context, name string) (agent.ChatClient, error) {
	c, kept, err := m.chats.get(name, func() (agent.ChatClient, error) {
		switch name {
		case m.env.Config.ChatModel:
			return m.env.Chat, nil
		case m.env.MiniModel:
			return m.env.Mini, nil
		}
		cfg := m.env.Config
		cfg.ChatModel = name
		nc, err := openai.NewChat(cfg)
		if err != nil {
			return nil, err
		}
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		_, err = nc.Complete(pctx, &agent.ChatRequest{Messages: []agent.Message{agent.UserText("Reply with OK.")}, MaxTokens: 16})
		cancel()
		if err != nil { // a 404 is an unknown model; any other failure is not kept, and checked again next time
			return nil, unknown(err)
		}
		return nc, nil
	})
	if kept {
		m.log.InfoContext(ctx, "agentmemory-server: memory store chat model", "chat_model", name, "endpoint", m.env.Config.Endpoint())
	}
	return c, err
}

// Embedder implements memoryservice.Models.
func (m *endpointModels) Embedder(ctx context.Context, name string) (embed.Embedder, error) {
	e, kept, err := m.embs.get(name, func() (embed.Embedder, error) {
		if name == m.env.Config.EmbeddingModel {
			return m.env.Embedder, nil
		}
		cfg := m.env.Config
		cfg.EmbeddingModel, cfg.EmbeddingDimensions = name, 0
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		n, err := openai.MeasureDimensions(pctx, cfg)
		cancel()
		if err != nil {
			return nil, unknown(err)
		}
		cfg.EmbeddingModelDimensions = n
		ne, err := openai.NewEmbedder(cfg)
		if err != nil {
			return nil, err
		}
		return ne, nil
	})
	if kept {
		m.log.InfoContext(ctx, "agentmemory-server: memory store embedding model", "embedding_model", name, "dimensions", e.Dimensions(), "endpoint", m.env.Config.Endpoint())
	}
	return e, err
}

// offlineModels run every memory store on the offline client and the
// lexical embedder, whatever models its definition names: the names are
// recorded, and said once each in the log.
type offlineModels struct {
	chat agent.ChatClient
	emb  embed.Embedder
	log  *slog.Logger

	mu   sync.Mutex
	said map[string]bool
}

func (m *offlineModels) say(ctx context.Context, what, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.said[what+"\x00"+name] {
		return
	}
	if m.said == nil {
		m.said = map[string]bool{}
	}
	m.said[what+"\x00"+name] = true
	m.log.InfoContext(ctx, "agentmemory-server: running offline: a memory store's "+what+" is recorded, the offline models do its work", what, name)
}

// Chat implements memoryservice.Models.
func (m *offlineModels) Chat(ctx context.Context, name string) (agent.ChatClient, error) {
	m.say(ctx, "chat_model", name)
	return m.chat, nil
}

// Embedder implements memoryservice.Models.
func (m *offlineModels) Embedder(ctx context.Context, name string) (embed.Embedder, error) {
	m.say(ctx, "embedding_model", name)
	return m.emb, nil
}
