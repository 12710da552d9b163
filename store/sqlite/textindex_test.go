package sqlite

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmemory/agentmemory/internal/longtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

func TestTokenizerMatchesSchema(t *testing.T) {
	s, err := Open(t.Context(), newFile(t), Config{})
	require.NoError(t, err)
	defer s.Close()
	for _, kind := range store.Kinds {
		sp, _ := specOf(kind)
		var ddl string
		require.NoError(t, s.r.QueryRow(`SELECT sql FROM sqlite_schema WHERE name = ?`, sp.fts).Scan(&ddl))
		assert.Contains(t, ddl, "tokenize = '"+tokenize+"'", sp.fts)
		var cols int
		require.NoError(t, s.r.QueryRow(`SELECT count(*) FROM pragma_table_info(?)`, sp.fts).Scan(&cols))
		assert.Equal(t, cols, ftsColumnCount(kind), sp.fts)
	}
}

// textWords is the fixture's vocabulary: inflections that porter folds
// together, diacritics unicode61 folds, numbers, and plain words of
// various frequencies.
var textWords = strings.Fields(`run running runs runner ran bond bonds bonding stock stocks
café cafe naïve naive résumé 東京 2024 401k rate rates rating retire retirement retiring
alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma
tau upsilon phi chi psi omega the and of to a in is it you that`)

func textOf(rng *rand.Rand, n int) string {
	parts := make([]string, n)
	for i := range parts {
		// Skewed: low indexes are much more frequent.
		j := int(float64(len(textWords)) * rng.Float64() * rng.Float64())
		parts[i] = textWords[j]
		if rng.IntN(7) == 0 {
			parts[i] = strings.ToUpper(parts[i])
		}
	}
	return strings.Join(parts, " ")
}

// TestTextIndexMatchesFTS5 checks the in-memory text leg against the SQL
// one (FTS5's bm25()) on a fixture of several users and kinds, after
// replacements, deletions and supersessions applied to the cached index,
// and with filters: the same ids in the same order with the same scores.
// The short mode runs a third of the fixture and a fifth of the random
// queries (about 15 s under -race, against 90 s).
func TestTextIndexMatchesFTS5(t *testing.T) {
	t.Parallel()
	// n scales the fixture (n steps of writes, then n/5 of updates);
	// random is the number of random queries.
	n, random := longtest.Pick(t, 100, 300), longtest.Pick(t, 10, 50)
	ctx := t.Context()
	path := newFile(t)
	s, err := Open(ctx, path, Config{Dimensions: 2})
	require.NoError(t, err)
	defer s.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	put := func(user string, i int) {
		d := &store.Interaction{ID: fmt.Sprintf("i%04d", i), SessionID: fmt.Sprintf("s%d", i%7),
			Timestamp: t0(0).Add(time.Duration(i) * time.Minute), FirstTurn: 1, LastTurn: 1,
			Content: textOf(rng, 3+rng.IntN(40)), Metadata: store.Metadata{MentionedTopics: strings.Fields(textOf(rng, rng.IntN(3))),
				Entities: strings.Fields(textOf(rng, rng.IntN(2)))}}
		if rng.IntN(3) > 0 {
			d.Summary = textOf(rng, 1+rng.IntN(8))
		}
		if rng.IntN(2) == 0 {
			d.ContentVector = []float32{rng.Float32(), rng.Float32()}
		}
		require.NoError(t, s.PutInteraction(ctx, user, d))
	}
	putInsight := func(user string, i int) {
		d := &store.Insight{ID: fmt.Sprintf("n%04d", i), InsightType: store.InsightSession, SessionIDs: []string{fmt.Sprintf("s%d", i%5)},
			InsightText: textOf(rng, 2+rng.IntN(15)), Category: []string{"risk_profile", "concern"}[i%2], CreatedAt: t0(0).Add(time.Duration(i) * time.Minute)}
		require.NoError(t, s.PutInsight(ctx, user, d))
	}
	putSession := func(user string, i int) {
		d := &store.Session{ID: fmt.Sprintf("s%d", i), StartTime: t0(0).Add(time.Duration(i) * time.Hour),
			Status: store.SessionCompleted, Summary: textOf(rng, 3+rng.IntN(20)), KeyTopics: strings.Fields(textOf(rng, rng.IntN(4)))}
		require.NoError(t, s.PutSession(ctx, user, d))
	}
	for i := range n {
		put("alice", i)
		if i%2 == 0 {
			put("bob", i)
		}
		if i%3 == 0 {
			putInsight("alice", i)
			putInsight("bob", i)
		}
		if i%10 == 0 {
			putSession("alice", i/10)
			putSession("bob", i/10)
		}
	}

	queries := make([]string, 0, random+6)
	for range random {
		queries = append(queries, textOf(rng, 1+rng.IntN(4)))
	}
	queries = append(queries, "running RUNS ran", "cafe café CAFÉ", "walrus", "walrus bond", "2024 401k", "the")

	check := func(stage string) {
		t.Helper()
		ways := map[bool]int{}
		defer func() {
			assert.NotZero(t, ways[true], "%s: rankings that skipped the floored phrases", stage)
			assert.NotZero(t, ways[false], "%s: rankings that walked every phrase", stage)
		}()
		for _, kind := range store.Kinds {
			sp, _ := specOf(kind)
			filters := []filter{{kind: kind}, {kind: kind, since: timeKey(t0(0).Add(time.Duration(n/6) * time.Minute)), until: timeKey(t0(0).Add(time.Duration(2*n/3) * time.Minute))}}
			switch kind {
			case store.KindInteraction:
				filters = append(filters, filter{kind: kind, session: "s3"})
			case store.KindInsight:
				filters = append(filters, filter{kind: kind, session: "s2", category: "concern"}, filter{kind: kind, insightType: store.InsightLongTerm})
			case store.KindSessionSummary:
				filters = append(filters, filter{kind: kind, session: "s4"})
			}
			for _, user := range []string{"alice", "bob"} {
				err := s.read(ctx, "test", func(tx *readTx) error {
					set, release, err := s.vectorSet(ctx, tx, user, sp, true)
					require.NoError(t, err)
					defer release()
					require.NotNil(t, set.text)
					checkTextIndex(t, set.text)
					ref, drop, err := refCorpus(ctx, tx, user, sp)
					require.NoError(t, err)
					defer func() { require.NoError(t, drop()) }()
					for _, q := range queries {
						words := queryWords(q)
						for fi := range filters {
							// The reference orders by (score, id), a total
							// order, so its top k is a prefix of its top 100.
							top, err := refTextLeg(ctx, tx, user, ref, &filters[fi], matchExpr(words), 100)
							require.NoError(t, err)
							for _, k := range []int{5, 100} {
								want := top[:min(k, len(top))]
								got, err := s.textLegIndex(ctx, tx, user, set.text, sp, &filters[fi], words, k)
								require.NoError(t, err)
								require.Equal(t, want, got, "%s: %s %s %q filter %d k %d", stage, kind, user, q, fi, k)
								// Both ways of ranking are exercised.
								ph, err := s.queryPhrases(ctx, tx, user, set.text, sp, words)
								require.NoError(t, err)
								_, skipped := set.text.rank(new(scores), &filters[fi], ph, k)
								ways[skipped]++
							}
						}
					}
					return nil
				})
				require.NoError(t, err)
			}
		}
	}
	check("loaded")

	// Writes through the store update alice's and bob's cached indexes in
	// place; bob's writes change the table-wide statistics alice's scores
	// use.
	for i := range n / 5 {
		put("alice", rng.IntN(4*n/3))
		put("bob", rng.IntN(4*n/3))
		if i%4 == 0 {
			putInsight("alice", rng.IntN(n))
			putSession("alice", rng.IntN(2*n/15))
		}
	}
	for i := range n / 15 {
		err := s.DeleteDocument(ctx, "alice", store.KindInteraction, fmt.Sprintf("i%04d", i*7))
		if err != nil {
			require.ErrorIs(t, err, store.ErrNotFound)
		}
	}
	for i := 0; i < n/5; i += 6 {
		require.NoError(t, s.SupersedeInsight(ctx, "alice", fmt.Sprintf("n%04d", i), store.Supersession{Reason: store.ReasonForgotten}))
	}
	set := s.cache.get(cacheKey{"alice", store.KindInteraction})
	require.NotNil(t, set, "alice's set stayed cached")
	require.NotZero(t, set.text.dead, "updated in place, not reloaded")
	check("after writes")
}

// checkTextIndex checks an index's invariants: every posting list in slot
// order, each token's document count that of its live postings, the live
// count and total length those of the live documents, and each live
// document's token list as long as its postings.
func checkTextIndex(t *testing.T, x *textIndex) {
	t.Helper()
	live, tokens := 0, int64(0)
	require.Len(t, x.lens, len(x.docs))
	for slot, d := range x.docs {
		if d.live {
			live++
			tokens += int64(d.length)
			require.Equal(t, d.length, x.lens[slot])
		} else {
			require.EqualValues(t, -1, x.lens[slot])
		}
	}
	require.Equal(t, live, x.live)
	require.Equal(t, tokens, x.tokens)
	require.Len(t, x.pos, live)
	perDoc := make(map[uint32]int)
	for ti, post := range x.postings {
		n := 0
		for j, p := range post {
			if j > 0 {
				require.Less(t, post[j-1].slot, p.slot, "postings in slot order")
			}
			if x.docs[p.slot].live {
				n++
				perDoc[p.slot]++
			}
		}
		require.EqualValues(t, n, x.df[ti], "document count of token %d", ti)
	}
	for slot, d := range x.docs {
		if d.live {
			require.Len(t, d.terms, perDoc[uint32(slot)], "tokens of slot %d", slot)
		}
	}
}

// TestQueryWordsOfSeveralTokens checks words that FTS5 splits into a
// phrase of several tokens: their occurrences are consecutive tokens in
// one column, as FTS5 matches a phrase, and the ranking is FTS5's.
func TestQueryWordsOfSeveralTokens(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, newFile(t), Config{})
	require.NoError(t, err)
	defer s.Close()
	// U+0489 is an enclosing mark: part of a word to sanitise, a separator
	// to unicode61. So are the vowel signs and viramas of Devanagari.
	word := "x\u0489y"
	texts := map[string]string{
		"a": "x y here, and x y again",      // the phrase twice
		"b": "y x, not the phrase",          // both tokens, not in order
		"c": "x\u0489y written as one word", // the phrase
		"d": "x x y y x y",                  // twice, among near misses
		"e": "nothing of it",
		"f": "x", // one token only
		"g": "नमस्ते दुनिया",
		"h": "नमस ते",
	}
	for id, text := range texts {
		require.NoError(t, s.PutInsight(ctx, "u", &store.Insight{ID: id, InsightType: store.InsightSession, InsightText: text}))
	}
	// Another user's phrase changes nothing.
	require.NoError(t, s.PutInsight(ctx, "v", &store.Insight{ID: "a", InsightType: store.InsightSession, InsightText: "x y x y x y"}))
	// The phrase split over two columns is no occurrence.
	require.NoError(t, s.PutInteraction(ctx, "u", &store.Interaction{ID: "i1", SessionID: "s", FirstTurn: 1, LastTurn: 1,
		Content: "alpha x", Summary: "y beta"}))
	require.NoError(t, s.PutInteraction(ctx, "u", &store.Interaction{ID: "i2", SessionID: "s", FirstTurn: 2, LastTurn: 2,
		Content: "x y"}))
	err = s.read(ctx, "test", func(tx *readTx) error {
		toks, err := s.queryTokens(ctx, tx, []string{"bonds", word})
		require.NoError(t, err)
		assert.Equal(t, []string{"bond"}, toks[0])
		require.Equal(t, []string{"x", "y"}, toks[1], "the fixture needs a word of two tokens")
		for _, kind := range []store.Kind{store.KindInsight, store.KindInteraction} {
			sp, _ := specOf(kind)
			set, release, err := s.vectorSet(ctx, tx, "u", sp, true)
			require.NoError(t, err)
			defer release()
			ref, drop, err := refCorpus(ctx, tx, "u", sp)
			require.NoError(t, err)
			f := filter{kind: kind}
			for _, words := range [][]string{{word}, {word, "here"}, {"again", word, "y"}, {"नमस्ते"}, {"नमस्ते", "दुनिया", word}} {
				want, err := refTextLeg(ctx, tx, "u", ref, &f, matchExpr(words), 10)
				require.NoError(t, err)
				got, err := s.textLegIndex(ctx, tx, "u", set.text, sp, &f, words, 10)
				require.NoError(t, err)
				require.Equal(t, want, got, "%s %q", kind, words)
				if len(words) == 1 && words[0] == word {
					var ids []string
					for _, g := range got {
						ids = append(ids, g.ID)
					}
					if kind == store.KindInsight {
						assert.ElementsMatch(t, []string{"a", "c", "d"}, ids)
					} else {
						assert.Equal(t, []string{"i2"}, ids)
					}
				}
			}
			require.NoError(t, drop())
		}
		return nil
	})
	require.NoError(t, err)
}

// TestRankSkippingIsExact checks rank against a plain computation of the
// formula over every live document, on an index with a Zipf vocabulary
// (many phrases in half the documents or more, with the idf floor), after
// replacements and removals, with filters, depths from 1 to 100 and one
// scratch reused throughout; both ways of ranking must occur.
func TestRankSkippingIsExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	n, queries := longtest.Pick(t, 800, 6000), longtest.Pick(t, 60, 200)
	const vocab = 400
	zipf := rand.NewZipf(rng, 1.05, 1, vocab-1)
	word := func(i uint64) string { return fmt.Sprintf("w%03d", i) }
	doc := func() *docTerms {
		counts := map[string]uint32{}
		d := &docTerms{length: 3 + rng.IntN(60)}
		for range d.length {
			counts[word(zipf.Uint64())]++
		}
		for w, c := range counts {
			d.terms = append(d.terms, termFreq{w, c})
		}
		return d
	}
	row := func(i int) vecRow {
		return vecRow{id: fmt.Sprintf("d%05d", i), session: fmt.Sprintf("s%d", i%13), t: timeKey(t0(0).Add(time.Duration(i) * time.Minute))}
	}
	x := newTextIndex(n)
	for i := range n {
		x.put(row(i), doc())
	}
	for range n / 10 {
		x.put(row(rng.IntN(n)), doc())
		x.remove(row(rng.IntN(n)).id)
	}
	checkTextIndex(t, x)

	brute := func(f *filter, ph []phrase, k int) []driver.Scored {
		N := float64(x.live)
		avgdl := float64(x.tokens) / N
		tfs := make([]map[uint32]uint32, len(ph))
		for i, p := range ph {
			tfs[i] = map[uint32]uint32{}
			for _, q := range p.post {
				tfs[i][q.slot] = q.tf
			}
		}
		var out []driver.Scored
		for slot, d := range x.docs {
			if !d.live || !f.match(&d.row) {
				continue
			}
			var s float64
			for i, p := range ph {
				if p.df == 0 {
					continue
				}
				idf := sqliteLog((float64(x.live-p.df) + 0.5) / (float64(p.df) + 0.5))
				if idf <= 0 {
					idf = idfFloor
				}
				if tf := tfs[i][uint32(slot)]; tf > 0 {
					s = s + bm25Term(idf, tf, d.length, avgdl)
				}
			}
			if s > 0 {
				out = append(out, driver.Scored{ID: d.row.id, Score: s})
			}
		}
		slices.SortFunc(out, func(a, b driver.Scored) int {
			if c := cmp.Compare(b.Score, a.Score); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		})
		return out[:min(k, len(out))]
	}
	filters := []filter{{kind: store.KindInteraction}, {kind: store.KindInteraction, session: "s3"},
		{kind: store.KindInteraction, since: timeKey(t0(0).Add(time.Duration(n/3) * time.Minute)), until: timeKey(t0(0).Add(time.Duration(n/2) * time.Minute))}}
	sc := new(scores)
	ways := map[bool]int{}
	for qi := range queries {
		words := 1 + rng.IntN(8)
		var ph []phrase
		for range words {
			w := word(zipf.Uint64())
			if qi%3 == 0 {
				w = word(uint64(rng.IntN(vocab))) // rarer words too
			}
			if ti, ok := x.terms[w]; ok {
				ph = append(ph, phrase{post: x.postings[ti], df: int(x.df[ti])})
			} else {
				ph = append(ph, phrase{})
			}
		}
		for fi := range filters {
			for _, k := range []int{1, 5, 100} {
				got, skipped := x.rank(sc, &filters[fi], ph, k)
				ways[skipped]++
				want := brute(&filters[fi], ph, k)
				if len(want) == 0 {
					want = nil
				}
				require.Equal(t, want, got, "query %d filter %d k %d", qi, fi, k)
			}
		}
	}
	assert.NotZero(t, ways[true], "rankings that skipped the floored phrases")
	assert.NotZero(t, ways[false], "rankings that walked every phrase")
	t.Logf("skipped the floored phrases in %d rankings of %d", ways[true], ways[true]+ways[false])
}

// textHits is a text search's ids and BM25 scores.
func textHits(t *testing.T, s *Store, user, q string) []driver.Scored {
	t.Helper()
	hits, err := s.SearchInteractions(t.Context(), user, store.SearchRequest{Text: q, TopK: 20})
	require.NoError(t, err)
	return textScores(hits, func(d *store.Interaction) string { return d.ID })
}

// textScores are hits' ids and text scores, in order.
func textScores[D any](hits []store.Hit[D], id func(D) string) []driver.Scored {
	out := make([]driver.Scored, len(hits))
	for i, h := range hits {
		out[i] = driver.Scored{ID: id(h.Doc), Score: h.TextScore}
	}
	return out
}

// TestTextScoresIgnoreOtherUsers checks that BM25 statistics are the
// user's own: another user's writes and deletion change nothing in a
// user's text scores, which are those the user gets alone in a file.
func TestTextScoresIgnoreOtherUsers(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	shared, err := Open(ctx, newFile(t), Config{})
	require.NoError(t, err)
	defer shared.Close()
	alone, err := Open(ctx, newFile(t), Config{})
	require.NoError(t, err)
	defer alone.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	// Each user's documents are written in one transaction: what is
	// checked is the statistics, not how writes are grouped.
	put := func(s *Store, user string, texts []string) {
		ds := make([]*store.Interaction, len(texts))
		for i, text := range texts {
			ds[i] = &store.Interaction{ID: fmt.Sprintf("i%03d", i), SessionID: "s",
				FirstTurn: i + 1, LastTurn: i + 1, Timestamp: t0(0).Add(time.Duration(i) * time.Minute), Content: text}
		}
		require.NoError(t, s.putInteractions(ctx, user, ds))
	}
	texts := make([]string, 60)
	for i := range texts {
		texts[i] = textOf(rng, 5+rng.IntN(30))
	}
	put(shared, "alice", texts)
	put(alone, "alice", texts)
	queries := []string{"bond stocks", "retirement rate", "the run", "café 2024 alpha"}
	before := map[string][]driver.Scored{}
	for _, q := range queries {
		before[q] = textHits(t, shared, "alice", q)
		require.NotEmpty(t, before[q], q)
		require.Equal(t, textHits(t, alone, "alice", q), before[q], "%q: alice in a shared file scores as alone", q)
	}
	// Bob writes many documents full of alice's query words (more than
	// alice's 60: 80, or 200 in the long mode).
	bobs := make([]string, longtest.Pick(t, 80, 200))
	for i := range bobs {
		bobs[i] = "bond stocks retirement rate the run café 2024 alpha " + textOf(rng, 10)
	}
	put(shared, "bob", bobs)
	for _, q := range queries {
		require.Equal(t, before[q], textHits(t, shared, "alice", q), "%q after bob's writes", q)
	}
	require.NoError(t, shared.DeleteUser(ctx, "bob"))
	for _, q := range queries {
		require.Equal(t, before[q], textHits(t, shared, "alice", q), "%q after bob's deletion", q)
	}
}

// TestDeletedUserLeavesNoStatistics checks that a deleted user's BM25
// statistics go with the user: the same id written again is scored over
// its new documents only.
func TestDeletedUserLeavesNoStatistics(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, err := Open(ctx, newFile(t), Config{})
	require.NoError(t, err)
	defer s.Close()
	fresh, err := Open(ctx, newFile(t), Config{})
	require.NoError(t, err)
	defer fresh.Close()
	for i := range 30 {
		require.NoError(t, s.PutInteraction(ctx, "alice", &store.Interaction{ID: fmt.Sprintf("old%02d", i), SessionID: "s",
			FirstTurn: i + 1, LastTurn: i + 1, Content: "bond bond bond stocks and more words " + strings.Repeat("filler ", i)}))
	}
	require.NotEmpty(t, textHits(t, s, "alice", "bond")) // the user's set and statistics are cached
	require.NoError(t, s.DeleteUser(ctx, "alice"))
	for _, st := range []*Store{s, fresh} {
		for i, text := range []string{"bond rates", "stocks only", "bond and stocks"} {
			require.NoError(t, st.PutInteraction(ctx, "alice", &store.Interaction{ID: fmt.Sprintf("new%d", i), SessionID: "s",
				FirstTurn: i + 1, LastTurn: i + 1, Content: text}))
		}
	}
	for _, q := range []string{"bond", "stocks", "bond stocks rates"} {
		want := textHits(t, fresh, "alice", q)
		require.NotEmpty(t, want)
		require.Equal(t, want, textHits(t, s, "alice", q), q)
	}
}

// TestTextLegWithoutCache checks that with the vector cache disabled the
// text leg, built for each search, ranks as the cached one.
func TestTextLegWithoutCache(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := newFile(t)
	cached, err := Open(ctx, path, Config{})
	require.NoError(t, err)
	defer cached.Close()
	uncached, err := Open(ctx, path, Config{VectorCacheBytes: -1})
	require.NoError(t, err)
	defer uncached.Close()
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range 80 {
		require.NoError(t, cached.PutInteraction(ctx, "alice", &store.Interaction{ID: fmt.Sprintf("i%03d", i), SessionID: "s",
			FirstTurn: i + 1, LastTurn: i + 1, Content: textOf(rng, 5+rng.IntN(30))}))
	}
	for range 20 {
		q := textOf(rng, 1+rng.IntN(4))
		want := textHits(t, cached, "alice", q)
		require.Equal(t, want, textHits(t, uncached, "alice", q), q)
	}
	sets, _ := uncached.cache.stats()
	assert.Zero(t, sets, "nothing cached")
}

// TestTokenizerTablesOutliveTheRead checks that the temporary tokenizer
// tables a read creates stay on its connection for the next read, rather
// than being created again (FTS5 shadow tables and all) in every search.
func TestTokenizerTablesOutliveTheRead(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, newFile(t), Config{MaxReaders: 1})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.read(ctx, "test", func(tx *readTx) error {
		_, err := s.queryTokens(ctx, tx, []string{"bonds", "rates"})
		return err
	}))
	var n int
	require.NoError(t, s.read(ctx, "test", func(tx *readTx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM temp.sqlite_schema WHERE name IN ('am_tok', 'am_tok_inst')`).Scan(&n)
	}))
	assert.Equal(t, 2, n, "the tokenizer tables are still there")
	var rows int
	require.NoError(t, s.read(ctx, "test", func(tx *readTx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM temp.am_tok_inst`).Scan(&rows)
	}))
	assert.Zero(t, rows, "and empty")
}
