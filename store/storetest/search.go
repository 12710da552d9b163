package storetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// hitView is a search hit of any kind, reduced to what the tests check.
type hitView struct {
	ID                           string
	Text                         string
	Score, Similarity, TextScore float64
}

// searchKind adapts one document kind to the search tests shared by all
// kinds: a document has one searchable text, one main vector and one time.
type searchKind struct {
	name string
	put  func(t *testing.T, st store.Store, user, id, text string, v []float32, when time.Time)
	find func(t *testing.T, st store.Store, user string, q store.SearchRequest) ([]hitView, error)
}

// views turns hits into hitViews, taking each document's id and text.
func views[T any](hits []store.Hit[T], idText func(T) (string, string)) []hitView {
	out := make([]hitView, len(hits))
	for i, h := range hits {
		id, text := idText(h.Doc)
		out[i] = hitView{id, text, h.Score, h.Similarity, h.TextScore}
	}
	return out
}

var searchKinds = []searchKind{
	{
		name: "Interactions",
		put: func(t *testing.T, st store.Store, user, id, text string, v []float32, when time.Time) {
			t.Helper()
			d := interaction(id, "s1", when, text)
			d.ContentVector = v
			require.NoError(t, st.PutInteraction(ctx(t), user, d))
		},
		find: func(t *testing.T, st store.Store, user string, q store.SearchRequest) ([]hitView, error) {
			hits, err := st.SearchInteractions(ctx(t), user, q)
			return views(hits, func(d *store.Interaction) (string, string) { return d.ID, d.Content }), err
		},
	},
	{
		name: "Insights",
		put: func(t *testing.T, st store.Store, user, id, text string, v []float32, when time.Time) {
			t.Helper()
			d := insight(id, when, text)
			d.InsightVector = v
			require.NoError(t, st.PutInsight(ctx(t), user, d))
		},
		find: func(t *testing.T, st store.Store, user string, q store.SearchRequest) ([]hitView, error) {
			hits, err := st.SearchInsights(ctx(t), user, q)
			return views(hits, func(d *store.Insight) (string, string) { return d.ID, d.InsightText }), err
		},
	},
	{
		name: "Sessions",
		put: func(t *testing.T, st store.Store, user, id, text string, v []float32, when time.Time) {
			t.Helper()
			d := session(id, when, text)
			d.SummaryVector = v
			require.NoError(t, st.PutSession(ctx(t), user, d))
		},
		find: func(t *testing.T, st store.Store, user string, q store.SearchRequest) ([]hitView, error) {
			hits, err := st.SearchSessions(ctx(t), user, q)
			return views(hits, func(d *store.Session) (string, string) { return d.ID, d.Summary }), err
		},
	},
}

// The shared search corpus. With the query vector qv and MinSimilarity
// 0.3, the vector leg is a (1), b (0.8), c (0.6): d is orthogonal, the
// fillers point away and novec has no vector. For the query text
// "zebra quartz lantern" the text leg is c (all three words), d (two
// words, as short as c), b (one word in a long text); a, the fillers and
// novec contain none of the words. Vectors are not unit length, so that a
// dot product instead of a cosine shows.
var corpus = []struct {
	id, text string
	v        []float32
}{
	{"a", "quiet harbor morning", vec(2)},
	{"b", "zebra grazing by the long river bank on a dry dusty afternoon", vec(2.4, 1.8)},
	{"c", "zebra quartz lantern", vec(0.6, 0.8)},
	{"d", "zebra quartz notebook", vec(0, 0, 3)},
	{"f1", "filler note alpha", vec(-1, 0, 0, 1)},
	{"f2", "filler note bravo", vec(-1, 0, 0, 0, 1)},
	{"f3", "filler note charlie", vec(-1, 0, 0, 0, 0, 1)},
	{"f4", "filler note delta", vec(-1, 0, 0, 0, 0, 0, 1)},
	{"novec", "plain words only", nil},
}

const corpusText = "zebra quartz lantern"

var qv = vec(0.5)

// putCorpus stores the corpus for user; document i is at(i).
func putCorpus(t *testing.T, st store.Store, k searchKind, user string) {
	t.Helper()
	for i, d := range corpus {
		k.put(t, st, user, d.id, d.text, d.v, at(i))
	}
}

func viewIDs(hits []hitView) []string {
	return each(hits, func(h hitView) string { return h.ID })
}

// HitIDs returns the ids of the documents of hits, in order: for a
// backend's own tests of its search too.
func HitIDs[T *store.Interaction | *store.Insight | *store.Session](hits []store.Hit[T]) []string {
	ids := make([]string, len(hits))
	for i, h := range hits {
		switch d := any(h.Doc).(type) {
		case *store.Interaction:
			ids[i] = d.ID
		case *store.Insight:
			ids[i] = d.ID
		case *store.Session:
			ids[i] = d.ID
		}
	}
	return ids
}

func byID(hits []hitView) map[string]hitView {
	m := make(map[string]hitView, len(hits))
	for _, h := range hits {
		m[h.ID] = h
	}
	return m
}

// hostileQueries are user texts that break naive full-text query syntax
// (FTS5, Lucene, SQL). None may make a search fail. The bool says whether
// the query contains the plain word "zebra", which must then find c.
var hostileQueries = []struct {
	q     string
	zebra bool
}{
	{`"`, false}, {`""`, false}, {`"zebra`, true}, {`zebra"`, true}, {`"zebra quartz"`, true},
	{`*`, false}, {`zebra*`, true}, {`*zebra`, true}, {`**`, false},
	{`NEAR`, false}, {`NEAR(zebra quartz)`, true}, {`NEAR/2`, false}, {`zebra NEAR/3 quartz`, true},
	{`AND`, false}, {`OR`, false}, {`NOT`, false}, {`zebra AND`, true}, {`AND zebra`, true},
	{`zebra OR NOT quartz`, true}, {`zebra AND NOT`, true},
	{`(`, false}, {`)`, false}, {`(zebra`, true}, {`zebra)`, true}, {`((zebra))`, true}, {`()`, false},
	{`-`, false}, {`-zebra`, true}, {`zebra -quartz`, true}, {`--`, false},
	{`:`, false}, {`zebra:`, true}, {`content:zebra`, true}, {`insight_text:zebra`, true}, {`{zebra}`, true},
	{`^zebra`, true}, {`+zebra`, true}, {`zebra~2`, true}, {`[zebra]`, true}, {`zebra!`, true}, {`zebra?`, true},
	{`'`, false}, {`''`, false}, {`'; DROP TABLE interactions; --`, false},
	{`zebra'); DELETE FROM insights; --`, true}, {`" OR 1=1 --`, false}, {`%`, false}, {`_`, false},
	{`%zebra%`, true}, {`\`, false}, {`zebra\`, true}, {`$1`, false}, {`@p0`, false}, {`;`, false},
	{`😀`, false}, {`zebra 🦓`, true}, {`🦓zebra🦓`, true}, {`東京`, false}, {`café über`, false},
	{`ﬁnance`, false}, {"zero\u200bwidth", false}, {"\u202eevil", false},
	{" ", false}, {"\t\n", false}, {"zebra\x00quartz", false}, {"\xff\xfe", false}, {"\xffzebra", false},
	{strings.Repeat("zebra ", 1300), true}, {strings.Repeat("(", 500), false}, {strings.Repeat(`"*`, 400), false},
}

func testSearch(t *testing.T, s *suite) {
	for _, k := range searchKinds {
		t.Run(k.name, func(t *testing.T) { testSearchKind(t, s, k) })
	}
	t.Run("InteractionsTextFields", func(t *testing.T) { testInteractionTextFields(t, s) })
	t.Run("InteractionsVectorFields", func(t *testing.T) { testInteractionVectorFields(t, s) })
	t.Run("InteractionsSessionFilter", func(t *testing.T) { testInteractionSessionFilter(t, s) })
	t.Run("InsightsFilters", func(t *testing.T) { testInsightFilters(t, s) })
	t.Run("InsightsSuperseded", func(t *testing.T) { testInsightSearchSuperseded(t, s) })
	t.Run("SessionsFields", func(t *testing.T) { testSessionSearchFields(t, s) })
}

func testSearchKind(t *testing.T, s *suite, k searchKind) {
	t.Run("Vector", func(t *testing.T) {
		st := s.fresh(t)
		putCorpus(t, st, k, alice)
		hits, err := k.find(t, st, alice, store.SearchRequest{Vector: qv, MinSimilarity: 0.3, TopK: 10})
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b", "c"}, viewIDs(hits), "cosine order above the threshold")
		for i, want := range []float64{1, 0.8, 0.6} {
			assert.InDelta(t, want, hits[i].Similarity, 1e-5, hits[i].ID)
			assert.InDelta(t, hits[i].Similarity, hits[i].Score, 1e-9, "a single vector leg scores by similarity")
			assert.Zero(t, hits[i].TextScore, "no text leg")
			assert.Equal(t, corpus[i].text, hits[i].Text, "the hit carries its own document")
		}

		hits, err = k.find(t, st, alice, store.SearchRequest{Vector: qv, MinSimilarity: 0.7, TopK: 10})
		require.NoError(t, err)
		assert.Equal(t, []string{"a", "b"}, viewIDs(hits), "MinSimilarity drops c")

		hits, err = k.find(t, st, alice, store.SearchRequest{Vector: qv, MinSimilarity: 0.3, TopK: 2})
		require.NoError(t, err)
		assert.Equal(t, []string{"a", "b"}, viewIDs(hits), "TopK")

		hits, err = k.find(t, st, alice, store.SearchRequest{Vector: qv, MinSimilarity: -1, TopK: 50})
		require.NoError(t, err)
		require.Len(t, hits, 8, "every document with a vector, none without")
		assert.Equal(t, []string{"a", "b", "c", "d"}, viewIDs(hits[:4]))
		assert.NotContains(t, viewIDs(hits), "novec")
		assert.InDelta(t, -0.70710678, hits[7].Similarity, 1e-5)

		hits, err = k.find(t, st, alice, store.SearchRequest{Vector: qv, TopK: 50})
		require.NoError(t, err)
		ids := viewIDs(hits)
		require.GreaterOrEqual(t, len(ids), 3)
		assert.Equal(t, []string{"a", "b", "c"}, ids[:3])
		for _, f := range []string{"f1", "f2", "f3", "f4"} {
			assert.NotContains(t, ids, f, "the zero MinSimilarity drops negative similarities")
		}

		hits, err = k.find(t, st, alice, store.SearchRequest{Vector: qv, MinSimilarity: -1})
		require.NoError(t, err)
		assert.Len(t, hits, store.DefaultTopK, "TopK zero means DefaultTopK")

		hits, err = k.find(t, st, alice, store.SearchRequest{Vector: vec(0, 0, 0, 0, 0, 0, 0, 1), MinSimilarity: 0.5})
		require.NoError(t, err)
		assert.Empty(t, hits, "nothing is similar enough")
	})
	t.Run("Text", func(t *testing.T) {
		st := s.fresh(t)
		putCorpus(t, st, k, alice)
		hits, err := k.find(t, st, alice, store.SearchRequest{Text: corpusText, TopK: 10})
		require.NoError(t, err)
		require.Equal(t, []string{"c", "d", "b"}, viewIDs(hits), "more query words rank higher; documents without any are not hits")
		for i, h := range hits {
			assert.Greater(t, h.TextScore, 0.0, h.ID)
			assert.InDelta(t, h.TextScore, h.Score, 1e-9, "a single text leg scores by BM25")
			assert.Zero(t, h.Similarity, "no vector leg")
			if i > 0 {
				assert.Greater(t, hits[i-1].TextScore, h.TextScore, "strictly decreasing scores")
			}
		}
		assert.Equal(t, "zebra quartz lantern", hits[0].Text)

		hits, err = k.find(t, st, alice, store.SearchRequest{Text: "LANTERN Quartz", TopK: 10})
		require.NoError(t, err)
		assert.Equal(t, []string{"c", "d"}, viewIDs(hits), "case-insensitive")

		hits, err = k.find(t, st, alice, store.SearchRequest{Text: "zebra", TopK: 2})
		require.NoError(t, err)
		assert.Len(t, hits, 2, "TopK")

		hits, err = k.find(t, st, alice, store.SearchRequest{Text: "note"})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"f1", "f2", "f3", "f4"}, viewIDs(hits), "whole words: notebook is not note")

		hits, err = k.find(t, st, alice, store.SearchRequest{Text: "walrus"})
		require.NoError(t, err)
		assert.Empty(t, hits)

		hits, err = k.find(t, st, alice, store.SearchRequest{Text: "plain"})
		require.NoError(t, err)
		assert.Equal(t, []string{"novec"}, viewIDs(hits), "a document without vectors is found by text")
	})
	t.Run("TextBM25", func(t *testing.T) {
		st := s.fresh(t)
		// Same term frequency, different lengths: the shorter ranks first.
		k.put(t, st, alice, "long", "walrus resting on the cold northern shore line near the drifting ice", nil, at(0))
		k.put(t, st, alice, "short", "walrus resting", nil, at(1))
		// Same length, different term frequency: the higher ranks first.
		k.put(t, st, alice, "tf2", "seal seal pup", nil, at(2))
		k.put(t, st, alice, "tf1", "seal pup pup", nil, at(3))
		for i := range 6 {
			k.put(t, st, alice, fmt.Sprintf("other%d", i), "unrelated words here", nil, at(4+i))
		}
		hits, err := k.find(t, st, alice, store.SearchRequest{Text: "walrus"})
		require.NoError(t, err)
		assert.Equal(t, []string{"short", "long"}, viewIDs(hits), "length normalisation")
		hits, err = k.find(t, st, alice, store.SearchRequest{Text: "seal"})
		require.NoError(t, err)
		assert.Equal(t, []string{"tf2", "tf1"}, viewIDs(hits), "term frequency")
		// A rare word weighs more than a common one.
		k.put(t, st, alice, "c1", "apple banana", nil, at(10))
		k.put(t, st, alice, "c2", "apple cherry", nil, at(11))
		k.put(t, st, alice, "c3", "apple grape", nil, at(12))
		k.put(t, st, alice, "c4", "kiwi melon", nil, at(13))
		hits, err = k.find(t, st, alice, store.SearchRequest{Text: "apple kiwi"})
		require.NoError(t, err)
		require.Len(t, hits, 4)
		assert.Equal(t, "c4", hits[0].ID, "inverse document frequency")
		assert.ElementsMatch(t, []string{"c1", "c2", "c3"}, viewIDs(hits[1:]))
	})
	t.Run("HybridRRF", func(t *testing.T) {
		st := s.fresh(t)
		putCorpus(t, st, k, alice)
		// Vector leg (MinSimilarity 0.3): a 1st, b 2nd, c 3rd.
		// Text leg:                        c 1st, d 2nd, b 3rd.
		// RRF with k = 60:
		//   c = 1/(60+3) + 1/(60+1) = 0.015873 + 0.016393 = 0.032266
		//   b = 1/(60+2) + 1/(60+3) = 0.016129 + 0.015873 = 0.032002
		//   a = 1/(60+1)            = 0.016393
		//   d = 1/(60+2)            = 0.016129
		// Fused: c, b, a, d; neither leg alone gives that order.
		q := store.SearchRequest{Text: corpusText, Vector: qv, MinSimilarity: 0.3, TopK: 10}
		hits, err := k.find(t, st, alice, q)
		require.NoError(t, err)
		require.Equal(t, []string{"c", "b", "a", "d"}, viewIDs(hits))
		assert.InDelta(t, 1.0/63+1.0/61, hits[0].Score, 1e-9)
		assert.InDelta(t, 1.0/62+1.0/63, hits[1].Score, 1e-9)
		assert.InDelta(t, 1.0/61, hits[2].Score, 1e-9)
		assert.InDelta(t, 1.0/62, hits[3].Score, 1e-9)

		m := byID(hits)
		assert.InDelta(t, 0.6, m["c"].Similarity, 1e-5)
		assert.InDelta(t, 0.8, m["b"].Similarity, 1e-5)
		assert.InDelta(t, 1.0, m["a"].Similarity, 1e-5)
		assert.Zero(t, m["d"].Similarity, "d came from full text alone")
		assert.Zero(t, m["a"].TextScore, "a came from the vector leg alone")
		assert.Greater(t, m["c"].TextScore, m["d"].TextScore)
		assert.Greater(t, m["d"].TextScore, m["b"].TextScore)
		assert.Greater(t, m["b"].TextScore, 0.0)

		q.TopK = 2
		hits, err = k.find(t, st, alice, q)
		require.NoError(t, err)
		assert.Equal(t, []string{"c", "b"}, viewIDs(hits), "TopK applies after fusion")

		// With no text match the vector leg alone decides, by similarity.
		hits, err = k.find(t, st, alice, store.SearchRequest{Text: "walrus", Vector: qv, MinSimilarity: 0.3})
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b", "c"}, viewIDs(hits))
		assert.InDelta(t, 1.0, hits[0].Score, 1e-5)
	})
	t.Run("TimeRange", func(t *testing.T) {
		st := s.fresh(t)
		putCorpus(t, st, k, alice)
		hits, err := k.find(t, st, alice, store.SearchRequest{Text: "zebra", Since: at(1), Until: at(3)})
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"b", "c"}, viewIDs(hits), "d at Until is excluded")
		hits, err = k.find(t, st, alice, store.SearchRequest{Vector: qv, MinSimilarity: 0.3, Since: at(1)})
		require.NoError(t, err)
		assert.Equal(t, []string{"b", "c"}, viewIDs(hits))
		hits, err = k.find(t, st, alice, store.SearchRequest{Vector: qv, MinSimilarity: 0.3, Until: at(1)})
		require.NoError(t, err)
		assert.Equal(t, []string{"a"}, viewIDs(hits))
		hits, err = k.find(t, st, alice, store.SearchRequest{Text: corpusText, Vector: qv, MinSimilarity: 0.3, Since: at(2), Until: at(4)})
		require.NoError(t, err)
		// Vector leg: c. Text leg: c, d. c = 1/61 + 1/61, d = 1/62.
		assert.Equal(t, []string{"c", "d"}, viewIDs(hits))
		// The filter applies before TopK: a and b would otherwise win.
		hits, err = k.find(t, st, alice, store.SearchRequest{Vector: qv, MinSimilarity: 0.3, TopK: 1, Since: at(2)})
		require.NoError(t, err)
		assert.Equal(t, []string{"c"}, viewIDs(hits))
	})
	t.Run("HostileText", func(t *testing.T) {
		st := s.fresh(t)
		putCorpus(t, st, k, alice)
		for _, h := range hostileQueries {
			hits, err := k.find(t, st, alice, store.SearchRequest{Text: h.q, TopK: 10})
			if !assert.NoError(t, err, "query %q", h.q) {
				continue
			}
			if h.zebra {
				assert.Contains(t, viewIDs(hits), "c", "query %q contains the word zebra", h.q)
			}
			hits, err = k.find(t, st, alice, store.SearchRequest{Text: h.q, Vector: qv, MinSimilarity: 0.3, TopK: 10})
			if assert.NoError(t, err, "hybrid query %q", h.q) {
				assert.Contains(t, viewIDs(hits), "a", "query %q: the vector leg still counts", h.q)
			}
		}
		// Nothing was dropped or altered by a query.
		hits, err := k.find(t, st, alice, store.SearchRequest{Vector: qv, MinSimilarity: -1, TopK: 50})
		require.NoError(t, err)
		assert.Len(t, hits, 8)
	})
	t.Run("Unicode", func(t *testing.T) {
		st := s.fresh(t)
		k.put(t, st, alice, "u1", "Rendez-vous à Zürich avec Ålesund 🎉", nil, at(0))
		k.put(t, st, alice, "u2", "meeting in Berlin", nil, at(1))
		hits, err := k.find(t, st, alice, store.SearchRequest{Text: "ZÜRICH"})
		require.NoError(t, err)
		assert.Equal(t, []string{"u1"}, viewIDs(hits), "unicode words fold case")
		hits, err = k.find(t, st, alice, store.SearchRequest{Text: "🎉 berlin"})
		require.NoError(t, err)
		assert.Equal(t, []string{"u2"}, viewIDs(hits))
	})
}

func testInteractionTextFields(t *testing.T, s *suite) {
	st := s.fresh(t)
	p := interaction("p", "s1", at(0), "user: alpha")
	p.Summary = "bravo"
	p.Metadata = store.Metadata{MentionedTopics: []string{"charlie"}, Entities: []string{"Delta Corp"}}
	require.NoError(t, st.PutInteraction(ctx(t), alice, p))
	require.NoError(t, st.PutInteraction(ctx(t), alice, interaction("q", "s1", at(1), "user: echo")))
	for _, word := range []string{"alpha", "bravo", "charlie", "delta", "corp"} {
		hits, err := st.SearchInteractions(ctx(t), alice, store.SearchRequest{Text: word})
		require.NoError(t, err, word)
		assert.Equal(t, []string{"p"}, HitIDs(hits), "a word only in one field finds the document: %s", word)
	}
	hits, err := st.SearchInteractions(ctx(t), alice, store.SearchRequest{Text: "echo"})
	require.NoError(t, err)
	assert.Equal(t, []string{"q"}, HitIDs(hits))
	// Updated metadata is searchable: the retry that completes it.
	q := interaction("q", "s1", at(1), "user: echo")
	q.Metadata.Entities = []string{"Foxtrot"}
	require.NoError(t, st.PutInteraction(ctx(t), alice, q))
	hits, err = st.SearchInteractions(ctx(t), alice, store.SearchRequest{Text: "foxtrot"})
	require.NoError(t, err)
	assert.Equal(t, []string{"q"}, HitIDs(hits))
}

func testInteractionVectorFields(t *testing.T, s *suite) {
	st := s.fresh(t)
	x := interaction("x", "s1", at(0), "x")
	x.ContentVector, x.SummaryVector = unit(0), unit(1)
	y := interaction("y", "s1", at(1), "y")
	y.ContentVector, y.SummaryVector = unit(1), unit(0)
	z := interaction("z", "s1", at(2), "z")
	z.ContentVector = vec(0.8, 0.6) // no summary vector
	for _, d := range []*store.Interaction{x, y, z} {
		require.NoError(t, st.PutInteraction(ctx(t), alice, d))
	}
	q := store.SearchRequest{Vector: unit(0), MinSimilarity: 0.5, VectorFields: []store.VectorField{store.FieldContentVector}}
	hits, err := st.SearchInteractions(ctx(t), alice, q)
	require.NoError(t, err)
	assert.Equal(t, []string{"x", "z"}, HitIDs(hits), "content_vector leg")

	q.VectorFields = []store.VectorField{store.FieldSummaryVector}
	hits, err = st.SearchInteractions(ctx(t), alice, q)
	require.NoError(t, err)
	require.Equal(t, []string{"y"}, HitIDs(hits), "summary_vector leg")
	assert.InDelta(t, 1.0, hits[0].Similarity, 1e-5)

	// Both legs (the default): x is 1st in content, y 1st in summary, z
	// 2nd in content. x = y = 1/61 tie, broken by id; z = 1/62.
	q.VectorFields = nil
	hits, err = st.SearchInteractions(ctx(t), alice, q)
	require.NoError(t, err)
	require.Equal(t, []string{"x", "y", "z"}, HitIDs(hits))
	assert.InDelta(t, 1.0/61, hits[0].Score, 1e-9)
	assert.InDelta(t, 1.0/62, hits[2].Score, 1e-9)
	assert.InDelta(t, 1.0, hits[0].Similarity, 1e-5, "the best similarity over the legs")
	assert.InDelta(t, 1.0, hits[1].Similarity, 1e-5)
	assert.InDelta(t, 0.8, hits[2].Similarity, 1e-5)
}

func testInteractionSessionFilter(t *testing.T, s *suite) {
	st := s.fresh(t)
	a := interaction("a", "s1", at(0), "zebra zebra zebra")
	a.ContentVector = unit(0)
	b := interaction("b", "s2", at(1), "zebra and other words")
	b.ContentVector = vec(0.8, 0.6)
	require.NoError(t, st.PutInteraction(ctx(t), alice, a))
	require.NoError(t, st.PutInteraction(ctx(t), alice, b))
	for _, q := range []store.SearchRequest{
		{Text: "zebra", TopK: 1, SessionID: "s2"},
		{Vector: unit(0), TopK: 1, SessionID: "s2"},
		{Text: "zebra", Vector: unit(0), TopK: 1, SessionID: "s2"},
	} {
		hits, err := st.SearchInteractions(ctx(t), alice, q)
		require.NoError(t, err)
		assert.Equal(t, []string{"b"}, HitIDs(hits), "the session filter applies before TopK")
	}
	hits, err := st.SearchInteractions(ctx(t), alice, store.SearchRequest{Text: "zebra", SessionID: "s3"})
	require.NoError(t, err)
	assert.Empty(t, hits)
}

func testInsightFilters(t *testing.T, s *suite) {
	st := s.fresh(t)
	x1 := insight("x1", at(0), "zebra zebra risk")
	x1.Category, x1.SessionIDs, x1.InsightVector = "risk_profile", []string{"s1"}, unit(0)
	x2 := insight("x2", at(1), "zebra preference")
	x2.Category, x2.SessionIDs, x2.InsightVector = "preference", []string{"s2", "s3"}, vec(0.8, 0.6)
	lt := insight(store.LongTermID(alice), at(2), "zebra profile")
	lt.InsightType, lt.InsightVector = store.InsightLongTerm, vec(0.6, 0.8)
	for _, d := range []*store.Insight{x1, x2, lt} {
		require.NoError(t, st.PutInsight(ctx(t), alice, d))
	}
	cases := []struct {
		name string
		q    store.SearchRequest
		want []string
	}{
		{"long-term type", store.SearchRequest{Text: "zebra", InsightType: store.InsightLongTerm}, []string{lt.ID}},
		{"session type", store.SearchRequest{Vector: unit(0), InsightType: store.InsightSession}, []string{"x1", "x2"}},
		{"category", store.SearchRequest{Vector: unit(0), TopK: 1, Category: "preference"}, []string{"x2"}},
		{"category and text", store.SearchRequest{Text: "zebra", Category: "risk_profile"}, []string{"x1"}},
		{"session in session_ids", store.SearchRequest{Vector: unit(0), TopK: 1, SessionID: "s3"}, []string{"x2"}},
		{"session, hybrid", store.SearchRequest{Text: "zebra", Vector: unit(0), SessionID: "s1"}, []string{"x1"}},
		{"unknown category", store.SearchRequest{Text: "zebra", Category: "concern"}, []string{}},
		{"time", store.SearchRequest{Vector: unit(0), Since: at(1)}, []string{"x2", lt.ID}},
	}
	for _, c := range cases {
		hits, err := st.SearchInsights(ctx(t), alice, c.q)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, HitIDs(hits), c.name)
	}
}

func testInsightSearchSuperseded(t *testing.T, s *suite) {
	st := s.fresh(t)
	best := insight("best", at(0), "zebra zebra quartz")
	best.InsightVector = unit(0)
	other := insight("other", at(1), "zebra and more")
	other.InsightVector = vec(0.8, 0.6)
	forgot := insight("forgot", at(2), "quartz zebra")
	forgot.InsightVector = vec(0.9, 0.1)
	for _, d := range []*store.Insight{best, other, forgot} {
		require.NoError(t, st.PutInsight(ctx(t), alice, d))
	}
	require.NoError(t, st.SupersedeInsight(ctx(t), alice, "best", store.Supersession{By: "other", Reason: store.ReasonContradict}))
	require.NoError(t, st.SupersedeInsight(ctx(t), alice, "forgot", store.Supersession{Reason: store.ReasonForgotten}))
	for _, q := range []store.SearchRequest{
		{Text: "zebra quartz"},
		{Vector: unit(0), MinSimilarity: -1},
		{Text: "zebra quartz", Vector: unit(0)},
		{Text: "quartz"},
	} {
		hits, err := st.SearchInsights(ctx(t), alice, q)
		require.NoError(t, err)
		ids := HitIDs(hits)
		assert.NotContains(t, ids, "best", "superseded insights are never searched")
		assert.NotContains(t, ids, "forgot", "superseded insights are never searched")
		if q.Text != "quartz" {
			assert.Equal(t, []string{"other"}, ids)
		} else {
			assert.Empty(t, ids)
		}
	}
}

func testSessionSearchFields(t *testing.T, s *suite) {
	st := s.fresh(t)
	s1 := session("s1", at(0), "talked about retirement")
	s1.KeyTopics = []string{"kilo", "lima"}
	s1.SummaryVector = unit(0)
	s2 := session("s2", at(1), "talked about kilo briefly")
	s2.SummaryVector = vec(0.8, 0.6)
	require.NoError(t, st.PutSession(ctx(t), alice, s1))
	require.NoError(t, st.PutSession(ctx(t), alice, s2))
	hits, err := st.SearchSessions(ctx(t), alice, store.SearchRequest{Text: "lima"})
	require.NoError(t, err)
	assert.Equal(t, []string{"s1"}, HitIDs(hits), "key topics are searchable")
	hits, err = st.SearchSessions(ctx(t), alice, store.SearchRequest{Text: "kilo"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"s1", "s2"}, HitIDs(hits))
	hits, err = st.SearchSessions(ctx(t), alice, store.SearchRequest{Vector: unit(0), TopK: 1, SessionID: "s2"})
	require.NoError(t, err)
	assert.Equal(t, []string{"s2"}, HitIDs(hits), "the session filter is the id, applied before TopK")
	require.NotEmpty(t, hits)
	assert.NotEmpty(t, hits[0].Doc.ETag, "a session hit carries its ETag")
}
