package openai

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
)

// Defaults used for zero Config fields.
const (
	// DefaultBaseURL is the OpenAI API.
	DefaultBaseURL = "https://api.openai.com/v1"
	// DefaultAzureAPIVersion is the Azure OpenAI data-plane API version used
	// when AzureConfig.APIVersion is empty: the GA version that supports
	// structured outputs and max_completion_tokens.
	DefaultAzureAPIVersion = "2024-10-21"
	// DefaultMaxRetries is the number of retries after a 408, 409, 429 or 5xx
	// answer or a connection error, when Config.MaxRetries is zero.
	DefaultMaxRetries = 3
	// DefaultOpenAIBatchSize is the most texts sent in one embeddings request
	// to OpenAI and Azure OpenAI (the API's limit is 2048).
	DefaultOpenAIBatchSize = 2048
	// DefaultCompatibleBatchSize is the most texts sent in one embeddings
	// request to an OpenAI-compatible server: the default client batch limit
	// of Hugging Face TEI.
	DefaultCompatibleBatchSize = 32
	// DefaultAzureScope is the Entra ID scope requested for Azure OpenAI.
	DefaultAzureScope = "https://cognitiveservices.azure.com/.default"
)

// Service names the kind of server a Config talks to.
type Service string

// The services a Config can select.
const (
	ServiceOpenAI     Service = "openai"     // api.openai.com
	ServiceAzure      Service = "azure"      // Azure OpenAI
	ServiceCompatible Service = "compatible" // any other OpenAI-compatible server
)

// TokenLimit names the request field that carries ChatRequest.MaxTokens.
type TokenLimit string

// The token-limit fields. OpenAI deprecated max_tokens in favour of
// max_completion_tokens, and its reasoning models (o-series, gpt-5) reject
// max_tokens; Azure OpenAI accepts max_completion_tokens from API version
// 2024-09-01-preview on. Ollama, llama.cpp server and older vLLM releases
// only read max_tokens. Hence the default: max_completion_tokens for OpenAI
// and Azure, max_tokens for any other base URL.
const (
	TokenLimitAuto      TokenLimit = ""
	MaxCompletionTokens TokenLimit = "max_completion_tokens"
	MaxTokens           TokenLimit = "max_tokens"
)

// Config selects and configures a server. The zero value talks to OpenAI
// and only needs APIKey and a model.
//
// The server is chosen by the fields set:
//
//   - Azure.Endpoint set: Azure OpenAI. ChatModel and EmbeddingModel are
//     deployment names. Authentication is Azure.APIKey, else
//     Azure.Credential, else azidentity.NewDefaultAzureCredential.
//   - BaseURL set: an OpenAI-compatible server (Ollama, vLLM, llama.cpp
//     server, TEI, a proxy…). APIKey is optional.
//   - neither: OpenAI at DefaultBaseURL. APIKey is required.
//
// Nothing is read from the process environment here (see FromEnv); only
// DefaultAzureCredential reads its own AZURE_* variables.
type Config struct {
	// APIKey authenticates to OpenAI or an OpenAI-compatible server, as
	// "Authorization: Bearer". Use Azure.APIKey for Azure.
	APIKey string
	// BaseURL is an OpenAI-compatible server's base URL, including any /v1
	// suffix the server needs, e.g. "http://localhost:11434/v1" for Ollama.
	// Empty means OpenAI.
	BaseURL string
	// Azure selects Azure OpenAI when Azure.Endpoint is set.
	Azure AzureConfig

	// ChatModel is the model (Azure: deployment) NewChat uses.
	ChatModel string
	// EmbeddingModel is the model (Azure: deployment) NewEmbedder uses.
	EmbeddingModel string
	// EmbeddingDimensions, when positive, asks for vectors of this length
	// with the request's "dimensions" parameter (text-embedding-3 models and
	// servers supporting Matryoshka truncation). Zero omits the parameter.
	EmbeddingDimensions int
	// EmbeddingModelDimensions is the model's native vector length, used
	// when EmbeddingDimensions is zero, so the length is known without asking
	// the server to truncate. Zero means the length of a known OpenAI model
	// (text-embedding-3-small 1536, text-embedding-3-large 3072,
	// text-embedding-ada-002 1536); for any other model one of the two
	// dimension fields is required.
	EmbeddingModelDimensions int
	// EmbeddingBatchSize is the most texts sent in one embeddings request;
	// zero means DefaultOpenAIBatchSize for OpenAI and Azure and
	// DefaultCompatibleBatchSize otherwise.
	EmbeddingBatchSize int

	// TokenLimit is the request field that carries ChatRequest.MaxTokens;
	// TokenLimitAuto picks max_completion_tokens for OpenAI and Azure and
	// max_tokens for other servers.
	TokenLimit TokenLimit

	// MaxRetries is the number of retries, done by the openai-go SDK with
	// exponential backoff honouring Retry-After, after a 408, 409, 429 or 5xx
	// answer or a connection error. Zero means DefaultMaxRetries; negative
	// means none.
	MaxRetries int
	// MaxRetryDelay caps the wait before a retry; zero means the SDK default
	// (8s backoff, server-directed waits up to 2 minutes). A server asking
	// for a longer wait than this is not retried.
	MaxRetryDelay time.Duration
	// RequestTimeout bounds each attempt; zero means only ctx bounds it.
	RequestTimeout time.Duration
	// HTTPClient sends the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Logger receives the one warning a chat client logs when it learns
	// that the server refuses response_format, tools or stream_options;
	// nil means slog.Default().
	Logger *slog.Logger
}

// AzureConfig configures Azure OpenAI.
type AzureConfig struct {
	// Endpoint is the resource endpoint,
	// e.g. "https://my-resource.openai.azure.com". Setting it selects Azure.
	Endpoint string
	// APIVersion is the api-version query parameter; empty means
	// DefaultAzureAPIVersion.
	APIVersion string
	// APIKey authenticates with the api-key header. Leave empty for Entra ID.
	APIKey string
	// Credential authenticates with Entra ID bearer tokens when APIKey is
	// empty; nil means azidentity.NewDefaultAzureCredential(nil).
	Credential azcore.TokenCredential
	// Scopes are the token scopes requested; empty means DefaultAzureScope.
	Scopes []string
}

// ErrConfig reports an unusable Config; the message names the field.
var ErrConfig = errors.New("llm/openai: invalid config")

// Service reports which kind of server c selects.
func (c Config) Service() Service {
	switch {
	case c.Azure.Endpoint != "":
		return ServiceAzure
	case c.BaseURL != "":
		return ServiceCompatible
	}
	return ServiceOpenAI
}

// Endpoint returns the URL requests go to (without any secret).
func (c Config) Endpoint() string {
	switch c.Service() {
	case ServiceAzure:
		return c.Azure.Endpoint
	case ServiceCompatible:
		return c.BaseURL
	}
	return DefaultBaseURL
}

func configErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...)
}

// options validates c and returns the SDK options shared by chat and
// embeddings clients.
func (c Config) options() ([]option.RequestOption, error) {
	if c.MaxRetryDelay < 0 {
		return nil, configErr("MaxRetryDelay %v is negative", c.MaxRetryDelay)
	}
	if c.RequestTimeout < 0 {
		return nil, configErr("RequestTimeout %v is negative", c.RequestTimeout)
	}
	switch c.TokenLimit {
	case TokenLimitAuto, MaxCompletionTokens, MaxTokens:
	default:
		return nil, configErr("TokenLimit %q: want %q, %q or empty", c.TokenLimit, MaxCompletionTokens, MaxTokens)
	}

	var opts []option.RequestOption
	switch c.Service() {
	case ServiceAzure:
		if c.BaseURL != "" {
			return nil, configErr("both BaseURL and Azure.Endpoint are set; set one")
		}
		if c.APIKey != "" {
			return nil, configErr("APIKey is for OpenAI and compatible servers; set Azure.APIKey for Azure OpenAI")
		}
		if err := checkURL("Azure.Endpoint", c.Azure.Endpoint); err != nil {
			return nil, err
		}
		version := c.Azure.APIVersion
		if version == "" {
			version = DefaultAzureAPIVersion
		}
		opts = append(opts, azure.WithEndpoint(c.Azure.Endpoint, version))
		switch {
		case c.Azure.APIKey != "" && c.Azure.Credential != nil:
			return nil, configErr("both Azure.APIKey and Azure.Credential are set; set one")
		case c.Azure.APIKey != "":
			opts = append(opts, azure.WithAPIKey(c.Azure.APIKey))
		default:
			cred := c.Azure.Credential
			if cred == nil {
				dac, err := azidentity.NewDefaultAzureCredential(nil)
				if err != nil {
					return nil, fmt.Errorf("llm/openai: Azure.APIKey and Azure.Credential are empty and DefaultAzureCredential failed: %w", err)
				}
				cred = dac
			}
			scopes := c.Azure.Scopes
			if len(scopes) == 0 {
				scopes = []string{DefaultAzureScope}
			}
			opts = append(opts, azure.WithTokenCredential(cred, azure.WithTokenCredentialScopes(scopes)))
		}
	case ServiceCompatible:
		if err := checkURL("BaseURL", c.BaseURL); err != nil {
			return nil, err
		}
		opts = append(opts, option.WithBaseURL(c.BaseURL))
		if c.APIKey != "" {
			opts = append(opts, option.WithAPIKey(c.APIKey))
		}
	default:
		if c.APIKey == "" {
			return nil, configErr("APIKey is required for OpenAI (or set BaseURL for a compatible server, or Azure.Endpoint)")
		}
		opts = append(opts, option.WithBaseURL(DefaultBaseURL), option.WithAPIKey(c.APIKey))
	}

	retries := c.MaxRetries
	switch {
	case retries == 0:
		retries = DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	opts = append(opts, option.WithMaxRetries(retries))
	if c.MaxRetryDelay > 0 {
		opts = append(opts, option.WithMaxRetryDelay(c.MaxRetryDelay))
	}
	if c.RequestTimeout > 0 {
		opts = append(opts, option.WithRequestTimeout(c.RequestTimeout))
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	opts = append(opts, option.WithHTTPClient(hc))
	return opts, nil
}

func checkURL(field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return configErr("%s %q: %v", field, raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return configErr("%s %q: want an absolute http or https URL", field, raw)
	}
	return nil
}

func (c Config) tokenLimit() TokenLimit {
	if c.TokenLimit != TokenLimitAuto {
		return c.TokenLimit
	}
	if c.Service() == ServiceCompatible {
		return MaxTokens
	}
	return MaxCompletionTokens
}

// knownDimensions are the native vector lengths of OpenAI's embedding models.
var knownDimensions = map[string]int{
	"text-embedding-3-small": 1536,
	"text-embedding-3-large": 3072,
	"text-embedding-ada-002": 1536,
}

func (c Config) embeddingDimensions() (dims int, send bool, err error) {
	switch {
	case c.EmbeddingDimensions < 0:
		return 0, false, configErr("EmbeddingDimensions %d is negative", c.EmbeddingDimensions)
	case c.EmbeddingModelDimensions < 0:
		return 0, false, configErr("EmbeddingModelDimensions %d is negative", c.EmbeddingModelDimensions)
	case c.EmbeddingDimensions > 0:
		return c.EmbeddingDimensions, true, nil
	case c.EmbeddingModelDimensions > 0:
		return c.EmbeddingModelDimensions, false, nil
	}
	if d, ok := knownDimensions[strings.ToLower(c.EmbeddingModel)]; ok {
		return d, false, nil
	}
	return 0, false, configErr("EmbeddingDimensions or EmbeddingModelDimensions is required for embedding model %q (native lengths are known only for %s)",
		c.EmbeddingModel, "text-embedding-3-small, text-embedding-3-large and text-embedding-ada-002")
}
