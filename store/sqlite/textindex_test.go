package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

func TestTokenizerMatchesSchema(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "s.db"), Config{})
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

func TestGetVarint(t *testing.T) {
	for _, c := range []struct {
		b []byte
		v uint64
		n int
	}{
		{[]byte{0}, 0, 1},
		{[]byte{0x7f}, 127, 1},
		{[]byte{0x81, 0x00}, 128, 2},
		{[]byte{0x82, 0x80, 0x01}, 1<<15 + 1, 3},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 1<<64 - 1, 9},
		{[]byte{0x81}, 0, 0},
		{nil, 0, 0},
	} {
		v, n := getVarint(c.b)
		assert.Equal(t, c.v, v, "%x", c.b)
		assert.Equal(t, c.n, n, "%x", c.b)
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
	// n scales the fixture (n steps of writes, then n/5 of updates);
	// random is the number of random queries.
	n, random := pick(t, 100, 300), pick(t, 10, 50)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "s.db")
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
		d := &store.SessionSummary{ID: fmt.Sprintf("s%d", i), StartTime: t0(0).Add(time.Duration(i) * time.Hour),
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
				err := s.read(ctx, "test", func(tx *sql.Tx) error {
					set, release, err := s.vectorSet(ctx, tx, user, sp)
					require.NoError(t, err)
					defer release()
					require.NotNil(t, set.text)
					for _, q := range queries {
						words := queryWords(q)
						for fi := range filters {
							for _, k := range []int{5, 100} {
								want, err := textLeg(ctx, tx, user, sp, &filters[fi], matchExpr(words), k)
								require.NoError(t, err)
								got, ok, err := s.textLegIndex(ctx, tx, set.text, sp, &filters[fi], words, k)
								require.NoError(t, err)
								require.True(t, ok, q)
								require.Equal(t, want, got, "%s: %s %s %q filter %d k %d", stage, kind, user, q, fi, k)
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

// TestQueryWordsOfSeveralTokens checks that a word FTS5 splits into a
// phrase falls back to the SQL path.
func TestQueryWordsOfSeveralTokens(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "s.db"), Config{})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.PutInsight(ctx, "u", &store.Insight{ID: "a", InsightType: store.InsightSession, InsightText: "e t here"}))
	err = s.read(ctx, "test", func(tx *sql.Tx) error {
		// U+0301 is a combining mark: a word character to sanitise, a
		// separator to unicode61 once diacritics are folded... or not: the
		// tokens decide.
		toks, err := s.queryTokens(ctx, tx, []string{"bonds", "e\u0301t", "\u0301"})
		require.NoError(t, err)
		assert.Equal(t, []string{"bond"}, toks[0])
		sp, _ := specOf(store.KindInsight)
		set, release, err := s.vectorSet(ctx, tx, "u", sp)
		require.NoError(t, err)
		defer release()
		f := filter{kind: store.KindInsight}
		for i, w := range []string{"e\u0301t", "\u0301"} {
			_, ok, err := s.textLegIndex(ctx, tx, set.text, sp, &f, []string{w}, 5)
			require.NoError(t, err)
			assert.Equal(t, len(toks[i+1]) == 1, ok, "%q → %q", w, toks[i+1])
		}
		return nil
	})
	require.NoError(t, err)
}
