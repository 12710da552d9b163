package cosmos

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
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
	// ErrFullTextSearchDisabled reports an account that refuses full-text
	// policies (capability EnableNoSQLFullTextSearch) when Config.FullText
	// is FullTextNative. In the other modes the store opens without them
	// and computes full text from search_terms.
	ErrFullTextSearchDisabled = errors.New("cosmos: the account does not have NoSQL full-text search (capability EnableNoSQLFullTextSearch)")
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

// prerequisiteError returns the error Open gives when the service refused
// to create container for reason r: the sentinel and the fix, with the
// service's message.
func (s *Store) prerequisiteError(container string, r refusal, err error) error {
	switch r {
	case refusedVectorCapability:
		return fmt.Errorf("%w, so it refused to create container %q: enable it with `%s` (or, in the Azure portal, Settings > Features > Vector Search for NoSQL API; it can take 15 minutes to apply), then open again: %w",
			ErrVectorSearchDisabled, container, enableCommand("EnableNoSQLVectorSearch"), err)
	case refusedSharedThroughput:
		return fmt.Errorf("%w, and database %q has it, so the account refused to create container %q: name a database without shared throughput (Config.Database, AZURE_COSMOS_DATABASE), which Open creates with none, so that each container has its own (serverless, or Config.AutoscaleMaxRU): %w",
			ErrSharedThroughput, s.cfg.Database, container, err)
	case refusedDimensions:
		return fmt.Errorf("%w, so the account refused to create container %q (%s; Config.VectorIndex is %s, Config.Dimensions %d): %w",
			ErrDimensionsOverLimit, container, dimensionLimits, s.cfg.VectorIndex, s.cfg.Dimensions, err)
	case refusedFullTextCapability:
		return fmt.Errorf("%w, so it refused to create container %q, and Config.FullText is %q: enable it with `%s`, or leave Config.FullText empty to compute full text from search_terms: %w",
			ErrFullTextSearchDisabled, container, FullTextNative, enableCommand("EnableNoSQLFullTextSearch"), err)
	}
	return fmt.Errorf("cosmos: create container %q: %w", container, err)
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
