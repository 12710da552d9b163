package cosmos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmemory/agentmemory/store"
)

// The account's prerequisites for the containers Open provisions. Open
// returns these (wrapped, naming the fix) instead of the service's bare
// 400; callers test them with errors.Is.
var (
	// ErrVectorSearchDisabled reports an account without the NoSQL vector
	// search capability (EnableNoSQLVectorSearch), which refuses a
	// container with a vector embedding policy or vector indexes.
	ErrVectorSearchDisabled = errors.New("cosmos: the account does not have NoSQL vector search (capability EnableNoSQLVectorSearch)")
	// ErrSharedThroughput reports a database with shared (database-level)
	// throughput, where vector indexes are not supported.
	ErrSharedThroughput = errors.New("cosmos: vector indexes are not supported in a database with shared throughput")
	// ErrDimensionsOverLimit reports more dimensions than the vector index
	// type supports: flat 505, quantizedFlat and diskANN 4,096.
	ErrDimensionsOverLimit = errors.New("cosmos: more dimensions than the vector index type supports")
)

// Documented maximum dimensions of each vector index type.
const (
	maxFlatDimensions    = 505
	maxIndexedDimensions = 4096
)

// maxDimensions returns the most dimensions idx supports.
func maxDimensions(idx VectorIndexType) int {
	if idx == Flat {
		return maxFlatDimensions
	}
	return maxIndexedDimensions
}

// dimensionLimits names every index type's limit, for error messages.
const dimensionLimits = "flat indexes at most 505 dimensions, quantizedFlat and diskANN 4,096"

// enableCommand returns the Azure CLI command that adds capability to an
// account.
func enableCommand(capability string) string {
	return "az cosmosdb update --resource-group <resource-group> --name <account> --capabilities " + capability
}

// refusal is what a 400 on container creation refused.
type refusal int

const (
	refusedOther refusal = iota
	refusedVectorCapability
	refusedFullTextCapability
	refusedSharedThroughput
	refusedDimensions
)

// refusalOf classifies the service's 400 on container creation by its
// message (the service's texts are in internal/cosmostest/server/
// provisioning.js, with where they come from).
func refusalOf(err error) refusal {
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest {
		return refusedOther
	}
	msg := strings.ToLower(err.Error())
	notEnabled := strings.Contains(msg, "capability") || strings.Contains(msg, "not enabled")
	switch {
	case strings.Contains(msg, "shared throughput"):
		return refusedSharedThroughput
	case notEnabled && (strings.Contains(msg, "full text") || strings.Contains(msg, "fulltext") || strings.Contains(msg, "full-text")):
		return refusedFullTextCapability
	case notEnabled && strings.Contains(msg, "vector"):
		return refusedVectorCapability
	case strings.Contains(msg, "vector") && strings.Contains(msg, "dimension"):
		return refusedDimensions
	}
	return refusedOther
}

// PrerequisiteError is Open's error when the account cannot hold the
// containers as configured: errors.Is matches its sentinel
// (ErrVectorSearchDisabled, ErrSharedThroughput, ErrDimensionsOverLimit),
// and Fix says what to do. An account refusing full-text policies is no
// error: the containers are created without them.
type PrerequisiteError struct {
	// Err is the sentinel.
	Err error
	// Prerequisite names what is missing, for a report: "vector search",
	// "throughput", "dimensions" or "full-text search".
	Prerequisite string
	// Container is the container the service refused to create; empty
	// when Open found the problem in the Config, before any request.
	Container string
	// Fix says what to do.
	Fix string
	// Cause is the service's refusal (a 400); nil when Open found the
	// problem before any request.
	Cause error
}

func (e *PrerequisiteError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	if e.Container != "" {
		fmt.Fprintf(&b, ", so the account refused to create container %q", e.Container)
	}
	b.WriteString(": ")
	b.WriteString(e.Fix)
	if e.Cause != nil {
		b.WriteString(": ")
		b.WriteString(e.Cause.Error())
	}
	return b.String()
}

// Unwrap returns the sentinel and the service's error.
func (e *PrerequisiteError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// prerequisiteError returns the error Open gives when the service refused
// to create container for reason r: a *PrerequisiteError naming the fix,
// or the service's error as it is.
func (s *Store) prerequisiteError(container string, r refusal, err error) error {
	e := &PrerequisiteError{Container: container, Cause: err}
	switch r {
	case refusedVectorCapability:
		e.Err, e.Prerequisite = ErrVectorSearchDisabled, "vector search"
		e.Fix = "enable it with `" + enableCommand("EnableNoSQLVectorSearch") +
			"` (or, in the Azure portal, Settings > Features > Vector Search for NoSQL API; it can take 15 minutes to apply), then open again"
	case refusedSharedThroughput:
		e.Err, e.Prerequisite = ErrSharedThroughput, "throughput"
		e.Fix = fmt.Sprintf("database %q has shared throughput: name a database without it (Config.Database, AZURE_COSMOS_DATABASE), which Open creates with none, so that each container has its own (serverless, or Config.AutoscaleMaxRU)", s.cfg.Database)
	case refusedDimensions:
		e.Err, e.Prerequisite = ErrDimensionsOverLimit, "dimensions"
		e.Fix = fmt.Sprintf("%s; Config.VectorIndex is %s and Config.Dimensions %d: choose an index type that fits, or an embedding model with fewer dimensions", dimensionLimits, s.cfg.VectorIndex, s.cfg.Dimensions)
	default:
		return fmt.Errorf("cosmos: create container %q: %w", container, err)
	}
	return e
}

// dimensionsError is Config validation's error for more dimensions than
// idx supports.
func dimensionsError(idx VectorIndexType, dims int) error {
	return &PrerequisiteError{Err: ErrDimensionsOverLimit, Prerequisite: "dimensions",
		Fix: fmt.Sprintf("Config.Dimensions is %d and Config.VectorIndex %s, which indexes at most %d (%s): choose an index type that fits, or an embedding model with fewer dimensions",
			dims, idx, maxDimensions(idx), dimensionLimits)}
}

// withoutFullText returns props without the full-text policy and indexes.
func withoutFullText(props azcosmos.ContainerProperties) azcosmos.ContainerProperties {
	props.FullTextPolicy = nil
	if props.IndexingPolicy != nil {
		ip := *props.IndexingPolicy
		ip.FullTextIndexes = nil
		props.IndexingPolicy = &ip
	}
	return props
}

// Prerequisite is one account setting the store relies on, as Prerequisites
// found it.
type Prerequisite struct {
	// Name is "vector search" or "full-text search".
	Name string
	// Met reports whether the containers have what the setting gives.
	Met bool
	// Detail says what was found and, when not met, what it costs and the
	// fix.
	Detail string
}

// Prerequisites reads the containers' definitions and reports the
// account's capabilities as they show there: vector search (a vector
// embedding policy and vector indexes on every container) and full-text
// search (a full-text policy; always met, as no query of the store needs
// it).
func (s *Store) Prerequisites(ctx context.Context) ([]Prerequisite, error) {
	if s.closed.Load() {
		return nil, store.ErrClosed
	}
	var noVector, noText []string
	indexes := map[string]bool{}
	for _, kind := range store.Kinds {
		resp, err := s.conts[kind].Read(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("cosmos: read container %q: %w", s.names[kind], err)
		}
		p := resp.ContainerProperties
		if p == nil || p.VectorEmbeddingPolicy == nil || len(p.VectorEmbeddingPolicy.VectorEmbeddings) == 0 ||
			p.IndexingPolicy == nil || len(p.IndexingPolicy.VectorIndexes) == 0 {
			noVector = append(noVector, s.names[kind])
		} else {
			for _, vi := range p.IndexingPolicy.VectorIndexes {
				indexes[string(vi.Type)] = true
			}
		}
		if p == nil || p.FullTextPolicy == nil || len(p.FullTextPolicy.FullTextPaths) == 0 {
			noText = append(noText, s.names[kind])
		}
	}
	vector := Prerequisite{Name: "vector search", Met: len(noVector) == 0}
	if vector.Met {
		vector.Detail = fmt.Sprintf("every container has a vector embedding policy and %s vector indexes: the account has NoSQL vector search (EnableNoSQLVectorSearch)",
			strings.Join(slices.Sorted(maps.Keys(indexes)), " and "))
	} else {
		vector.Detail = fmt.Sprintf("containers %s have no vector policy or index (created without them): every vector search scans all of a user's vectors; to index them, enable `%s` and recreate the containers",
			strings.Join(noVector, ", "), enableCommand("EnableNoSQLVectorSearch"))
	}
	text := Prerequisite{Name: "full-text search", Met: true}
	if len(noText) == 0 {
		text.Detail = "every container has a full-text policy and index; the store matches full text through search_terms and does not need them"
	} else {
		text.Detail = fmt.Sprintf("containers %s have no full-text policy (the account refused it); not needed: the store matches full text through search_terms",
			strings.Join(noText, ", "))
	}
	return []Prerequisite{vector, text}, nil
}
