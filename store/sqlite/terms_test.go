package sqlite

import (
	"bytes"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/longtest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

// UndoVersion5 takes a file back to schema version 4: it drops what
// migration 5 added (the records table and its index).
const UndoVersion5 = `
DROP INDEX records_by_time; DROP TABLE records;
PRAGMA user_version = 4;
`

// UndoVersion4 takes a file back to schema version 3: it drops what
// migrations 5 and 4 added (UndoVersion5; the terms tables and their
// triggers).
const UndoVersion4 = UndoVersion5 + `
DROP TRIGGER interaction_terms_update; DROP TRIGGER interaction_terms_delete; DROP TABLE interaction_terms;
DROP TRIGGER insight_terms_update; DROP TRIGGER insight_terms_delete; DROP TABLE insight_terms;
DROP TRIGGER session_terms_update; DROP TRIGGER session_terms_delete; DROP TABLE session_terms;
PRAGMA user_version = 3;
`

func TestTermsRowRoundTrip(t *testing.T) {
	d := &docTerms{terms: []termFreq{{"rate", 2}, {"bond", 1}, {"café", 3}}, length: 6}
	b := encodeTerms(d)
	got, err := decodeDocTerms(b)
	require.NoError(t, err)
	assert.Equal(t, []termFreq{{"bond", 1}, {"café", 3}, {"rate", 2}}, got.terms, "ascending, counts kept")
	assert.Equal(t, 6, got.length)
	for _, bad := range [][]byte{nil, {}, {2, 0}, b[:len(b)-1], append(bytes.Clone(b), 0)} {
		assert.ErrorIs(t, decodeTerms(bad, func([]byte, uint32) {}), errTerms, "%x", bad)
	}
}

// A terms row is data read from a file another build may have written:
// decoding never panics, and what decodes encodes back to the same bytes.
func FuzzDecodeTerms(f *testing.F) {
	f.Add(encodeTerms(&docTerms{terms: []termFreq{{"a", 1}, {"b", 7}}}))
	f.Add([]byte{termsFormat, 0})
	f.Add([]byte{termsFormat, 200, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeDocTerms(b)
		if err != nil {
			return
		}
		if got := encodeTerms(d); !bytes.Equal(got, b) {
			t.Fatalf("decoded %x, encoded back %x", b, got)
		}
	})
}

// countTerms returns the number of terms rows of the user's documents of
// kind, and of all.
func countTerms(t *testing.T, path string, sp spec, user string) (mine, all int) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer raw.Close()
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM `+sp.terms+` WHERE rid IN (SELECT rid FROM `+sp.table+` WHERE user_id = ?)`, user).Scan(&mine))
	require.NoError(t, raw.QueryRow(`SELECT count(*) FROM `+sp.terms).Scan(&all))
	return mine, all
}

// A file from schema version 3 has no terms rows: its first load
// tokenizes the documents, ranks as a version-4 file does, and stores the
// rows; a malformed row is tokenized again and rewritten; rows go with
// their documents and their user.
func TestTermsRowsOfAMigratedFile(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	oldPath, newPath := newFile(t), newFile(t)
	rng := rand.New(rand.NewPCG(41, 42))
	docs := make([]*store.Interaction, longtest.Pick(t, 40, 80))
	for i := range docs {
		docs[i] = &store.Interaction{ID: fmt.Sprintf("i%03d", i), SessionID: "s", FirstTurn: i + 1, LastTurn: i + 1,
			Timestamp: t0(0).Add(time.Duration(i) * time.Minute), Content: textOf(rng, 5+rng.IntN(30)), Summary: textOf(rng, 3)}
	}
	for _, p := range []string{oldPath, newPath} {
		s, err := Open(ctx, p, Config{})
		require.NoError(t, err)
		// One transaction per user: what is checked is the rows each
		// write stores, not how writes are grouped.
		for _, user := range []string{"alice", "bob"} {
			mine := make([]*store.Interaction, len(docs))
			for i, d := range docs {
				c := *d
				mine[i] = &c
			}
			require.NoError(t, s.putInteractions(ctx, user, mine))
		}
		require.NoError(t, s.Close())
	}
	sp, _ := specOf(store.KindInteraction)
	mine, _ := countTerms(t, newPath, sp, "alice")
	require.Equal(t, len(docs), mine, "every write stores its document's terms")

	raw, err := sql.Open("sqlite", oldPath)
	require.NoError(t, err)
	_, err = raw.Exec(UndoVersion4)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	queries := []string{"bond stocks", "retirement rate", "the run", "café 2024 alpha"}
	want := map[string][]driver.Scored{}
	fresh, err := Open(ctx, newPath, Config{})
	require.NoError(t, err)
	for _, q := range queries {
		want[q] = textHits(t, fresh, "alice", q)
		require.NotEmpty(t, want[q], q)
	}
	require.NoError(t, fresh.Close())

	old, err := Open(ctx, oldPath, Config{})
	require.NoError(t, err)
	mine, _ = countTerms(t, oldPath, sp, "alice")
	require.Zero(t, mine, "a migrated file has no terms rows yet")
	for _, q := range queries {
		assert.Equal(t, want[q], textHits(t, old, "alice", q), "migrated file: %q", q)
	}
	old.loads.wg.Wait() // the load's background save of the rows
	require.NoError(t, old.Close())
	mine, _ = countTerms(t, oldPath, sp, "alice")
	assert.Equal(t, len(docs), mine, "the first load stores the rows it tokenized")

	raw, err = sql.Open("sqlite", oldPath)
	require.NoError(t, err)
	_, err = raw.Exec(`UPDATE ` + sp.terms + ` SET terms = x'01ff' WHERE rid = (SELECT rid FROM interactions WHERE user_id = 'alice' AND id = 'i007')`)
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	old, err = Open(ctx, oldPath, Config{})
	require.NoError(t, err)
	for _, q := range queries {
		assert.Equal(t, want[q], textHits(t, old, "alice", q), "with a malformed row: %q", q)
	}
	old.loads.wg.Wait()
	require.NoError(t, old.Close())
	raw, err = sql.Open("sqlite", oldPath)
	require.NoError(t, err)
	var blob []byte
	require.NoError(t, raw.QueryRow(`SELECT terms FROM `+sp.terms+` WHERE rid = (SELECT rid FROM interactions WHERE user_id = 'alice' AND id = 'i007')`).Scan(&blob))
	require.NoError(t, raw.Close())
	assert.NoError(t, decodeTerms(blob, func([]byte, uint32) {}), "the malformed row is rewritten")

	s, err := Open(ctx, oldPath, Config{})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.DeleteDocument(ctx, "alice", store.KindInteraction, "i003"))
	mine, _ = countTerms(t, oldPath, sp, "alice")
	assert.Equal(t, len(docs)-1, mine, "a deleted document's row goes")
	_, before := countTerms(t, oldPath, sp, "alice")
	require.NoError(t, s.DeleteUser(ctx, "alice"))
	mine, all := countTerms(t, oldPath, sp, "alice")
	assert.Zero(t, mine)
	assert.Equal(t, before-(len(docs)-1), all, "another user's rows stay")
}
