package cosmos

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

// Defaults applied for zero Config fields.
const (
	DefaultDatabase          = "financial_advisor_memory"
	DefaultInteractions      = "interactions"
	DefaultInsights          = "insights"
	DefaultSessions          = "session_summaries"
	DefaultMaxTextCandidates = 2000
	DefaultDeleteConcurrency = 8
	// DefaultMaxRetries is the retry count used when
	// ClientOptions.Retry.MaxRetries is zero: throttling (429) in
	// serverless bursts commonly needs more than azcore's 3 retries.
	DefaultMaxRetries = 9
)

const (
	defaultFullTextLanguage = "en-US"
	partitionKeyPath        = "/user_id"
	// legDepth is the minimum number of candidates each vector leg
	// contributes to fusion, as in store/sqlite: fusion is exact whenever
	// no leg has more candidates than max(TopK, legDepth).
	legDepth                 = 100
	maxQueryWords            = 64
	autoscaleMinimumMaxRU    = 1000
	defaultQueryPageSizeHint = 1000
)

// VectorIndexType is the vector index provisioned for the vector paths.
type VectorIndexType string

// Vector index types. QuantizedFlat suits up to some tens of thousands of
// vectors per partition; DiskANN scales further (approximate search).
const (
	QuantizedFlat VectorIndexType = "quantizedFlat"
	DiskANN       VectorIndexType = "diskANN"
	Flat          VectorIndexType = "flat"
)

// FullTextMode selected how the full-text leg found its candidates.
//
// Deprecated: the full-text leg always finds its candidates with
// ARRAY_CONTAINS over the search_terms array the store writes into every
// document (see the package doc); Config.FullText is ignored.
type FullTextMode string

// Full-text modes, all ignored.
const (
	// Deprecated: ignored, as is every FullTextMode.
	FullTextAuto FullTextMode = ""
	// Deprecated: ignored: the service's FullTextContainsAny drops
	// stopwords and does not search arrays, so it missed candidates.
	FullTextNative FullTextMode = "native"
	// Deprecated: ignored: this is what the store always does.
	FullTextGo FullTextMode = "go"
)

// Config configures a Store. Endpoint is required; every other zero field
// has a documented default.
type Config struct {
	// Endpoint is the account URL, e.g. https://myaccount.documents.azure.com:443/.
	Endpoint string
	// Key is the account key. When empty, Credential is used.
	Key string
	// Credential authenticates with Entra ID; nil (and no Key) means
	// azidentity.NewDefaultAzureCredential.
	Credential azcore.TokenCredential
	// Database is the database name; empty means DefaultDatabase.
	Database string
	// Interactions, Insights and Sessions are the container names; empty
	// means DefaultInteractions, DefaultInsights and DefaultSessions.
	Interactions, Insights, Sessions string
	// Dimensions is the vector length the store holds: every vector
	// written or searched must have it. It is required with
	// CreateIfNotExists (the vector embedding policy needs it); zero
	// otherwise accepts any length.
	Dimensions int
	// CreateIfNotExists provisions the database and the three containers
	// (partition key /user_id, vector embedding and full-text policies,
	// indexing policy) when they do not exist. Existing ones are used as
	// they are.
	CreateIfNotExists bool
	// VectorIndex is the vector index type provisioned; empty means
	// QuantizedFlat.
	VectorIndex VectorIndexType
	// AutoscaleMaxRU, when non-zero, provisions each container with
	// autoscale throughput up to that many RU/s (at least 1000). Zero
	// sends no throughput: the serverless default.
	AutoscaleMaxRU int32
	// FullText is ignored.
	//
	// Deprecated: candidates always come from search_terms.
	FullText FullTextMode
	// MaxTextCandidates caps the documents whose text the full-text leg
	// reads and scores per search; zero means DefaultMaxTextCandidates.
	// When more documents match, the leg reads the best of them (see the
	// package doc), listing at most ten times the cap to choose.
	MaxTextCandidates int
	// VectorSearch is VectorSearchExact (the default: the user's vectors
	// scanned exactly, the contract's similarities) or VectorSearchIndex
	// (the vector index: approximate, cheaper for users with many
	// vectors). See the package doc, # Vector search.
	VectorSearch VectorSearchMode
	// SearchListSizeMultiplier (diskANN), QuantizedVectorListMultiplier
	// (quantizedFlat) and FilterPriority (diskANN: the weight of the WHERE
	// filters against the vector search) are VectorDistance's documented
	// options, sent with VectorSearchIndex only. A larger list multiplier
	// (1 to 100; the service's defaults are 10 and 5) may raise recall at
	// a higher charge and latency. Zero (nil for FilterPriority) sends
	// nothing: the service's default.
	SearchListSizeMultiplier      int
	QuantizedVectorListMultiplier int
	FilterPriority                *float64
	// ClientOptions are passed to azcosmos (transport, retry options, plain
	// HTTP for an emulator, telemetry), with Retry.MaxRetries defaulting to
	// DefaultMaxRetries. Throttled requests (429) are retried by azcore's
	// retry policy, which waits for the service's x-ms-retry-after-ms; a
	// retry-after longer than Retry.MaxRetryDelay (60 s by default) fails
	// the call at once instead.
	ClientOptions *azcosmos.ClientOptions
	// Logger receives provisioning (Info) and one
	// Debug record per request with its request charge; nil discards them.
	Logger *slog.Logger
}

// Store is a store.Store on Azure Cosmos DB for NoSQL. It is safe for
// concurrent use.
type Store struct {
	client *azcosmos.Client
	db     *azcosmos.DatabaseClient
	conts  map[store.Kind]*azcosmos.ContainerClient
	names  map[store.Kind]string
	v      driver.Validator
	log    *slog.Logger
	cfg    Config

	// fullTextRefused is set by provision (before Open returns) when the
	// account refused a container's full-text policy.
	fullTextRefused bool

	stats  stats
	closed atomic.Bool
}

var _ store.Store = (*Store)(nil)

// Open connects to the account, provisions the database and containers if
// cfg.CreateIfNotExists, and returns the Store. Close it when done. An
// endpoint that refuses the connection or whose host name does not resolve
// fails at once with ErrUnreachable, naming the endpoint and the cause.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := probe(ctx, cfg.Endpoint); err != nil {
		return nil, err
	}
	log := cfg.Logger

	var opts azcosmos.ClientOptions
	if cfg.ClientOptions != nil {
		opts = *cfg.ClientOptions
	}
	if opts.Retry.MaxRetries == 0 {
		opts.Retry.MaxRetries = DefaultMaxRetries
	}
	// Partition keys outside the Basic Multilingual Plane need it (pkheader.go).
	opts.PerCallPolicies = withPartitionKeyPolicy(opts.PerCallPolicies)
	// A refused connection or an unknown host is not retried (reach.go).
	opts.PerRetryPolicies = withFailFast(opts.PerRetryPolicies, cfg.Endpoint)
	var (
		client *azcosmos.Client
		err    error
	)
	switch {
	case cfg.Key != "":
		cred, kerr := azcosmos.NewKeyCredential(cfg.Key)
		if kerr != nil {
			return nil, fmt.Errorf("cosmos: account key: %w", kerr)
		}
		client, err = azcosmos.NewClientWithKey(cfg.Endpoint, cred, &opts)
	default:
		cred := cfg.Credential
		if cred == nil {
			dac, derr := azidentity.NewDefaultAzureCredential(nil)
			if derr != nil {
				return nil, fmt.Errorf("cosmos: no Key or Credential given, and DefaultAzureCredential: %w", derr)
			}
			cred = dac
		}
		client, err = azcosmos.NewClient(cfg.Endpoint, cred, &opts)
	}
	if err != nil {
		return nil, fmt.Errorf("cosmos: client for %s: %w", cfg.Endpoint, err)
	}
	s := &Store{
		client: client,
		v:      driver.Validator{Dimensions: cfg.Dimensions},
		log:    log,
		cfg:    cfg,
		names: map[store.Kind]string{
			store.KindInteraction:    cfg.Interactions,
			store.KindInsight:        cfg.Insights,
			store.KindSessionSummary: cfg.Sessions,
		},
		conts: make(map[store.Kind]*azcosmos.ContainerClient, 3),
	}
	if s.db, err = client.NewDatabase(cfg.Database); err != nil {
		client.Close()
		return nil, fmt.Errorf("cosmos: database %q: %w", cfg.Database, err)
	}
	for kind, name := range s.names {
		c, err := s.db.NewContainer(name)
		if err != nil {
			client.Close()
			return nil, fmt.Errorf("cosmos: container %q: %w", name, err)
		}
		s.conts[kind] = c
	}
	if cfg.CreateIfNotExists {
		if err := s.provision(ctx); err != nil {
			client.Close()
			return nil, err
		}
	}
	return s, nil
}

// withDefaults returns c with every zero field that has a default set to
// it (a negative MaxTextCandidates counts as zero). The logger defaults to
// one that discards.
func (c Config) withDefaults() Config {
	c.Database = cmp.Or(c.Database, DefaultDatabase)
	c.Interactions = cmp.Or(c.Interactions, DefaultInteractions)
	c.Insights = cmp.Or(c.Insights, DefaultInsights)
	c.Sessions = cmp.Or(c.Sessions, DefaultSessions)
	c.VectorIndex = cmp.Or(c.VectorIndex, QuantizedFlat)
	c.VectorSearch = cmp.Or(c.VectorSearch, VectorSearchExact)
	if c.MaxTextCandidates <= 0 {
		c.MaxTextCandidates = DefaultMaxTextCandidates
	}
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	return c
}

// validate reports the first field of c (with its defaults) that is
// missing or out of range.
func (c Config) validate() error {
	if c.Endpoint == "" {
		return errors.New("cosmos: Config.Endpoint is empty")
	}
	switch c.VectorIndex {
	case QuantizedFlat, DiskANN, Flat:
	default:
		return fmt.Errorf("cosmos: unknown Config.VectorIndex %q (want %q, %q or %q)", c.VectorIndex, QuantizedFlat, DiskANN, Flat)
	}
	switch c.FullText {
	case FullTextAuto, FullTextNative, FullTextGo:
	default:
		return fmt.Errorf("cosmos: unknown Config.FullText %q (want %q, %q or empty for auto)", c.FullText, FullTextNative, FullTextGo)
	}
	if err := c.validateVectorSearch(); err != nil {
		return err
	}
	if c.Dimensions < 0 {
		return fmt.Errorf("cosmos: Config.Dimensions is %d", c.Dimensions)
	}
	if c.CreateIfNotExists {
		if c.Dimensions == 0 {
			return errors.New("cosmos: CreateIfNotExists needs Config.Dimensions (the vector embedding policy declares it)")
		}
		if c.Dimensions > maxDimensions(c.VectorIndex) {
			return dimensionsError(c.VectorIndex, c.Dimensions)
		}
		if c.AutoscaleMaxRU != 0 && c.AutoscaleMaxRU < autoscaleMinimumMaxRU {
			return fmt.Errorf("cosmos: Config.AutoscaleMaxRU is %d, at least %d", c.AutoscaleMaxRU, autoscaleMinimumMaxRU)
		}
	}
	return nil
}

// As sets *i to the store's azcosmos client when i is a **azcosmos.Client,
// to its database client when i is a **azcosmos.DatabaseClient, and reports
// whether it did.
func (s *Store) As(i any) bool {
	switch p := i.(type) {
	case **azcosmos.Client:
		if p == nil {
			return false
		}
		*p = s.client
		return true
	case **azcosmos.DatabaseClient:
		if p == nil {
			return false
		}
		*p = s.db
		return true
	}
	return false
}

// Close releases the client. Calls after Close fail with store.ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.client.Close()
	return nil
}

// check returns ErrClosed after Close and ErrInvalid for a bad user id.
func (s *Store) check(userID string) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	return store.CheckUserID(userID)
}

func (s *Store) container(kind store.Kind) *azcosmos.ContainerClient { return s.conts[kind] }

func pk(userID string) azcosmos.PartitionKey { return azcosmos.NewPartitionKeyString(userID) }
