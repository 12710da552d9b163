// Package stack chooses what the project's commands (the demo, the LoCoMo
// evaluation) run on, from the environment: the models — llm/openai when
// configured, else the offline "no LLM" client with the lexical embedder —
// and the store — Azure Cosmos DB when AZURE_COSMOS_ENDPOINT is set, else a
// SQLite file. Nothing falls back silently: a half-configured model or
// store is an error, and each choice comes with a line describing it.
// Logger builds the log the commands write to standard error.
package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/agentmemory/agentmemory/agent"
	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/llm/offline"
	"github.com/agentmemory/agentmemory/llm/openai"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/cosmos"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// Models are the clients a command runs on.
type Models struct {
	Chat, Mini agent.ChatClient
	Embedder   embed.Embedder
	// Offline reports the offline client and the lexical embedder.
	Offline bool
	// OpenAI are the llm/openai clients and their configuration (nil
	// offline), for a command that makes clients of other model names on
	// the same endpoint.
	OpenAI *openai.Clients
	// Description says which models run, without secrets.
	Description string
}

// ModelsFromEnv returns the model llm/openai.FromEnv configures from
// lookup, or the offline client and lexical embedder when none is
// configured or forceOffline is set. It also checks the store's variables
// (those OpenStore reads), so that one error names every problem of the
// environment, the model's and the store's, rather than one per run.
func ModelsFromEnv(lookup func(string) (string, bool), forceOffline bool) (*Models, error) {
	var storeErr error
	if _, err := cosmos.FromEnv(lookup, cosmos.Config{}); err != nil && !errors.Is(err, cosmos.ErrNotConfigured) {
		storeErr = fmt.Errorf("store configuration: %w", err)
	}
	if !forceOffline {
		c, err := openai.FromEnv(lookup, openai.Config{})
		switch {
		case err == nil && storeErr == nil:
			return &Models{Chat: c.Chat, Mini: c.Mini, Embedder: c.Embedder, OpenAI: c, Description: "model " + c.String()}, nil
		case err != nil && !errors.Is(err, openai.ErrNotConfigured):
			return nil, errors.Join(fmt.Errorf("model configuration: %w", err), storeErr)
		}
	}
	if storeErr != nil {
		return nil, storeErr
	}
	client, err := offline.New(offline.Config{})
	if err != nil {
		return nil, err
	}
	emb, err := lexical.New(lexical.Config{})
	if err != nil {
		return nil, err
	}
	return &Models{Chat: client, Mini: client, Embedder: emb, Offline: true,
		Description: "offline client (no LLM: deterministic rules, no network) and the lexical embedder"}, nil
}

// CosmosConfigured reports whether lookup selects Azure Cosmos DB (set,
// whether or not completely: OpenStore reports what is missing).
func CosmosConfigured(lookup func(string) (string, bool)) bool {
	_, err := cosmos.FromEnv(lookup, cosmos.Config{})
	return !errors.Is(err, cosmos.ErrNotConfigured)
}

// OpenStore opens Azure Cosmos DB as store/cosmos.FromEnv configures it
// from lookup (creating the database and containers if needed), or else
// the SQLite file at sqlitePath. dims is the embedder's dimension.
func OpenStore(ctx context.Context, lookup func(string) (string, bool), sqlitePath string, dims int, logger *slog.Logger) (store.Store, string, error) {
	cfg, err := cosmos.FromEnv(lookup, cosmos.Config{Dimensions: dims, CreateIfNotExists: true, Logger: logger})
	switch {
	case err == nil:
		st, err := cosmos.Open(ctx, cfg)
		if err != nil {
			return nil, "", err
		}
		db := cfg.Database
		if db == "" {
			db = cosmos.DefaultDatabase
		}
		return st, fmt.Sprintf("Azure Cosmos DB %s, database %s", cfg.Endpoint, db), nil
	case !errors.Is(err, cosmos.ErrNotConfigured):
		return nil, "", fmt.Errorf("store configuration: %w", err)
	}
	st, err := sqlite.Open(ctx, sqlitePath, sqlite.Config{Dimensions: dims, Logger: logger})
	if err != nil {
		return nil, "", err
	}
	return st, "SQLite file " + sqlitePath, nil
}

// MinDeletionLogKeyBytes is the shortest AGENTMEMORY_DELETION_LOG_KEY
// accepted: 32 bytes, the size of the HMAC-SHA-256 output it keys.
const MinDeletionLogKeyBytes = 32

// DeletionLogKey returns the secret AGENTMEMORY_DELETION_LOG_KEY gives the
// deletion log (provider.Config.DeletionLogKey), or nil when it is unset
// or empty. A key shorter than MinDeletionLogKeyBytes is an error.
func DeletionLogKey(lookup func(string) (string, bool)) ([]byte, error) {
	v, _ := lookup("AGENTMEMORY_DELETION_LOG_KEY")
	if v == "" {
		return nil, nil
	}
	if len(v) < MinDeletionLogKeyBytes {
		return nil, fmt.Errorf("AGENTMEMORY_DELETION_LOG_KEY is %d bytes; at least %d are needed (for example, 64 random hex digits)", len(v), MinDeletionLogKeyBytes)
	}
	return []byte(v), nil
}

// Logger returns the text logger a command writes to w (its standard
// error): at info level, or at debug level when debug is set.
func Logger(w io.Writer, debug bool) *slog.Logger {
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
