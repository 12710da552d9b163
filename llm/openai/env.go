package openai

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// Default model names for OpenAI, used by FromEnv when OPENAI_BASE_URL is
// not set.
const (
	DefaultChatModel      = "gpt-4.1"
	DefaultMiniModel      = "gpt-4.1-mini"
	DefaultEmbeddingModel = "text-embedding-3-small"
)

// ErrNotConfigured reports that none of the environment variables FromEnv
// reads is set. The caller decides what to do instead (say so, then use an
// offline client, say); this package never falls back silently.
var ErrNotConfigured = errors.New("llm/openai: no model configured: set OPENAI_API_KEY, OPENAI_BASE_URL or AZURE_OPENAI_ENDPOINT")

// envVars are every variable FromEnv reads.
var envVars = []string{
	"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_CHAT_MODEL", "OPENAI_MINI_MODEL",
	"OPENAI_EMBEDDING_MODEL", "OPENAI_EMBEDDING_DIMENSIONS",
	"AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_API_VERSION",
	"AZURE_OPENAI_CHAT_DEPLOYMENT", "AZURE_OPENAI_CHAT_MINI_DEPLOYMENT", "AZURE_OPENAI_EMBEDDING_DEPLOYMENT",
}

// Clients are the clients FromEnv builds.
type Clients struct {
	// Chat is the main chat model; Mini the cheaper one for background work
	// (the same model as Chat unless configured).
	Chat, Mini *Chat
	// Embedder embeds texts.
	Embedder *Embedder
	// Config is the configuration Chat and Embedder were built from; Mini's
	// differs only in ChatModel. It holds the API key: do not log it.
	Config Config
	// MiniModel is Mini's model (Azure: deployment) name.
	MiniModel string
}

// String describes the clients without secrets, e.g. for a startup log
// line: "azure https://x.openai.azure.com chat=gpt-4.1 mini=gpt-4.1-mini
// embedding=text-embedding-3-small (1536 dimensions)".
func (c *Clients) String() string {
	return fmt.Sprintf("%s %s chat=%s mini=%s embedding=%s (%d dimensions)",
		c.Config.Service(), c.Config.Endpoint(), c.Chat.Model(), c.MiniModel, c.Embedder.Model(), c.Embedder.Dimensions())
}

// FromEnv builds the chat, mini chat and embedding clients from the
// environment variables listed in the package documentation, read through
// lookup (os.LookupEnv when nil; tests pass a map's lookup). Empty values
// count as unset. base supplies what the environment does not: HTTPClient,
// retries, timeouts, Azure.Credential; its server and model fields are
// overwritten.
//
// It returns ErrNotConfigured when none of the variables is set, and an
// error naming the variable when the ones set are incomplete or invalid:
// one error naming every required variable that is missing.
func FromEnv(lookup func(string) (string, bool), base Config) (*Clients, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	get := func(k string) string {
		v, _ := lookup(k)
		return strings.TrimSpace(v)
	}
	var set []string
	for _, k := range envVars {
		if get(k) != "" {
			set = append(set, k)
		}
	}
	if len(set) == 0 {
		return nil, ErrNotConfigured
	}

	cfg := base
	cfg.APIKey, cfg.BaseURL = "", ""
	cfg.Azure.Endpoint, cfg.Azure.APIKey, cfg.Azure.APIVersion = "", "", ""
	if v := get("OPENAI_EMBEDDING_DIMENSIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%w: OPENAI_EMBEDDING_DIMENSIONS=%q: want a positive integer", ErrConfig, v)
		}
		cfg.EmbeddingDimensions = n
	}

	var mini string
	// missing gathers every required variable that is not set (and a bad
	// OPENAI_BASE_URL), so that one message names them all.
	var missing []string
	need := func(v, name, why string) {
		if v == "" {
			missing = append(missing, name+" is required "+why)
		}
	}
	switch {
	case get("AZURE_OPENAI_ENDPOINT") != "":
		cfg.Azure.Endpoint = get("AZURE_OPENAI_ENDPOINT")
		cfg.Azure.APIKey = get("AZURE_OPENAI_API_KEY")
		cfg.Azure.APIVersion = get("AZURE_OPENAI_API_VERSION")
		cfg.ChatModel = get("AZURE_OPENAI_CHAT_DEPLOYMENT")
		cfg.EmbeddingModel = get("AZURE_OPENAI_EMBEDDING_DEPLOYMENT")
		mini = get("AZURE_OPENAI_CHAT_MINI_DEPLOYMENT")
		need(cfg.ChatModel, "AZURE_OPENAI_CHAT_DEPLOYMENT", "with AZURE_OPENAI_ENDPOINT")
		need(cfg.EmbeddingModel, "AZURE_OPENAI_EMBEDDING_DEPLOYMENT", "with AZURE_OPENAI_ENDPOINT")
	case get("OPENAI_API_KEY") != "" || get("OPENAI_BASE_URL") != "":
		cfg.APIKey = get("OPENAI_API_KEY")
		cfg.BaseURL = get("OPENAI_BASE_URL")
		cfg.ChatModel = get("OPENAI_CHAT_MODEL")
		cfg.EmbeddingModel = get("OPENAI_EMBEDDING_MODEL")
		mini = get("OPENAI_MINI_MODEL")
		if cfg.BaseURL == "" {
			cfg.ChatModel = orDefault(cfg.ChatModel, DefaultChatModel)
			cfg.EmbeddingModel = orDefault(cfg.EmbeddingModel, DefaultEmbeddingModel)
			mini = orDefault(mini, DefaultMiniModel)
		} else {
			if err := checkURL("OPENAI_BASE_URL", cfg.BaseURL); err != nil {
				missing = append(missing, strings.TrimPrefix(err.Error(), ErrConfig.Error()+": "))
			}
			// Another server's model names cannot be guessed.
			need(cfg.ChatModel, "OPENAI_CHAT_MODEL", "with OPENAI_BASE_URL")
			need(cfg.EmbeddingModel, "OPENAI_EMBEDDING_MODEL", "with OPENAI_BASE_URL")
		}
	default:
		azure := slices.ContainsFunc(set, func(k string) bool { return strings.HasPrefix(k, "AZURE_") })
		if azure {
			return nil, fmt.Errorf("%w: %s set without AZURE_OPENAI_ENDPOINT", ErrConfig, strings.Join(set, ", "))
		}
		return nil, fmt.Errorf("%w: %s set without OPENAI_API_KEY or OPENAI_BASE_URL", ErrConfig, strings.Join(set, ", "))
	}
	if _, _, err := cfg.embeddingDimensions(); err != nil {
		model := "the embedding model"
		if cfg.EmbeddingModel != "" {
			model = fmt.Sprintf("embedding model %q", cfg.EmbeddingModel)
		}
		missing = append(missing, "OPENAI_EMBEDDING_DIMENSIONS is required: the vector length of "+model+" is not known")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrConfig, strings.Join(missing, "; "))
	}
	if cfg.Azure.Endpoint != "" {
		switch {
		case cfg.Azure.APIKey != "":
			cfg.Azure.Credential = nil
		case cfg.Azure.Credential == nil:
			// One credential for the three clients, so they share its token cache.
			cred, err := azidentity.NewDefaultAzureCredential(nil)
			if err != nil {
				return nil, fmt.Errorf("llm/openai: AZURE_OPENAI_API_KEY is not set and DefaultAzureCredential failed: %w", err)
			}
			cfg.Azure.Credential = cred
		}
	}
	mini = orDefault(mini, cfg.ChatModel)

	chat, err := NewChat(cfg)
	if err != nil {
		return nil, err
	}
	miniCfg := cfg
	miniCfg.ChatModel = mini
	miniChat, err := NewChat(miniCfg)
	if err != nil {
		return nil, err
	}
	emb, err := NewEmbedder(cfg)
	if err != nil {
		return nil, err
	}
	return &Clients{Chat: chat, Mini: miniChat, Embedder: emb, Config: cfg, MiniModel: mini}, nil
}

// orDefault returns v, or def when v is empty.
func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
