package memoryservice

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// listLog is a real store that records which registry partitions are
// listed, and the ids each listing returned.
type listLog struct {
	store.Store
	mu    sync.Mutex
	lists map[string][][]string // by partition
}

func (l *listLog) ListSessions(ctx context.Context, userID string, f store.SessionFilter) ([]*store.Session, error) {
	docs, err := l.Store.ListSessions(ctx, userID, f)
	logList(l, userID, docs, func(d *store.Session) string { return d.ID })
	return docs, err
}

// logList records a listing of partition userID, if it is a registry's.
func logList[T any](l *listLog, userID string, found []T, id func(T) string) {
	if !strings.HasPrefix(userID, RegistryUserID) {
		return
	}
	ids := make([]string, len(found))
	for i, d := range found {
		ids[i] = id(d)
	}
	l.mu.Lock()
	l.lists[userID] = append(l.lists[userID], ids)
	l.mu.Unlock()
}

// The service keeps its records through the store's own Records where
// it has them (store.RecordsOf): their listings are logged too.

func (l *listLog) ListRecords(ctx context.Context, userID string, f store.RecordFilter) ([]*store.Record, error) {
	recs, err := store.RecordsOf(l.Store).ListRecords(ctx, userID, f)
	logList(l, userID, recs, func(r *store.Record) string { return r.ID })
	return recs, err
}

func (l *listLog) GetRecord(ctx context.Context, userID, id string) (*store.Record, error) {
	return store.RecordsOf(l.Store).GetRecord(ctx, userID, id)
}

func (l *listLog) PutRecord(ctx context.Context, userID string, r *store.Record) error {
	return store.RecordsOf(l.Store).PutRecord(ctx, userID, r)
}

func (l *listLog) DeleteRecord(ctx context.Context, userID, id string) error {
	return store.RecordsOf(l.Store).DeleteRecord(ctx, userID, id)
}

// take returns the listings recorded since the last take.
func (l *listLog) take() map[string][][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lists
	l.lists = map[string][][]string{}
	return out
}

func startLogged(t *testing.T, cfg Config) (*server, *listLog) {
	t.Helper()
	path := dbPath(t)
	l := &listLog{lists: map[string][][]string{}}
	s := startWrapped(t, path, cfg, func(st *sqlite.Store) store.Store {
		l.Store = st
		return l
	})
	return s, l
}

// Listing the memory stores reads the store definitions only; the sweep
// reads each store's scopes and search records and each scope's finished
// updates; delete_scope reads the scope's updates and its store's search
// records only: no read returns another kind's, store's or scope's
// records.
func TestRegistryReadsFollowTheQuestion(t *testing.T) {
	clk := &clock{}
	s, l := startLogged(t, Config{Now: clk.Now, SweepInterval: time.Hour, RateLimit: -1})
	for _, name := range []string{"alpha", "beta"} {
		s.createStore(name, nil)
		for _, scope := range []string{"alice", "bob"} {
			operations(t, s.wait(name, s.update(name, scope, 0, "I live in Porto.")))
			s.update(name, scope, 3600, "I play the cello.")
		}
	}
	l.take()

	code, out, _ := s.do("GET", "/memory_stores", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	got := l.take()
	assert.Equal(t, [][]string{{"store.alpha", "store.beta"}}, sorted(got[RegistryUserID]), "the definitions alone")
	assert.Len(t, got, 1, "and nothing else: %v", got)

	clk.Add(48 * time.Hour)
	require.NoError(t, s.svc.sweep(context.Background()))
	got = l.take()
	for part, lists := range got {
		for _, ids := range lists {
			for _, id := range ids {
				switch {
				case part == RegistryUserID:
					assert.True(t, strings.HasPrefix(id, "store."), "%s in %s", id, part)
				case strings.HasPrefix(part, scopesUser("")):
					name := strings.TrimPrefix(part, scopesUser(""))
					assert.True(t, strings.HasPrefix(id, "scope."+name+"."), "%s in %s", id, part)
				}
			}
		}
	}
	assert.Len(t, got[scopesUser("alpha")], 1, "alpha's scopes read once")
	assert.Len(t, got[scopesUser("beta")], 1, "beta's scopes read once")
	assert.Len(t, got[updatesUser(scopeHash("beta", "bob"))], 1, "each scope's finished updates read once")

	clk.Add(time.Minute) // the next sweep retires nothing, and no store has a TTL: no scope is read
	require.NoError(t, s.svc.sweep(context.Background()))
	assert.ElementsMatch(t, []string{RegistryUserID, searchesUser("alpha"), searchesUser("beta"), forgetsUser}, keys(l.take()),
		"only the definitions, each store's search records and the forgets not yet complete are read within the hour")

	code, out, _ = s.do("POST", "/memory_stores/alpha:delete_scope", map[string]any{"scope": "alice"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	got = l.take()
	for part := range got {
		assert.Contains(t, []string{updatesUser(scopeHash("alpha", "alice")), searchesUser("alpha"), forgetsUser}, part,
			"delete_scope listed %s: the scope's updates, its store's searches, the forgets not yet complete", part)
	}
}

func sorted(lists [][]string) [][]string {
	for _, ids := range lists {
		for i := range ids {
			for j := i + 1; j < len(ids); j++ {
				if ids[j] < ids[i] {
					ids[i], ids[j] = ids[j], ids[i]
				}
			}
		}
	}
	return lists
}

// A scope's record is written once, not on each update: updates are
// found in their scope's own partition.
func TestUpdatesDoNotRewriteTheScopeRecord(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("support", nil)
	s.update("support", "alice", 3600, "I live in Porto.")
	k := scopeKey("support", "alice")
	first, err := s.svc.rec.GetRecord(context.Background(), k.user, k.id)
	require.NoError(t, err)
	for range 5 {
		s.update("support", "alice", 3600, "I play the cello.")
	}
	now, err := s.svc.rec.GetRecord(context.Background(), k.user, k.id)
	require.NoError(t, err)
	assert.Equal(t, first.ETag, now.ETag, "the scope's record is unchanged")
	assert.NotContains(t, string(now.Body), "memupd_", "and names no update")
}

// An unreadable scope record is not skipped in silence: deleting its
// store answers 500 and keeps the store (rather than orphan the scope's
// memories), and the sweep reports it.
func TestAnUnreadableScopeRecordFailsLoudly(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("support", nil)
	operations(t, s.wait("support", s.update("support", "alice", 0, "I live in Porto.")))
	k := scopeKey("support", "alice")
	r, err := s.svc.rec.GetRecord(context.Background(), k.user, k.id)
	require.NoError(t, err)
	r.Body = []byte(`["not a scope record"]`)
	require.NoError(t, s.svc.rec.PutRecord(context.Background(), k.user, r))

	require.Error(t, s.svc.sweep(context.Background()), "the sweep reports the scope it could not read")
	code, out, _ := s.do("DELETE", "/memory_stores/support", nil)
	assert.Equal(t, http.StatusInternalServerError, code, "%v", out)
	code, _, _ = s.do("GET", "/memory_stores/support", nil)
	assert.Equal(t, http.StatusOK, code, "the store stays")
	assert.NotEmpty(t, s.list("support", "alice", ""), "and so do the scope's memories")
}

// The registry's partitions are valid user ids for every store name, and
// none can be a scope's.
func TestRegistryPartitionsAreValidUserIDs(t *testing.T) {
	long := strings.Repeat("n", MaxNameLen)
	for _, u := range []string{RegistryUserID, activeUser, scopesUser(long), scopesUser("a"), updatesUser(scopeHash(long, strings.Repeat("s", 200)))} {
		require.NoError(t, store.CheckUserID(u), u)
		assert.False(t, strings.HasPrefix(u, ScopePrefix), u)
	}
	id := newUpdateID(long, "alice")
	assert.Equal(t, updatesUser(scopeHash(long, "alice")), updateHome(id), "a new id names its scope's partition")
	assert.Equal(t, RegistryUserID, updateHome("memupd_0123456789abcdef01234567"), "an older id, the old place")
	assert.Equal(t, RegistryUserID, updateHome("memupd_"+strings.Repeat("Z", 48)), "not hex: not a partition")
}

func keys(m map[string][][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Registry records stay out of the full-text index. On SQLite they are
// no session documents at all; where they are (store.SessionRecords, as
// on Cosmos DB and before store.Records), their JSON is not in a
// session's Summary, so no search of the registry's partitions finds it,
// and records written in Summary before are still read.
func TestRegistryRecordsAreNotIndexedForFullText(t *testing.T) {
	for _, kept := range []struct {
		name string
		wrap func(*sqlite.Store) store.Store
	}{
		{"records", func(st *sqlite.Store) store.Store { return st }},
		{"sessions", func(st *sqlite.Store) store.Store { return sessionsOnly{st} }},
	} {
		t.Run(kept.name, func(t *testing.T) {
			ctx := context.Background()
			s := startWrapped(t, dbPath(t), Config{}, kept.wrap)
			s.createStore("support", nil)
			s.update("support", "alice", 3600, "I live in Porto.")
			k := scopeKey("support", "alice")
			hits, err := s.st.SearchSessions(ctx, k.user, store.SearchRequest{Text: "alice support scope", TopK: 5})
			require.NoError(t, err)
			assert.Empty(t, hits, "a record is never a full-text candidate")
			doc, err := s.st.GetSession(ctx, k.user, k.id)
			if kept.name == "records" {
				require.ErrorIs(t, err, store.ErrNotFound, "a record is no session document")
				return
			}
			require.NoError(t, err)
			assert.Empty(t, doc.Summary)
			assert.Contains(t, doc.State.CumulativeSummary, `"scope"`)

			// A record of the earlier layout, its JSON in Summary, reads as before.
			doc.Summary, doc.State.CumulativeSummary = doc.State.CumulativeSummary, ""
			require.NoError(t, s.st.PutSession(ctx, k.user, doc))
			code, out, _ := s.do("POST", "/memory_stores/support:delete_scope", map[string]any{"scope": "alice"})
			assert.Equal(t, http.StatusOK, code, "the scope's old-layout record is read: %v", out)
		})
	}
}
