package cosmos

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
	"github.com/agentmemory/agentmemory/internal/longtest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/storetest"
)

// TestLargeUser: the default (exact) search returns exactly the top K by
// cosine similarity, for a user past 1,000 vectors in the long mode (the
// test server scans exactly at any size; TestConformanceLive runs it
// against the service).
func TestLargeUser(t *testing.T) {
	cosmostest.Endpoint(t)
	storetest.RunLargeUser(t, func(t *testing.T) store.Store { return openLauncher(t, nil) }, longtest.Pick(t, 160, storetest.LargeUserVectors))
}

// recallDimensions is the vector length of the recall fixture: a common
// small embedding size, so that an index's compression has something to
// lose.
const recallDimensions = 384

// recallFixture writes n interactions with seeded random vectors for one
// user into s and returns q query vectors drawn the same way.
func recallFixture(t *testing.T, s *Store, user string, n, q int) [][]float32 {
	t.Helper()
	rng := rand.New(rand.NewPCG(26, 3))
	vec := func() []float32 {
		v := make([]float32, recallDimensions)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	docs := make(chan *store.Interaction)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range 8 {
		wg.Go(func() {
			for d := range docs {
				if err := s.PutInteraction(t.Context(), user, d); err != nil {
					mu.Lock()
					firstErr = cmpOr(firstErr, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		docs <- &store.Interaction{ID: fmt.Sprintf("r%05d", i), SessionID: fmt.Sprintf("s%d", i%8), Timestamp: time.Unix(int64(i), 0),
			FirstTurn: 1, LastTurn: 1, Content: "note", ContentVector: vec()}
	}
	close(docs)
	wg.Wait()
	require.NoError(t, firstErr)
	queries := make([][]float32, q)
	for i := range queries {
		queries[i] = vec()
	}
	return queries
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// recallAtK is the mean, over queries (each unfiltered and filtered to one
// session), of the share of exact's top k that approx also returns.
func recallAtK(t *testing.T, exact, approx *Store, user string, queries [][]float32, k int) float64 {
	t.Helper()
	var sum float64
	var n int
	for _, q := range queries {
		for _, session := range []string{"", "s3"} {
			r := store.SearchRequest{Vector: q, VectorFields: []store.VectorField{store.FieldContentVector}, TopK: k, MinSimilarity: -1, SessionID: session}
			want, err := exact.SearchInteractions(t.Context(), user, r)
			require.NoError(t, err)
			got, err := approx.SearchInteractions(t.Context(), user, r)
			require.NoError(t, err)
			found := map[string]bool{}
			for _, h := range got {
				found[h.Doc.ID] = true
			}
			hit := 0
			for _, h := range want {
				if found[h.Doc.ID] {
					hit++
				}
			}
			sum += float64(hit) / float64(len(want))
			n++
		}
	}
	return sum / float64(n)
}

// TestVectorRecall measures recall at 10 of VectorSearchIndex against the
// exact scan, for each index type and with VectorDistance's options, on
// one user (past 1,000 vectors in the long mode). The test server computes
// every VectorDistance exactly (it has no vector index), so here the
// figure is 1 by construction: the test checks the measurement, and that
// the options reach the engine. TestVectorRecallLive measures the
// service's own figure.
func TestVectorRecall(t *testing.T) {
	cosmostest.Endpoint(t)
	runRecall(t, func(t *testing.T, mod func(*Config)) *Store {
		return openLauncher(t, func(c *Config) { c.Dimensions = recallDimensions; mod(c) })
	}, longtest.Pick(t, 160, storetest.LargeUserVectors), 1)
}

// TestVectorRecallLive measures the service's recall at 10 with each index
// type against its own exact scan, on a real account (AZURE_COSMOS_ENDPOINT),
// for a user past 1,000 vectors, and fails below 0.8.
func TestVectorRecallLive(t *testing.T) {
	endpoint := liveEndpoint(t, "measure the service's vector recall")
	runRecall(t, func(t *testing.T, mod func(*Config)) *Store {
		return openLive(t, endpoint, func(c *Config) { c.Dimensions = recallDimensions; mod(c) })
	}, storetest.LargeUserVectors, 0.8)
}

// runRecall, for each index type, provisions a database with it through
// open (an exact store), writes n vectors for one user, then opens a
// VectorSearchIndex store on the same database for each set of options,
// and checks that its recall at 10 against the exact store is at least
// floor, logging it.
func runRecall(t *testing.T, open func(*testing.T, func(*Config)) *Store, n int, floor float64) {
	const (
		user = "alice"
		k    = 10
	)
	for _, c := range []struct {
		idx  VectorIndexType
		opts map[string]func(*Config)
	}{
		{QuantizedFlat, map[string]func(*Config){
			"default":                          func(*Config) {},
			"quantizedVectorListMultiplier=20": func(c *Config) { c.QuantizedVectorListMultiplier = 20 },
		}},
		{DiskANN, map[string]func(*Config){
			"default": func(*Config) {},
			"searchListSizeMultiplier=20,filterPriority=0.5": func(c *Config) { c.SearchListSizeMultiplier = 20; c.FilterPriority = new(0.5) },
		}},
	} {
		t.Run(string(c.idx), func(t *testing.T) {
			exact := open(t, func(cfg *Config) { cfg.VectorIndex = c.idx })
			queries := recallFixture(t, exact, user, n, 5)
			for _, name := range slices.Sorted(maps.Keys(c.opts)) {
				cfg := exact.cfg
				cfg.CreateIfNotExists, cfg.VectorSearch = false, VectorSearchIndex
				c.opts[name](&cfg)
				approx, err := Open(t.Context(), cfg)
				require.NoError(t, err)
				recall := recallAtK(t, exact, approx, user, queries, k)
				approx.Close()
				t.Logf("%s %s: recall@%d %.3f against the exact scan (%d vectors of %d dimensions, %d queries, unfiltered and filtered to one session)",
					c.idx, name, k, recall, n, recallDimensions, len(queries))
				assert.GreaterOrEqual(t, recall, floor, "%s %s", c.idx, name)
			}
		})
	}
}
