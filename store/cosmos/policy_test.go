package cosmos

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// containerJSON is the part of a container definition the tests check, as
// the service's REST API spells it.
type containerJSON struct {
	ID           string `json:"id"`
	PartitionKey struct {
		Paths   []string `json:"paths"`
		Kind    string   `json:"kind"`
		Version int      `json:"version"`
	} `json:"partitionKey"`
	IndexingPolicy struct {
		Automatic     bool   `json:"automatic"`
		IndexingMode  string `json:"indexingMode"`
		IncludedPaths []struct {
			Path string `json:"path"`
		} `json:"includedPaths"`
		ExcludedPaths []struct {
			Path string `json:"path"`
		} `json:"excludedPaths"`
		VectorIndexes []struct {
			Path string `json:"path"`
			Type string `json:"type"`
		} `json:"vectorIndexes"`
		FullTextIndexes []struct {
			Path string `json:"path"`
		} `json:"fullTextIndexes"`
		CompositeIndexes [][]struct {
			Path  string `json:"path"`
			Order string `json:"order"`
		} `json:"compositeIndexes"`
	} `json:"indexingPolicy"`
	VectorEmbeddingPolicy struct {
		VectorEmbeddings []struct {
			Path             string `json:"path"`
			DataType         string `json:"dataType"`
			DistanceFunction string `json:"distanceFunction"`
			Dimensions       int    `json:"dimensions"`
		} `json:"vectorEmbeddings"`
	} `json:"vectorEmbeddingPolicy"`
	FullTextPolicy struct {
		DefaultLanguage string `json:"defaultLanguage"`
		FullTextPaths   []struct {
			Path     string `json:"path"`
			Language string `json:"language"`
		} `json:"fullTextPaths"`
	} `json:"fullTextPolicy"`
}

// wantContainer lists, per container, the vector and full-text paths.
var wantContainer = map[string]struct{ vectors, text []string }{
	"interactions":      {[]string{"/content_vector", "/summary_vector"}, []string{"/content", "/summary", "/metadata/mentioned_topics", "/metadata/entities"}},
	"insights":          {[]string{"/insight_vector"}, []string{"/insight_text"}},
	"session_summaries": {[]string{"/summary_vector"}, []string{"/summary", "/key_topics"}},
}

// checkContainer asserts a container definition: partition key /user_id,
// vector policy and index for each vector path, full-text policy and
// index for each text path, /* range-indexed but the vector paths and _etag.
func checkContainer(t *testing.T, c containerJSON, dims int, idx VectorIndexType) {
	t.Helper()
	want, ok := wantContainer[c.ID]
	require.True(t, ok, "unexpected container %q", c.ID)
	assert.Equal(t, []string{"/user_id"}, c.PartitionKey.Paths, c.ID)
	assert.Equal(t, "Hash", c.PartitionKey.Kind, c.ID)

	ip := c.IndexingPolicy
	assert.True(t, ip.Automatic, c.ID)
	assert.Equal(t, "consistent", strings.ToLower(ip.IndexingMode), c.ID)
	require.Len(t, ip.IncludedPaths, 1, c.ID)
	assert.Equal(t, "/*", ip.IncludedPaths[0].Path, c.ID)
	var excluded []string
	for _, p := range ip.ExcludedPaths {
		excluded = append(excluded, p.Path)
	}
	assert.Contains(t, excluded, `/"_etag"/?`, c.ID)

	var vecPaths, idxPaths []string
	for _, v := range c.VectorEmbeddingPolicy.VectorEmbeddings {
		vecPaths = append(vecPaths, v.Path)
		assert.Equal(t, "float32", v.DataType, v.Path)
		assert.Equal(t, "cosine", v.DistanceFunction, v.Path)
		assert.Equal(t, dims, v.Dimensions, v.Path)
		assert.Contains(t, excluded, v.Path+"/*", "vector path %s is out of the range index", v.Path)
	}
	for _, v := range ip.VectorIndexes {
		idxPaths = append(idxPaths, v.Path)
		assert.Equal(t, string(idx), v.Type, v.Path)
	}
	assert.Equal(t, want.vectors, vecPaths, c.ID)
	assert.Equal(t, want.vectors, idxPaths, c.ID)
	assert.Len(t, excluded, len(want.vectors)+1, "%s: only the vectors and _etag are excluded", c.ID)

	assert.Equal(t, "en-US", c.FullTextPolicy.DefaultLanguage, c.ID)
	var ftPaths, ftIdx []string
	for _, p := range c.FullTextPolicy.FullTextPaths {
		ftPaths = append(ftPaths, p.Path)
		assert.Equal(t, "en-US", p.Language, p.Path)
	}
	for _, p := range ip.FullTextIndexes {
		ftIdx = append(ftIdx, p.Path)
	}
	assert.Equal(t, want.text, ftPaths, c.ID)
	assert.Equal(t, want.text, ftIdx, c.ID)
	require.NotEmpty(t, ip.CompositeIndexes, "%s: the ordered listings need a composite index", c.ID)
	assert.Equal(t, "/id", ip.CompositeIndexes[0][len(ip.CompositeIndexes[0])-1].Path, c.ID)
}

// TestProvisionRequests records what CreateIfNotExists sends: the
// database, then each container's definition with its autoscale
// throughput; and that existing resources (409) are fine.
func TestProvisionRequests(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r recorded) bool {
		if r.Method == http.MethodPost && strings.HasSuffix(r.Path, "/colls") && strings.Contains(string(r.Body), `"insights"`) {
			writeError(w, http.StatusConflict, "Conflict", "exists")
			return true
		}
		return false
	})
	f.open(t, func(c *Config) {
		c.CreateIfNotExists, c.Dimensions, c.VectorIndex, c.AutoscaleMaxRU = true, 8, DiskANN, 4000
		c.Database = "memdb"
	})
	reqs := f.requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, "/dbs", reqs[0].Path)
	assert.JSONEq(t, `{"id":"memdb"}`, string(reqs[0].Body))
	assert.Empty(t, reqs[0].Header.Get("x-ms-offer-throughput"), "no database throughput")
	seen := map[string]bool{}
	for _, r := range reqs[1:] {
		assert.Equal(t, "/dbs/memdb/colls", r.Path)
		var c containerJSON
		require.NoError(t, json.Unmarshal(r.Body, &c))
		checkContainer(t, c, 8, DiskANN)
		assert.JSONEq(t, `{"maxThroughput":4000}`, r.Header.Get("x-ms-cosmos-offer-autopilot-settings"), "autoscale max RU")
		seen[c.ID] = true
	}
	assert.Len(t, seen, 3)

	// Serverless: no throughput header at all.
	f.reset()
	f.open(t, func(c *Config) { c.CreateIfNotExists, c.Dimensions = true, 8 })
	for _, r := range f.requests()[1:] {
		var c containerJSON
		require.NoError(t, json.Unmarshal(r.Body, &c))
		checkContainer(t, c, 8, QuantizedFlat)
		assert.Empty(t, r.Header.Get("x-ms-cosmos-offer-autopilot-settings"))
		assert.Empty(t, r.Header.Get("x-ms-offer-throughput"))
	}
}

func TestContainerPropertiesPerKind(t *testing.T) {
	for _, kind := range store.Kinds {
		b, err := json.Marshal(ContainerProperties(kind, string(kind), 1536, QuantizedFlat))
		require.NoError(t, err)
		var c containerJSON
		require.NoError(t, json.Unmarshal(b, &c))
		checkContainer(t, c, 1536, QuantizedFlat)
	}
}
