package retrieval_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/embed/lexical"
	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/retrieval"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// putChunks stores the chunks of one session as the keeper does: two turns
// each, ids from store.ChunkID.
func putChunks(t *testing.T, st store.Store, user, session string, chunks ...string) []string {
	t.Helper()
	var ids []string
	for i, c := range chunks {
		first := 2*i + 1
		id := store.ChunkID(session, first)
		require.NoError(t, st.PutInteraction(context.Background(), user, &store.Interaction{ID: id, SessionID: session, Timestamp: docDate.Add(time.Duration(i) * time.Minute),
			FirstTurn: first, LastTurn: first + 1, TurnIDs: []string{fmt.Sprintf("%s-%d", session, first), fmt.Sprintf("%s-%d", session, first+1)}, Content: c}))
		ids = append(ids, id)
	}
	return ids
}

// A question's words often meet the chunk where a subject comes up while
// the answer is told in the next one, in other words: the chunk that
// continues a top result's session is returned after it.
func TestSearchReturnsTheChunkThatContinuesATopResult(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlitetest.NewFile(t), sqlite.Config{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	trip := putChunks(t, st, "u",
		"trip",
		"user: We finally booked the Lisbon trip for the spring.\nassistant: How exciting, where will you stay?",
		"user: Three nights in a small guesthouse in Alfama, near the castle.\nassistant: Lovely neighbourhood.",
		"user: Also, the roof repairs start next week.\nassistant: Noted.",
	)
	putChunks(t, st, "u", "other",
		"user: My sister went on a trip to Porto last year.\nassistant: Nice.",
		"user: I paid the quarterly taxes today.\nassistant: Good.",
	)
	// Another user's session with the same session id and chunk ids must
	// never be read.
	putChunks(t, st, "v", "trip",
		"user: Lisbon trip booked, spring.\nassistant: Nice.",
		"user: We stay at the Hotel Avenida, secret reservation 4411.\nassistant: Noted.",
	)
	emb, err := lexical.New(lexical.Config{})
	require.NoError(t, err)
	r, err := retrieval.New(st, retrieval.Config{Embedder: emb})
	require.NoError(t, err)

	ms, err := r.Search(ctx, "u", "Where will we stay on the Lisbon trip?", retrieval.SearchOptions{TopK: 3, Kinds: []store.Kind{store.KindInteraction}})
	require.NoError(t, err)
	var got []string
	for _, m := range ms {
		got = append(got, m.ID)
		assert.NotContains(t, m.Text, "4411", "another user's chunk")
	}
	require.NotEmpty(t, got)
	assert.Equal(t, trip[0], got[0], "the chunk holding the question's words comes first")
	assert.Contains(t, got, trip[1], "the chunk that continues it, holding the answer")
	assert.NotContains(t, got, trip[2], "only the chunk right after a top result")
	assert.Less(t, indexOf(got, trip[0]), indexOf(got, trip[1]))

	// The last chunk of a session has nothing after it; nothing fails.
	ms, err = r.Search(ctx, "u", "roof repairs", retrieval.SearchOptions{TopK: 3, Kinds: []store.Kind{store.KindInteraction}})
	require.NoError(t, err)
	require.NotEmpty(t, ms)
	assert.Equal(t, trip[2], ms[0].ID)
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}
