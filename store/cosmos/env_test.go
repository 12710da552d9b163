package cosmos

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestFromEnv(t *testing.T) {
	_, err := FromEnv(envOf(nil), Config{})
	assert.True(t, errors.Is(err, ErrNotConfigured))

	cfg, err := FromEnv(envOf(map[string]string{
		"AZURE_COSMOS_ENDPOINT": "https://acct.documents.azure.com:443/", "AZURE_COSMOS_KEY": "k",
		"AZURE_COSMOS_DATABASE": "mem", "AZURE_COSMOS_AUTOSCALE_MAX_RU": "4000", "AZURE_COSMOS_VECTOR_INDEX": "diskann",
		"AZURE_COSMOS_VECTOR_SEARCH": "Index",
	}), Config{Dimensions: 384})
	require.NoError(t, err)
	assert.Equal(t, Config{Endpoint: "https://acct.documents.azure.com:443/", Key: "k", Database: "mem", AutoscaleMaxRU: 4000, VectorIndex: DiskANN,
		VectorSearch: VectorSearchIndex, Dimensions: 384}, cfg)

	for name, env := range map[string]map[string]string{
		"AZURE_COSMOS_AUTOSCALE_MAX_RU": {"AZURE_COSMOS_ENDPOINT": "https://x", "AZURE_COSMOS_AUTOSCALE_MAX_RU": "lots"},
		"AZURE_COSMOS_VECTOR_INDEX":     {"AZURE_COSMOS_ENDPOINT": "https://x", "AZURE_COSMOS_VECTOR_INDEX": "flat"},
		"AZURE_COSMOS_VECTOR_SEARCH":    {"AZURE_COSMOS_ENDPOINT": "https://x", "AZURE_COSMOS_VECTOR_SEARCH": "approximate"},
	} {
		_, err := FromEnv(envOf(env), Config{})
		assert.ErrorContains(t, err, name)
	}
}
