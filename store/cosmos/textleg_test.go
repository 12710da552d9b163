package cosmos

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
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
