package cosmos

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/storetest"
)

// TestTextLegRequests counts the queries of a text search: while the
// candidates fit under MaxTextCandidates, the statistics, the candidates
// with their text and the hits (3); past it, also the scan of the
// candidates without their text and the read of the best ones' text (5).
func TestTextLegRequests(t *testing.T) {
	ctx := t.Context()
	s := openLauncher(t, func(c *Config) { c.MaxTextCandidates = 3 })
	put := func(id, text string) {
		t.Helper()
		require.NoError(t, s.PutInsight(ctx, "alice", &store.Insight{ID: id, InsightType: store.InsightSession, InsightText: text}))
	}
	for i := range 3 {
		put(fmt.Sprint("long", i), "zebra "+strings.Repeat("grass ", 10))
	}
	search := func() ([]string, map[Op]int64) {
		t.Helper()
		before := s.Stats()
		hits, err := s.SearchInsights(ctx, "alice", store.SearchRequest{Text: "zebra", TopK: 2})
		require.NoError(t, err)
		return hitIDsOf(hits), delta(before, s.Stats())
	}
	ids, d := search()
	assert.ElementsMatch(t, []string{"long0", "long1"}, ids)
	assert.Equal(t, map[Op]int64{OpQuery: 3}, d, "statistics, candidates, hits")

	put("long3", "zebra "+strings.Repeat("grass ", 10))
	put("short", "zebra")
	ids, d = search()
	assert.Equal(t, []string{"short", "long0"}, ids, "the best candidate is read though it came last")
	assert.Equal(t, map[Op]int64{OpQuery: 5}, d, "statistics, candidates, scan, best candidates, hits")
}

// TestTextLegDepth: the text leg contributes its best max(TopK, 100)
// candidates to fusion, as the vector legs do and as store/sqlite's legs
// do. 102 insights hold "zebra", each longer than the one before, so the
// last, x, is 102nd by BM25; by similarity it is 3rd, after a and y, which
// hold no query word. With the leg cut at 100, x has 1/(60+3) and y
// 1/(60+2): y ranks above x. A text leg of every candidate would add
// 1/(60+102) to x and rank it above y.
func TestTextLegDepth(t *testing.T) {
	ctx := t.Context()
	s := openLauncher(t, nil)
	put := func(id, text string, v []float32) {
		t.Helper()
		require.NoError(t, s.PutInsight(ctx, "alice", &store.Insight{ID: id, InsightType: store.InsightSession, InsightText: text, InsightVector: v}))
	}
	for i := range 101 {
		put(fmt.Sprintf("t%03d", i), "zebra"+strings.Repeat(" grass", i), nil)
	}
	put("x", "zebra"+strings.Repeat(" grass", 101), vec8(0.6, 0.8))
	put("a", "quartz", unitVec(0))
	put("y", "lantern", vec8(0.8, 0.6))
	hits, err := s.SearchInsights(ctx, "alice", store.SearchRequest{Text: "zebra", Vector: unitVec(0), MinSimilarity: 0.5, TopK: 10})
	require.NoError(t, err)
	ids := hitIDsOf(hits)
	require.Contains(t, ids, "y")
	require.Contains(t, ids, "x")
	assert.Less(t, slices.Index(ids, "y"), slices.Index(ids, "x"), "x's text rank, 102, is past the leg's depth: %v", ids)
}

// vec8 is a vector of storetest.Dimensions starting with xs.
func vec8(xs ...float32) []float32 {
	v := make([]float32, storetest.Dimensions)
	copy(v, xs)
	return v
}
