package cosmos

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ErrNotConfigured reports that AZURE_COSMOS_ENDPOINT is not set: the
// caller chooses another store (and says so); FromEnv never does.
var ErrNotConfigured = errors.New("store/cosmos: AZURE_COSMOS_ENDPOINT is not set")

// FromEnv completes base from the environment, read through lookup
// (os.LookupEnv when nil):
//
//	AZURE_COSMOS_ENDPOINT        account endpoint (required; selects Cosmos DB)
//	AZURE_COSMOS_KEY             account key; Entra ID (DefaultAzureCredential) when unset
//	AZURE_COSMOS_DATABASE        database name (default financial_advisor_memory)
//	AZURE_COSMOS_AUTOSCALE_MAX_RU autoscale throughput cap per container; serverless when unset
//	AZURE_COSMOS_VECTOR_INDEX    quantizedFlat (default) or diskANN
//	AZURE_COSMOS_VECTOR_SEARCH   exact (default) or index
//
// Dimensions and the other fields stay as base has them. It returns
// ErrNotConfigured when AZURE_COSMOS_ENDPOINT is unset or empty, and an
// error naming the variable when a value is invalid.
func FromEnv(lookup func(string) (string, bool), base Config) (Config, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	cfg := base
	if cfg.Endpoint = get("AZURE_COSMOS_ENDPOINT"); cfg.Endpoint == "" {
		return base, ErrNotConfigured
	}
	cfg.Key = get("AZURE_COSMOS_KEY")
	if db := get("AZURE_COSMOS_DATABASE"); db != "" {
		cfg.Database = db
	}
	if ru := get("AZURE_COSMOS_AUTOSCALE_MAX_RU"); ru != "" {
		n, err := strconv.ParseInt(ru, 10, 32)
		if err != nil || n < 1000 {
			return base, fmt.Errorf("store/cosmos: AZURE_COSMOS_AUTOSCALE_MAX_RU=%q: want an integer of at least 1000", ru)
		}
		cfg.AutoscaleMaxRU = int32(n)
	}
	switch idx := get("AZURE_COSMOS_VECTOR_INDEX"); strings.ToLower(idx) {
	case "":
	case strings.ToLower(string(QuantizedFlat)):
		cfg.VectorIndex = QuantizedFlat
	case strings.ToLower(string(DiskANN)):
		cfg.VectorIndex = DiskANN
	default:
		return base, fmt.Errorf("store/cosmos: AZURE_COSMOS_VECTOR_INDEX=%q: want %s or %s", idx, QuantizedFlat, DiskANN)
	}
	switch mode := get("AZURE_COSMOS_VECTOR_SEARCH"); strings.ToLower(mode) {
	case "":
	case string(VectorSearchExact):
		cfg.VectorSearch = VectorSearchExact
	case string(VectorSearchIndex):
		cfg.VectorSearch = VectorSearchIndex
	default:
		return base, fmt.Errorf("store/cosmos: AZURE_COSMOS_VECTOR_SEARCH=%q: want %s or %s", mode, VectorSearchExact, VectorSearchIndex)
	}
	return cfg, nil
}
