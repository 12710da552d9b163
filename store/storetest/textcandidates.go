package storetest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// TextCandidateFixture is the number of documents of the candidate-cap
// case of RunTextCandidates, all matching its query: a backend that bounds
// the full-text candidates it reads per search runs RunTextCandidates with
// its bound below this, so that the case shows which ones it keeps.
const TextCandidateFixture = 30

// RunTextCandidates runs the full-text candidate cases of the suite alone
// (RunConformance runs them too): whatever a backend's own text engine
// makes of a document, a document holding a query word is a full-text
// candidate —
//
//   - through a word only in a list field (an interaction's mentioned
//     topics or entities, a session's key topics);
//   - through a word that search engines often drop as a stopword ("it",
//     "the", "to");
//   - and, where the backend bounds the candidates it reads, the best
//     ones are kept: the best of TextCandidateFixture matching documents
//     is found although it was written last and is the oldest.
func RunTextCandidates(t *testing.T, open Opener) {
	t.Helper()
	testTextCandidates(t, &suite{open: open})
}

func testTextCandidates(t *testing.T, s *suite) {
	t.Run("ListFieldOnly", func(t *testing.T) { testListFieldOnly(t, s) })
	for _, k := range searchKinds {
		t.Run("Stopwords/"+k.name, func(t *testing.T) { testStopwordQueries(t, s, k) })
		t.Run("BestKept/"+k.name, func(t *testing.T) { testBestCandidateKept(t, s, k) })
	}
}

// testListFieldOnly: a word held only in a list field finds its document,
// alone, among documents holding it in their text, and in a hybrid search.
func testListFieldOnly(t *testing.T, s *suite) {
	st := s.fresh(t)
	listed := interaction("listed", "s1", at(0), "user: we talked for a while")
	listed.Metadata = store.Metadata{MentionedTopics: []string{"kayaking"}, Entities: []string{"Harbor Bank"}}
	listed.ContentVector = unit(1)
	texted := interaction("texted", "s1", at(1), "user: kayaking trip next week")
	texted.ContentVector = unit(0)
	require.NoError(t, st.PutInteraction(ctx(t), alice, listed))
	require.NoError(t, st.PutInteraction(ctx(t), alice, texted))
	for _, q := range []struct{ text, want string }{
		{"harbor", "listed"}, {"bank", "listed"}, {"Harbor Bank", "listed"},
	} {
		hits, err := st.SearchInteractions(ctx(t), alice, store.SearchRequest{Text: q.text})
		require.NoError(t, err, q.text)
		assert.Equal(t, []string{q.want}, HitIDs(hits), "an entity alone finds its interaction: %q", q.text)
	}
	hits, err := st.SearchInteractions(ctx(t), alice, store.SearchRequest{Text: "kayaking"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"listed", "texted"}, HitIDs(hits), "a mentioned topic counts as the content does")
	// Hybrid: the vector leg prefers texted; listed still has its text score.
	hits, err = st.SearchInteractions(ctx(t), alice, store.SearchRequest{Text: "harbor", Vector: unit(0), MinSimilarity: 0.5})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"listed", "texted"}, HitIDs(hits))
	for _, h := range hits {
		if h.Doc.ID == "listed" {
			assert.Greater(t, h.TextScore, 0.0, "listed is a text hit")
		}
	}

	sess := session("topics", at(2), "a short call")
	sess.KeyTopics = []string{"mortgage refinancing"}
	require.NoError(t, st.PutSession(ctx(t), alice, sess))
	require.NoError(t, st.PutSession(ctx(t), alice, session("other", at(3), "talked about the mortgage")))
	sh, err := st.SearchSessions(ctx(t), alice, store.SearchRequest{Text: "refinancing"})
	require.NoError(t, err)
	assert.Equal(t, []string{"topics"}, HitIDs(sh), "a key topic alone finds its session")
	sh, err = st.SearchSessions(ctx(t), alice, store.SearchRequest{Text: "mortgage"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"topics", "other"}, HitIDs(sh))
}

// testStopwordQueries: words a search engine drops as stopwords are words
// like any other here.
func testStopwordQueries(t *testing.T, s *suite, k searchKind) {
	st := s.fresh(t)
	k.put(t, st, alice, "w1", "it was what it was", nil, at(0))
	k.put(t, st, alice, "w2", "zebra lantern", nil, at(1))
	k.put(t, st, alice, "w3", "to be or not to be", nil, at(2))
	for _, q := range []struct {
		text string
		want []string
	}{
		{"it", []string{"w1"}},
		{"IT WAS", []string{"w1"}},
		{"to be", []string{"w3"}},
		{"the zebra", []string{"w2"}},
	} {
		hits, err := k.find(t, st, alice, store.SearchRequest{Text: q.text})
		require.NoError(t, err, q.text)
		assert.Equal(t, q.want, viewIDs(hits), "query %q", q.text)
		for _, h := range hits {
			assert.Greater(t, h.TextScore, 0.0, "query %q: %s", q.text, h.ID)
		}
	}
	hits, err := k.find(t, st, alice, store.SearchRequest{Text: "it zebra"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"w1", "w2"}, viewIDs(hits), "a stopword and another word: either finds")
}

// testBestCandidateKept: TextCandidateFixture documents match "zebra";
// the best by BM25 ("zebra zebra quartz": short, the word twice, the only
// one with "quartz") is written last, with the oldest time, so that a
// backend reading a bounded number of candidates in storage or time order
// would leave it out.
func testBestCandidateKept(t *testing.T, s *suite, k searchKind) {
	st := s.fresh(t)
	for i := range TextCandidateFixture - 1 {
		k.put(t, st, alice, fmt.Sprintf("f%02d", i), "zebra grazing by the long river bank on a dry dusty afternoon", nil, at(i+1))
	}
	k.put(t, st, alice, "best", "zebra zebra quartz", nil, at(0))
	for _, q := range []string{"zebra", "quartz zebra", "lantern zebra"} {
		hits, err := k.find(t, st, alice, store.SearchRequest{Text: q, TopK: 3})
		require.NoError(t, err, q)
		require.NotEmpty(t, hits, q)
		assert.Equal(t, "best", hits[0].ID, "query %q: the best candidate is kept", q)
		for i := 1; i < len(hits); i++ {
			assert.Greater(t, hits[0].TextScore, hits[i].TextScore, "query %q", q)
		}
	}
}
