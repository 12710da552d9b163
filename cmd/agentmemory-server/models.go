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
// Azure deployment) is memoryservice.ErrUnknownModel.
type endpointModels struct {
	env *openai.Clients
	log *slog.Logger

	mu    sync.Mutex
	chats map[string]agent.ChatClient
	embs  map[string]embed.Embedder
}

func newEndpointModels(env *openai.Clients, log *slog.Logger) *endpointModels {
	return &endpointModels{env: env, log: log, chats: map[string]agent.ChatClient{}, embs: map[string]embed.Embedder{}}
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
	m.mu.Lock()
	c, ok := m.chats[name]
	m.mu.Unlock()
	if ok {
		return c, nil
	}
	switch name {
	case m.env.Config.ChatModel:
		c = m.env.Chat
	case m.env.MiniModel:
		c = m.env.Mini
	default:
		cfg := m.env.Config
		cfg.ChatModel = name
		nc, err := openai.NewChat(cfg)
		if err != nil {
			return nil, err
		}
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		_, err = nc.Complete(pctx, &agent.ChatRequest{Messages: []agent.Message{agent.UserText("Reply with OK.")}, MaxTokens: 16})
		cancel()
		if errors.Is(err, openai.ErrNotFound) {
			return nil, unknown(err)
		}
		if err != nil { // not an answer about the name: the store's work will say more
			m.log.WarnContext(ctx, "agentmemory-server: chat model not checked", "chat_model", name, "err", err)
		}
		c = nc
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.chats[name]; ok {
		return prev, nil
	}
	m.chats[name] = c
	m.log.InfoContext(ctx, "agentmemory-server: memory store chat model", "chat_model", name, "endpoint", m.env.Config.Endpoint())
	return c, nil
}

// Embedder implements memoryservice.Models.
func (m *endpointModels) Embedder(ctx context.Context, name string) (embed.Embedder, error) {
	m.mu.Lock()
	e, ok := m.embs[name]
	m.mu.Unlock()
	if ok {
		return e, nil
	}
	if name == m.env.Config.EmbeddingModel {
		e = m.env.Embedder
	} else {
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
		e = ne
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.embs[name]; ok {
		return prev, nil
	}
	m.embs[name] = e
	m.log.InfoContext(ctx, "agentmemory-server: memory store embedding model", "embedding_model", name, "dimensions", e.Dimensions(), "endpoint", m.env.Config.Endpoint())
	return e, nil
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
