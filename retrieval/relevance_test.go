package retrieval_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed"
	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/affine"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// relevanceFixture is a small memory: interactions and insights, two of
// them reachable only through their vectors (misspelt words that share
// character trigrams with the queries, but no word).
var relevanceFixture = []string{
	"user: We booked the Lisbonn trip for the spring, three nights in Alfama.\nassistant: Enjoy it.",
	"user: My Acme 401k rolls over into a Roth IRA in March.\nassistant: Noted.",
	"user: I adopted a puppy called Max; he chews every shoe.\nassistant: Congratulations!",
	"user: The quarterly tax payment is due on April 15.\nassistant: I will remind you.",
	"user: I run 5k every Saturday with my sister.\nassistant: Great habit.",
	"user: Our roof needs repairs before winter; quotes are around $9,000.\nassistant: Let's budget it.",
	"user: I switched my savings to a high-yield account at 4.1%.\nassistant: Good move.",
	"user: My daughter starts university in September, tuition is $12,000.\nassistant: Plan for it.",
}

var relevanceInsights = []string{
	"Plans a spring trip to Lisbon.",
	"Holds a 401k from Acme to roll into a Roth IRA.",
	"Owns a dog named Max.",
	"Saves in a high-yeild account.",
}

var relevanceQueries = []string{
	"When do we fly to Lisbon?",
	"What happens to my 401k rollover?",
	"Tell me about the puppy",
	"tax payment deadline",
	"high yield savings rate",
	"Lisbonn Alfama",
}

// openRelevance stores the fixture embedded by emb in a new SQLite file and
// returns a retriever on it.
func openRelevance(t *testing.T, emb embed.Embedder, cfg retrieval.Config) *retrieval.Retriever {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlitetest.NewFile(t), sqlite.Config{Dimensions: emb.Dimensions()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	vec := func(text string) []float32 {
		v, err := embed.One(ctx, emb, text)
		require.NoError(t, err)
		return v
	}
	for i, c := range relevanceFixture {
		s := fmt.Sprintf("s%d", i)
		require.NoError(t, st.PutInteraction(ctx, "u", &store.Interaction{ID: store.InteractionID(s, 1, 2), SessionID: s,
			Timestamp: docDate, FirstTurn: 1, LastTurn: 2, TurnIDs: []string{s + "-1", s + "-2"}, Content: c, ContentVector: vec(c)}))
	}
	for i, text := range relevanceInsights {
		require.NoError(t, st.PutInsight(ctx, "u", &store.Insight{ID: fmt.Sprintf("ins-%d", i), InsightType: store.InsightSession,
			InsightText: text, InsightVector: vec(text), CreatedAt: docDate, SessionIDs: []string{fmt.Sprintf("s%d", i)}}))
	}
	cfg.Embedder = emb
	r, err := retrieval.New(st, cfg)
	require.NoError(t, err)
	return r
}

// results runs every fixture query, over every kind (fused by rank) and
// over interactions alone (ranked by score), and returns each search's
// memories as "kind/id score" in order, the score to 4 decimals.
func results(t *testing.T, r *retrieval.Retriever) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, q := range relevanceQueries {
		for _, o := range []retrieval.SearchOptions{{TopK: 4}, {TopK: 8, Kinds: []store.Kind{store.KindInteraction}}} {
			ms, err := r.Search(context.Background(), "u", q, o)
			require.NoError(t, err)
			for _, m := range ms {
				out[q] = append(out[q], fmt.Sprintf("%s/%s %.4f", m.Kind, m.ID, m.Score))
			}
		}
	}
	return out
}

// The embedder's cosines mapped into 0.15–0.5 or 0.7–0.95 (text-embedding-3
// and ada-002 territory) change nothing retrieval returns: relevance is
// relative to each query's own similarities.
func TestRelevanceDoesNotDependOnTheCosinesScale(t *testing.T) {
	lex, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	byFloor := map[float64]map[string][]string{}
	for _, floor := range []float64{0, 0.15, 0.7} {
		emb, err := affine.New(lex, floor)
		require.NoError(t, err)
		byFloor[floor] = results(t, openRelevance(t, emb, retrieval.Config{}))
	}
	assert.Equal(t, byFloor[0], byFloor[0.15], "cosines in 0.15-0.5")
	assert.Equal(t, byFloor[0], byFloor[0.7], "cosines in 0.7-0.95")

	// The vector leg runs: the misspelt trip ("Lisbonn") shares no word with
	// "Lisbon" but is found through its vector, at every scale.
	trip := string(store.KindInteraction) + "/" + store.InteractionID("s0", 1, 2)
	assert.True(t, holds(byFloor[0]["When do we fly to Lisbon?"], trip))
	assert.True(t, holds(byFloor[0]["high yield savings rate"], string(store.KindInsight)+"/ins-3"), "the misspelt insight, through its vector")

	// The plain lexical embedder has no vector leg (embed.IsLexical): the
	// misspelt trip is not found.
	plain := results(t, openRelevance(t, lex, retrieval.Config{}))
	assert.False(t, holds(plain["When do we fly to Lisbon?"], trip))

	// An absolute cosine threshold is what the scale breaks: 0.75 passes
	// nearly every vector of the compressed embedder and almost none of the
	// shifted one.
	abs := map[float64]map[string][]string{}
	for _, floor := range []float64{0.15, 0.7} {
		emb, err := affine.New(lex, floor)
		require.NoError(t, err)
		abs[floor] = results(t, openRelevance(t, emb, retrieval.Config{MinSimilarity: 0.75}))
	}
	assert.NotEqual(t, abs[0.15], abs[0.7])
}

// holds reports whether one of the results is of the document key.
func holds(results []string, key string) bool {
	for _, r := range results {
		if strings.HasPrefix(r, key+" ") {
			return true
		}
	}
	return false
}
