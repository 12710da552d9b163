package memoryservice

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// putOld writes v as a registry document the way an earlier version did:
// under RegistryUserID, whatever its kind.
func putOld(t *testing.T, st store.Store, id string, at time.Time, active bool, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	status := store.SessionCompleted
	if active {
		status = store.SessionActive
	}
	require.NoError(t, st.PutSession(context.Background(), RegistryUserID, &store.Session{ID: id, StartTime: at,
		Summary: string(b), Status: status, ReflectionStatus: store.ReflectionProcessed, UpdatedAt: at}))
}

// A file written in the old layout — every registry record under
// RegistryUserID, each scope's record listing its update ids — is
// migrated at New: the scope records move to their store's partition (a
// copy left by a migration cut short is kept, its old record dropped),
// the older update records stay readable, resume and go with their scope;
// a second start changes nothing.
func TestMigrateFromTheOldRegistryLayout(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	st, err := sqlite.Open(ctx, path, sqlite.Config{Logger: quiet()})
	require.NoError(t, err)
	now := time.Now().Add(-time.Minute)
	putOld(t, st, "store.support", now, false, memoryStore{Object: "memory_store", ID: "memstore_1", CreatedAt: now.Unix(), UpdatedAt: now.Unix(),
		Name: "support", Definition: definition{Kind: "default", ChatModel: "gpt-4.1", EmbeddingModel: "text-embedding-3-small"}})
	const done, queued = "memupd_0123456789abcdef01234567", "memupd_89abcdef0123456789abcdef"
	putOld(t, st, "update."+done, now, false, updateRecord{ID: done, Store: "support", Scope: "alice", SessionID: "mss_a", Status: statusCompleted,
		CreatedAt: now, DueAt: now, Result: &updateResult{MemoryOperations: []memoryOperation{}}})
	putOld(t, st, "update."+queued, now, true, updateRecord{ID: queued, Store: "support", Scope: "bob", SessionID: "mss_b", Status: statusQueued,
		CreatedAt: now, DueAt: now})
	putOld(t, st, scopeDocID("support", "alice"), now, false, scopeRecord{Store: "support", Scope: "alice",
		Updates: []updateRef{{ID: done, CreatedAt: now}}})
	bob := scopeRecord{Store: "support", Scope: "bob", Updates: []updateRef{{ID: queued, CreatedAt: now}}}
	putOld(t, st, scopeDocID("support", "bob"), now, false, bob)
	// A migration cut short: bob's copy is made, the old record not yet
	// deleted.
	b, err := json.Marshal(bob)
	require.NoError(t, err)
	require.NoError(t, st.PutSession(ctx, scopesUser("support"), &store.Session{ID: scopeDocID("support", "bob"), StartTime: now,
		Summary: string(b), Status: store.SessionCompleted, ReflectionStatus: store.ReflectionProcessed, UpdatedAt: now}))
	require.NoError(t, st.PutInsight(ctx, UserID("support", "alice"), &store.Insight{ID: "ins-1", InsightType: store.InsightSession,
		InsightText: "Keeps bees on the roof.", ReflectionFlag: store.FlagInsight, CreatedAt: now, UpdatedAt: now}))
	require.NoError(t, st.Close())

	for range 2 { // the second start finds nothing to move
		s := start(t, path, Config{})
		old, err := s.svc.rec.ListRecords(ctx, RegistryUserID, store.RecordFilter{})
		require.NoError(t, err)
		for _, d := range old {
			assert.NotRegexp(t, `^scope\.`, d.ID, "scope records left the old partition")
		}
		moved, err := s.svc.rec.ListRecords(ctx, scopesUser("support"), store.RecordFilter{})
		require.NoError(t, err)
		assert.Len(t, moved, 2, "both scope records in the store's partition")
		code, out, _ := s.do("GET", "/memory_stores/support/updates/"+done, nil)
		require.Equal(t, http.StatusOK, code, "%v", out)
		assert.Equal(t, "completed", out["status"])
		assert.Equal(t, "completed", s.wait("support", queued)["status"], "an older queued update resumes")
		assert.Contains(t, contents(s.list("support", "alice", "")), "bees")
		s.stop()
	}

	s := start(t, path, Config{})
	code, out, _ := s.do("POST", "/memory_stores/support:delete_scope", map[string]any{"scope": "alice"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, _, _ = s.do("GET", "/memory_stores/support/updates/"+done, nil)
	assert.Equal(t, http.StatusNotFound, code, "the older update went with its scope")
	code, out, _ = s.do("DELETE", "/memory_stores/support", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	left, err := s.svc.rec.ListRecords(ctx, RegistryUserID, store.RecordFilter{})
	require.NoError(t, err)
	assert.Empty(t, left, "nothing of the store is left in the registry")
	left, err = s.svc.rec.ListRecords(ctx, scopesUser("support"), store.RecordFilter{})
	require.NoError(t, err)
	assert.Empty(t, left)
}

// sessionsOnly is a store without store.Records of its own: the service
// keeps its records as session documents on it, as every version did
// before Records.
type sessionsOnly struct{ store.Store }

// A file whose records are session documents (a version before
// store.Records) is migrated at New into the store's records: every
// partition's documents move (the scope's queue and updates, the
// markers, the search records, the definitions), a queued update still
// runs, a finished one still reads, a search still continues; a second
// start reads only the migration's record.
func TestRecordsMoveFromSessionDocuments(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	old := startWrapped(t, path, Config{RateLimit: -1}, func(st *sqlite.Store) store.Store { return sessionsOnly{st} })
	old.createStore("support", nil)
	done := old.update("support", "alice", 0, "I keep bees on the roof.")
	require.Equal(t, "completed", old.wait("support", done)["status"])
	queued := old.update("support", "alice", 2, "I moved to Porto last spring.")
	searchID, _ := old.searchID("support", "alice", "", "Where do I keep my bees?")
	old.stop()

	parts := []string{RegistryUserID, scopesUser("support"), searchesUser("support"), updatesUser(scopeHash("support", "alice")), activeUser}
	for range 2 { // the second start finds them moved
		// Its poller, not the accepting replica's timer, finds the
		// queued update due.
		s := start(t, path, Config{RateLimit: -1, PollInterval: 100 * time.Millisecond})
		for _, part := range parts {
			docs, err := s.st.ListSessions(ctx, part, store.SessionFilter{})
			require.NoError(t, err)
			assert.Empty(t, docs, "no session document left in %s", part)
		}
		recs, err := s.svc.rec.ListRecords(ctx, updatesUser(scopeHash("support", "alice")), store.RecordFilter{Prefix: "update."})
		require.NoError(t, err)
		assert.Len(t, recs, 2, "both updates are records")
		code, out, _ := s.do("GET", "/memory_stores/support/updates/"+done, nil)
		require.Equal(t, http.StatusOK, code, "%v", out)
		assert.Equal(t, "completed", out["status"])
		assert.Equal(t, "completed", s.wait("support", queued)["status"], "the queued update runs")
		code, out = s.searchWith("support", "alice", searchID, "And since when?")
		assert.Equal(t, http.StatusOK, code, "the search continues: %v", out)
		assert.Contains(t, contents(s.list("support", "alice", "")), "Porto")
		s.stop()
	}
}

// A scope record that cannot be read, among session documents to move,
// does not strand its scope's updates: the partition of each update not
// finished is found from its marker, which names it, and the record is
// logged. A queued update then still runs.
func TestRecordsMoveWithAnUnreadableScopeRecord(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	old := startWrapped(t, path, Config{RateLimit: -1}, func(st *sqlite.Store) store.Store { return sessionsOnly{st} })
	old.createStore("support", nil)
	queued := old.update("support", "alice", 1, "I moved to Porto last spring.")
	old.stop()

	st, err := sqlite.Open(ctx, path, sqlite.Config{})
	require.NoError(t, err)
	docs, err := st.ListSessions(ctx, scopesUser("support"), store.SessionFilter{})
	require.NoError(t, err)
	require.Len(t, docs, 1, "alice's scope record")
	docs[0].State.CumulativeSummary = `{"store": 7` // cut short
	require.NoError(t, st.PutSession(ctx, scopesUser("support"), docs[0]))
	require.NoError(t, st.Close())

	var logged bytes.Buffer
	s := start(t, path, Config{RateLimit: -1, PollInterval: 100 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	assert.Equal(t, "completed", s.wait("support", queued)["status"], "the queued update runs")
	s.stop()
	assert.Contains(t, logged.String(), "unreadable scope record")
}
