package storetest

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// LargeUserVectors is how many interactions RunLargeUser writes for one
// user: past the 1,000 vectors from which Azure Cosmos DB's quantizedFlat
// and diskANN indexes replace an exact scan, so that a backend whose
// search is exact only while a user is small fails it.
const LargeUserVectors = 1200

// RunLargeUser checks vector search for a user with n interactions
// (seeded random vectors, eight sessions; LargeUserVectors against a real
// service): for each of a few query vectors, with and without a session
// filter, the hits are exactly the top K by cosine similarity computed
// here from the written vectors, in order, with their similarities. It is
// not part of RunConformance: it writes n documents, seconds on a
// networked backend. The store open returns must search exactly (on Azure
// Cosmos DB, the default VectorSearchExact).
func RunLargeUser(t *testing.T, open Opener, n int) {
	t.Helper()
	st := (&suite{open: open}).fresh(t)
	rng := rand.New(rand.NewPCG(26, 1000))
	randomVec := func() []float32 {
		v := make([]float32, Dimensions)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	require.GreaterOrEqual(t, n, 80, "RunLargeUser needs at least 10 interactions per session")
	docs := make([]*store.Interaction, n)
	for i := range docs {
		docs[i] = &store.Interaction{ID: fmt.Sprintf("i%04d", i), SessionID: fmt.Sprintf("s%d", i%8),
			Timestamp: at(i), FirstTurn: 1, LastTurn: 1, Content: "note", ContentVector: randomVec()}
	}
	// Eight writers: a networked backend's round trips overlap.
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	next := make(chan *store.Interaction)
	for range 8 {
		wg.Go(func() {
			for d := range next {
				if err := st.PutInteraction(ctx(t), alice, d); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("put %s: %w", d.ID, err))
					mu.Unlock()
				}
			}
		})
	}
	for _, d := range docs {
		next <- d
	}
	close(next)
	wg.Wait()
	require.Empty(t, errs)

	const k = 10
	for q := range 5 {
		query := randomVec()
		for _, session := range []string{"", "s3"} {
			type scored struct {
				id  string
				sim float64
			}
			var want []scored
			for _, d := range docs {
				if session == "" || d.SessionID == session {
					want = append(want, scored{d.ID, cosine(query, d.ContentVector)})
				}
			}
			slices.SortFunc(want, func(a, b scored) int { return cmp.Or(cmp.Compare(b.sim, a.sim), cmp.Compare(a.id, b.id)) })
			want = want[:k]
			hits, err := st.SearchInteractions(ctx(t), alice, store.SearchRequest{Vector: query, VectorFields: []store.VectorField{store.FieldContentVector},
				TopK: k, MinSimilarity: -1, SessionID: session})
			require.NoError(t, err)
			require.Len(t, hits, k, "query %d, session %q", q, session)
			for i, h := range hits {
				assert.Equal(t, want[i].id, h.Doc.ID, "query %d, session %q, rank %d", q, session, i+1)
				assert.InDelta(t, want[i].sim, h.Similarity, 1e-5, "query %d, session %q, rank %d", q, session, i+1)
			}
		}
	}
}

// cosine is the cosine similarity of a and b, computed in float64.
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}
