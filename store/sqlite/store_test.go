package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentmemory/agentmemory/internal/longtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
	"github.com/agentmemory/agentmemory/store/storetest"

	_ "modernc.org/sqlite"
)

const dims = 4

func openAt(t *testing.T, path string, cfg sqlite.Config) *sqlite.Store {
	t.Helper()
	if cfg.Dimensions == 0 {
		cfg.Dimensions = dims
	}
	s, err := sqlite.Open(t.Context(), path, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func dbOf(t *testing.T, s *sqlite.Store) *sql.DB {
	t.Helper()
	var db *sql.DB
	require.True(t, s.As(&db))
	return db
}

func count(t *testing.T, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow(query, args...).Scan(&n), query)
	return n
}

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func interaction(id, session string, hour int, content string, v ...float32) *store.Interaction {
	return &store.Interaction{ID: id, SessionID: session, Timestamp: t0.Add(time.Duration(hour) * time.Hour),
		FirstTurn: 1, LastTurn: 1, Content: content, ContentVector: v}
}

func TestPragmasAndAs(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "m.db"), sqlite.Config{})
	db := dbOf(t, s)
	var mode string
	require.NoError(t, db.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	assert.Equal(t, "wal", mode)
	assert.Equal(t, 2, count(t, db, `PRAGMA synchronous`), "FULL")
	assert.Equal(t, 1, count(t, db, `PRAGMA foreign_keys`))
	assert.Equal(t, 5000, count(t, db, `PRAGMA busy_timeout`))
	assert.Equal(t, sqlite.SchemaVersion, count(t, db, `PRAGMA user_version`))

	var other *sqlite.Store
	assert.False(t, s.As(&other))
	assert.False(t, s.As(db), "a *sql.DB, not a **sql.DB")
}

func TestPathIsNotParsedAsURI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "we?ird#dir%20x")
	require.NoError(t, os.Mkdir(dir, 0o755))
	path := filepath.Join(dir, "m.db?mode=ro")
	s := openAt(t, path, sqlite.Config{})
	require.NoError(t, s.PutInteraction(t.Context(), "u", interaction("i1", "s1", 0, "hello")))
	_, err := os.Stat(path)
	assert.NoError(t, err, "the file is at the exact path given")
}

func TestMigrations(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "m.db")
	s, err := sqlite.Open(ctx, path, sqlite.Config{})
	require.NoError(t, err)
	require.NoError(t, s.PutInteraction(ctx, "u", interaction("i1", "s1", 0, "kept across reopen")))
	schema := func(db *sql.DB) []string {
		rows, err := db.Query(`SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_schema ORDER BY name`)
		require.NoError(t, err)
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			require.NoError(t, rows.Scan(&s))
			out = append(out, s)
		}
		require.NoError(t, rows.Err())
		return out
	}
	before := schema(dbOf(t, s))
	require.NoError(t, s.Close())

	t.Run("CurrentVersionIsNoOp", func(t *testing.T) {
		s := openAt(t, path, sqlite.Config{})
		db := dbOf(t, s)
		assert.Equal(t, before, schema(db))
		assert.Equal(t, sqlite.SchemaVersion, count(t, db, `PRAGMA user_version`))
		_, err := s.GetInteraction(ctx, "u", "i1")
		assert.NoError(t, err)
		require.NoError(t, s.Close())
	})
	t.Run("NewerVersionRefused", func(t *testing.T) {
		raw, err := sql.Open("sqlite", path)
		require.NoError(t, err)
		_, err = raw.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, sqlite.SchemaVersion+1))
		require.NoError(t, err)
		require.NoError(t, raw.Close())

		_, err = sqlite.Open(ctx, path, sqlite.Config{})
		require.ErrorIs(t, err, sqlite.ErrSchemaTooNew)
		assert.ErrorContains(t, err, fmt.Sprintf("version %d", sqlite.SchemaVersion+1))

		raw, err = sql.Open("sqlite", path)
		require.NoError(t, err)
		defer raw.Close()
		assert.Equal(t, sqlite.SchemaVersion+1, count(t, raw, `PRAGMA user_version`), "left untouched")
		assert.Equal(t, 1, count(t, raw, `SELECT count(*) FROM interactions`))
	})
	t.Run("ForeignDatabaseRefused", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "other.db")
		raw, err := sql.Open("sqlite", other)
		require.NoError(t, err)
		_, err = raw.Exec(`CREATE TABLE accounts (id INTEGER PRIMARY KEY)`)
		require.NoError(t, err)
		require.NoError(t, raw.Close())
		_, err = sqlite.Open(ctx, other, sqlite.Config{})
		assert.ErrorIs(t, err, sqlite.ErrForeignDatabase)
	})
}

// downgraded returns the path of a store file holding interaction i1 of
// user u, taken back by the statements undo to the schema an earlier
// build left.
func downgraded(t *testing.T, undo string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openAt(t, path, sqlite.Config{})
	require.NoError(t, s.PutInteraction(t.Context(), "u", interaction("i1", "s1", 0, "kept across the migration")))
	require.NoError(t, s.Close())
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	_, err = raw.Exec(undo)
	require.NoError(t, err)
	require.NoError(t, raw.Close())
	return path
}

// A file written at schema version 2 (before the deletion log) gains the
// log when it is opened, keeping its documents.
func TestMigrateAddsDeletionLog(t *testing.T) {
	ctx := t.Context()
	path := downgraded(t, sqlite.UndoVersion4+`DROP TABLE deletion_log; PRAGMA user_version = 2`)
	s := openAt(t, path, sqlite.Config{})
	assert.Equal(t, sqlite.SchemaVersion, count(t, dbOf(t, s), `PRAGMA user_version`))
	_, err := s.GetInteraction(ctx, "u", "i1")
	require.NoError(t, err)
	_, err = s.LastDeletion(ctx)
	require.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, s.AppendDeletion(ctx, &store.DeletionRecord{Seq: 1, At: t0, Reason: "forget_user", Subject: "sub", Hash: "h1"}))
	last, err := s.LastDeletion(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), last.Seq)
}

func TestOpenRejectsBadConfig(t *testing.T) {
	_, err := sqlite.Open(t.Context(), "", sqlite.Config{})
	assert.ErrorContains(t, err, "empty path")
	_, err = sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "m.db"), sqlite.Config{Dimensions: -1})
	assert.ErrorContains(t, err, "negative dimensions")
	_, err = sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "no", "such", "dir", "m.db"), sqlite.Config{})
	assert.Error(t, err)
}

func TestDeleteUserLeavesNoRows(t *testing.T) {
	ctx := t.Context()
	path := sqlitetest.NewFile(t)
	s := openAt(t, path, sqlite.Config{})
	for _, u := range []string{"gone", "kept"} {
		require.NoError(t, s.PutInteraction(ctx, u, interaction("i1", "s1", 0, "alpha beta", 1, 0, 0, 0)))
		require.NoError(t, s.PutInsight(ctx, u, &store.Insight{ID: "n1", InsightType: store.InsightSession,
			InsightText: "alpha", SessionIDs: []string{"s1", "s2"}, InsightVector: []float32{1, 0, 0, 0}}))
		require.NoError(t, s.PutSession(ctx, u, &store.Session{ID: "s1", Summary: "alpha"}))
		// Warm the vector cache.
		_, err := s.SearchInteractions(ctx, u, store.SearchRequest{Vector: []float32{1, 0, 0, 0}})
		require.NoError(t, err)
	}
	require.NoError(t, s.DeleteUser(ctx, "gone"))

	db := dbOf(t, s)
	for _, table := range []string{"interactions", "insights", "session_summaries", "insight_sessions", "generations"} {
		assert.Zero(t, count(t, db, `SELECT count(*) FROM `+table+` WHERE user_id = 'gone'`), table)
		assert.NotZero(t, count(t, db, `SELECT count(*) FROM `+table+` WHERE user_id = 'kept'`), table)
	}
	for _, fts := range []string{"interactions_fts", "insights_fts", "sessions_fts"} {
		assert.Equal(t, 1, count(t, db, `SELECT count(*) FROM `+fts), "%s: only the kept user's row", fts)
	}
	checkIntegrity(t, path)
	hits, err := s.SearchInteractions(ctx, "gone", store.SearchRequest{Text: "alpha", Vector: []float32{1, 0, 0, 0}})
	require.NoError(t, err)
	assert.Empty(t, hits, "nothing left in the file or the cache")
}

func TestCorruptRowIsAnErrorNotAPanic(t *testing.T) {
	ctx := t.Context()
	s := openAt(t, sqlitetest.NewFile(t), sqlite.Config{})
	require.NoError(t, s.PutInteraction(ctx, "u", interaction("i1", "s1", 0, "alpha", 1, 0, 0, 0)))
	require.NoError(t, s.PutInteraction(ctx, "u", interaction("i2", "s1", 1, "beta", 0, 1, 0, 0)))
	db := dbOf(t, s)
	_, err := db.Exec(`UPDATE interactions SET doc = '{"id": 7' WHERE id = 'i1'`)
	require.ErrorContains(t, err, "malformed JSON", "the full-text trigger refuses a document that is not JSON")
	_, err = db.Exec(`UPDATE interactions SET doc = '{"id": 7}' WHERE id = 'i1'`)
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE interactions SET content_vector = x'000000' WHERE id = 'i2'`)
	require.NoError(t, err)

	_, err = s.GetInteraction(ctx, "u", "i1")
	require.Error(t, err)
	assert.NotErrorIs(t, err, store.ErrNotFound)
	assert.ErrorContains(t, err, "decode interaction i1")
	_, err = s.GetInteraction(ctx, "u", "i2")
	assert.ErrorContains(t, err, "content_vector")
	_, err = s.SearchInteractions(ctx, "u", store.SearchRequest{Vector: []float32{1, 0, 0, 0}})
	assert.ErrorContains(t, err, "i2")
}

// TestVectorCacheFollowsWrites searches with vectors only, so that every
// result comes from the cached sets, and checks that writes through the
// store, through a second Store on the same file, and filters all show.
func TestVectorCacheFollowsWrites(t *testing.T) {
	for _, cacheBytes := range []int64{0, -1} {
		t.Run(fmt.Sprintf("cache=%d", cacheBytes), func(t *testing.T) {
			ctx := t.Context()
			path := sqlitetest.NewFile(t)
			a := openAt(t, path, sqlite.Config{VectorCacheBytes: cacheBytes})
			b := openAt(t, path, sqlite.Config{VectorCacheBytes: cacheBytes})
			q := store.SearchRequest{Vector: []float32{1, 0, 0, 0}, MinSimilarity: 0.1, TopK: 10}
			search := func(s *sqlite.Store, q store.SearchRequest) []string {
				t.Helper()
				hits, err := s.SearchInteractions(ctx, "u", q)
				require.NoError(t, err)
				return storetest.HitIDs(hits)
			}
			require.NoError(t, a.PutInteraction(ctx, "u", interaction("near", "s1", 0, "x", 1, 0.1, 0, 0)))
			require.NoError(t, a.PutInteraction(ctx, "u", interaction("far", "s2", 1, "x", 1, 1, 0, 0)))
			assert.Equal(t, []string{"near", "far"}, search(a, q))

			// This store's write updates its cache in place.
			require.NoError(t, a.PutInteraction(ctx, "u", interaction("exact", "s1", 2, "x", 2, 0, 0, 0)))
			assert.Equal(t, []string{"exact", "near", "far"}, search(a, q))
			// Replacing a document's vector moves it.
			require.NoError(t, a.PutInteraction(ctx, "u", interaction("near", "s1", 0, "x", 0, 1, 0, 0)))
			assert.Equal(t, []string{"exact", "far"}, search(a, q))

			// Another Store's writes are seen (its generation differs).
			assert.Equal(t, []string{"exact", "far"}, search(b, q))
			require.NoError(t, b.PutInteraction(ctx, "u", interaction("other", "s2", 3, "x", 1, 0.5, 0, 0)))
			require.NoError(t, b.DeleteDocument(ctx, "u", store.KindInteraction, "exact"))
			assert.Equal(t, []string{"other", "far"}, search(a, q))

			// Filters apply to the vector leg.
			fq := q
			fq.SessionID = "s2"
			fq.Since = t0.Add(2 * time.Hour)
			assert.Equal(t, []string{"other"}, search(a, fq))
			fq.Since, fq.Until = time.Time{}, t0.Add(2*time.Hour)
			assert.Equal(t, []string{"far"}, search(a, fq))

			// A vector-less replacement leaves the vector leg.
			require.NoError(t, a.PutInteraction(ctx, "u", interaction("far", "s2", 1, "x")))
			assert.Equal(t, []string{"other"}, search(b, q))

			require.NoError(t, b.DeleteUser(ctx, "u"))
			assert.Empty(t, search(a, q))
			require.NoError(t, b.PutInteraction(ctx, "u", interaction("again", "s1", 0, "x", 1, 0, 0, 0)))
			assert.Equal(t, []string{"again"}, search(a, q))
		})
	}
}

func TestInsightVectorLegFollowsSupersede(t *testing.T) {
	ctx := t.Context()
	s := openAt(t, sqlitetest.NewFile(t), sqlite.Config{})
	put := func(id, cat string, v ...float32) {
		require.NoError(t, s.PutInsight(ctx, "u", &store.Insight{ID: id, InsightType: store.InsightSession,
			InsightText: id, Category: cat, SessionIDs: []string{"s-" + id}, InsightVector: v, CreatedAt: t0}))
	}
	put("a", "risk_profile", 1, 0, 0, 0)
	put("b", "concern", 1, 0.2, 0, 0)
	q := store.SearchRequest{Vector: []float32{1, 0, 0, 0}}
	search := func(q store.SearchRequest) []string {
		hits, err := s.SearchInsights(ctx, "u", q)
		require.NoError(t, err)
		return storetest.HitIDs(hits)
	}
	assert.Equal(t, []string{"a", "b"}, search(q))
	require.NoError(t, s.SupersedeInsight(ctx, "u", "a", store.Supersession{By: "b", Reason: store.ReasonDuplicate}))
	assert.Equal(t, []string{"b"}, search(q))
	q.Category = "risk_profile"
	assert.Empty(t, search(q))
	q.Category, q.SessionID = "", "s-b"
	assert.Equal(t, []string{"b"}, search(q))
	// Putting the superseded insight back un-supersedes it.
	put("a", "risk_profile", 1, 0, 0, 0)
	q.SessionID = ""
	assert.Equal(t, []string{"a", "b"}, search(q))
}

func TestAnyDimensions(t *testing.T) {
	ctx := t.Context()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"), sqlite.Config{})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.PutInteraction(ctx, "u", interaction("three", "s", 0, "x", 1, 0, 0)))
	require.NoError(t, s.PutInteraction(ctx, "u", interaction("two", "s", 0, "x", 1, 0)))
	hits, err := s.SearchInteractions(ctx, "u", store.SearchRequest{Vector: []float32{1, 1}})
	require.NoError(t, err)
	assert.Equal(t, []string{"two"}, storetest.HitIDs(hits), "only vectors of the query's length are compared")
}

func TestTextOnlyPunctuationFindsNothing(t *testing.T) {
	ctx := t.Context()
	s := openAt(t, sqlitetest.NewFile(t), sqlite.Config{})
	require.NoError(t, s.PutInteraction(ctx, "u", interaction("i", "s", 0, "hello world")))
	for _, text := range []string{`"`, `*`, `NEAR(`, `(((`, `:`} {
		hits, err := s.SearchInteractions(ctx, "u", store.SearchRequest{Text: text})
		require.NoError(t, err, text)
		assert.Empty(t, hits, text)
	}
	hits, err := s.SearchInteractions(ctx, "u", store.SearchRequest{Text: `"hello` + ` NOT world`})
	require.NoError(t, err)
	assert.Equal(t, []string{"i"}, storetest.HitIDs(hits), "NOT is a word, not an operator")
}

// incrementSession adds one turn to the session with an ETag retry loop,
// returning the number of conflicts it retried.
func incrementSession(ctx context.Context, s store.Store, user, id string) (conflicts int, err error) {
	for {
		doc, err := s.GetSession(ctx, user, id)
		if err != nil {
			return conflicts, err
		}
		doc.State.TurnCounter++
		err = s.PutSession(ctx, user, doc)
		if errors.Is(err, store.ErrConflict) {
			conflicts++
			continue
		}
		return conflicts, err
	}
}

// TestTwoStoresOnOneFileConcurrently has four workers on two stores of one
// file write the same session (conditional ETag writes), their own
// interactions and search at once: no update may be lost and each store's
// cache must see the other's writes. The long mode writes more per worker.
func TestTwoStoresOnOneFileConcurrently(t *testing.T) {
	ctx := t.Context()
	path := sqlitetest.NewFile(t)
	stores := []*sqlite.Store{openAt(t, path, sqlite.Config{}), openAt(t, path, sqlite.Config{})}
	require.NoError(t, stores[0].PutSession(ctx, "u", &store.Session{ID: "s"}))
	const workers = 4
	perWorker := 6
	if longtest.Enabled(t) {
		perWorker = 15
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker*2)
	for w := range workers {
		st := stores[w%2]
		wg.Go(func() {
			for i := range perWorker {
				if _, err := incrementSession(ctx, st, "u", "s"); err != nil {
					errs <- err
				}
				in := interaction(fmt.Sprintf("w%d-%d", w, i), "s", i, "concurrent", 1, float32(w), float32(i), 0)
				if err := st.PutInteraction(ctx, "u", in); err != nil {
					errs <- err
				}
				if _, err := st.SearchInteractions(ctx, "u", store.SearchRequest{Text: "concurrent", Vector: in.ContentVector}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, st := range stores {
		doc, err := st.GetSession(ctx, "u", "s")
		require.NoError(t, err)
		assert.Equal(t, workers*perWorker, doc.State.TurnCounter, "no lost update")
		ints, err := st.ListInteractions(ctx, "u", store.InteractionFilter{})
		require.NoError(t, err)
		assert.Len(t, ints, workers*perWorker)
		hits, err := st.SearchInteractions(ctx, "u", store.SearchRequest{Vector: []float32{1, 0, 0, 0}, TopK: store.MaxTopK})
		require.NoError(t, err)
		assert.Len(t, hits, workers*perWorker, "each store's vector cache sees every write")
	}
	checkIntegrity(t, path)
}

// A file written at schema version 4 (before the records) gains the
// records table when it is opened, keeping its documents.
func TestMigrateAddsRecords(t *testing.T) {
	ctx := t.Context()
	path := downgraded(t, sqlite.UndoVersion5)
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	require.Zero(t, count(t, raw, `SELECT count(*) FROM sqlite_schema WHERE name LIKE 'records%'`))
	require.NoError(t, raw.Close())

	s := openAt(t, path, sqlite.Config{})
	assert.Equal(t, sqlite.SchemaVersion, count(t, dbOf(t, s), `PRAGMA user_version`))
	_, err = s.GetInteraction(ctx, "u", "i1")
	require.NoError(t, err)
	_, err = s.GetRecord(ctx, "u", "r1")
	require.ErrorIs(t, err, store.ErrNotFound)
	require.NoError(t, s.PutRecord(ctx, "u", &store.Record{ID: "r1", Time: t0, Body: []byte(`{}`)}))
	got, err := s.GetRecord(ctx, "u", "r1")
	require.NoError(t, err)
	assert.Equal(t, t0, got.Time)
}
