package cosmos

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
	"github.com/agentmemory/agentmemory/store"
)

func TestVectorSearchDefaultsToExact(t *testing.T) {
	assert.Equal(t, VectorSearchExact, Config{}.withDefaults().VectorSearch)
	sql, _ := vectorQuery(store.KindInsight, "alice", store.SearchRequest{Vector: []float32{1}}, store.FieldInsightVector, 10, Config{}.withDefaults())
	assert.Contains(t, sql, "VectorDistance(c.insight_vector, @p3, true)", "the default is VectorDistance's brute-force scan")
}

func TestVectorSearchOptionsInQuery(t *testing.T) {
	r := store.SearchRequest{Vector: []float32{1}}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{VectorSearch: VectorSearchExact}, "VectorDistance(c.insight_vector, @p3, true)"},
		{Config{VectorSearch: VectorSearchIndex}, "VectorDistance(c.insight_vector, @p3)"},
		{Config{VectorSearch: VectorSearchIndex, SearchListSizeMultiplier: 20},
			`VectorDistance(c.insight_vector, @p3, false, {"searchListSizeMultiplier": 20})`},
		{Config{VectorSearch: VectorSearchIndex, QuantizedVectorListMultiplier: 10, FilterPriority: new(0.25)},
			`VectorDistance(c.insight_vector, @p3, false, {"quantizedVectorListMultiplier": 10, "filterPriority": 0.25})`},
		{Config{VectorSearch: VectorSearchIndex, SearchListSizeMultiplier: 100, QuantizedVectorListMultiplier: 1, FilterPriority: new(0.0)},
			`VectorDistance(c.insight_vector, @p3, false, {"searchListSizeMultiplier": 100, "quantizedVectorListMultiplier": 1, "filterPriority": 0})`},
	} {
		sql, _ := vectorQuery(store.KindInsight, "alice", r, store.FieldInsightVector, 10, c.cfg)
		assert.Equal(t, 2, strings.Count(sql, c.want), "select and order by the same distance: %s", sql)
	}
}

func TestVectorSearchConfigValidated(t *testing.T) {
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.VectorSearch = "fuzzy" }, `unknown Config.VectorSearch "fuzzy"`},
		{func(c *Config) { c.VectorSearch = VectorSearchIndex; c.SearchListSizeMultiplier = 101 }, "Config.SearchListSizeMultiplier is 101: want 1 to 100"},
		{func(c *Config) { c.VectorSearch = VectorSearchIndex; c.QuantizedVectorListMultiplier = -1 }, "Config.QuantizedVectorListMultiplier is -1: want 1 to 100"},
		{func(c *Config) { c.VectorSearch = VectorSearchIndex; c.FilterPriority = new(1.5) }, "Config.FilterPriority is 1.5: want 0 to 1"},
		{func(c *Config) { c.SearchListSizeMultiplier = 20 }, "Config.SearchListSizeMultiplier applies to VectorSearchIndex only"},
		{func(c *Config) { c.FilterPriority = new(0.5) }, "Config.FilterPriority applies to VectorSearchIndex only"},
	} {
		cfg := Config{Endpoint: "http://127.0.0.1:1", Key: cosmostest.Key}
		c.mod(&cfg)
		_, err := Open(t.Context(), cfg)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
}
