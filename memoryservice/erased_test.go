package memoryservice

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/internal/sqlitetest"
	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// startBusy serves a SQLite file whose checkpoints give up quickly when a
// reader holds the WAL, and returns the store to hold it with.
func startBusy(t *testing.T, path string, cfg Config) (*server, *sqlite.Store) {
	t.Helper()
	var lite *sqlite.Store
	s := startOn(t, func(t testing.TB, dims int) store.Store {
		st, err := sqlite.Open(context.Background(), path, sqlite.Config{Dimensions: dims, Logger: quiet(), BusyTimeout: 5 * time.Millisecond})
		require.NoError(t, err)
		lite = st
		return st
	}, cfg)
	return s, lite
}

// requireRetryable checks a 5xx in the API's error shape with Retry-After.
func requireRetryable(t *testing.T, code int, out map[string]any, h http.Header) {
	t.Helper()
	require.GreaterOrEqual(t, code, 500, "%v", out)
	e, ok := out["error"].(map[string]any)
	require.True(t, ok, "error shape: %v", out)
	assert.NotEmpty(t, e["code"])
	assert.NotEmpty(t, e["message"])
	assert.NotEmpty(t, h.Get("Retry-After"), "a retry completes it")
}

// delete_scope whose erasure cannot complete (a reader holds the WAL)
// does not answer "deleted": it is a retryable 503; once the reader is
// gone a retry answers 200, and no byte of the scope's name, its texts or
// its registry records is left in the files.
func TestDeleteScopeNotErasedIsRetryable(t *testing.T) {
	path := dbPath(t)
	s, lite := startBusy(t, path, Config{})
	s.createStore("support", nil)
	const scope, text = "zqxscopename", "My cat Zorblaxian hates the vacuum."
	operations(t, s.wait("support", s.update("support", scope, 0, text)))
	code, out, _ := s.do("POST", "/memory_stores/support/items", map[string]any{"scope": scope, "kind": "user_profile", "content": "Plays the Quuxophone daily."})
	require.Equal(t, http.StatusOK, code, "%v", out)
	s.update("support", scope, 3600, "Queued words Vexillumine.") // a queued update's record names the scope too
	require.True(t, fileHolds(t, path, scope))

	release := sqlitetest.HoldWAL(t, lite)
	code, out, h := s.do("POST", "/memory_stores/support:delete_scope", map[string]any{"scope": scope})
	requireRetryable(t, code, out, h)
	release()
	code, out, _ = s.do("POST", "/memory_stores/support:delete_scope", map[string]any{"scope": scope})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, true, out["deleted"])

	s.stop()
	for _, word := range []string{scope, "Zorblaxian", "Quuxophone", "Vexillumine"} {
		assert.False(t, fileHolds(t, path, word), "%s left in the files after delete_scope", word)
	}
}

// Without a reader in the way, one delete_scope leaves no byte of the
// scope behind, its registry records included (deleted before the scrub).
func TestDeleteScopeLeavesNoBytes(t *testing.T) {
	path := dbPath(t)
	s := start(t, path, Config{})
	s.createStore("support", nil)
	const scope = "zqxotherscope"
	operations(t, s.wait("support", s.update("support", scope, 0, "I grow Plumbagorix in the garden.")))
	s.update("support", scope, 3600, "Queued words Vexillumine.")
	code, out, _ := s.do("POST", "/memory_stores/support:delete_scope", map[string]any{"scope": scope})
	require.Equal(t, http.StatusOK, code, "%v", out)
	s.stop()
	for _, word := range []string{scope, "Plumbagorix", "Vexillumine"} {
		assert.False(t, fileHolds(t, path, word), "%s left in the files after delete_scope", word)
	}
}

// Deleting a memory item whose erasure cannot complete is a retryable
// 503, and the retry, which finds the item gone, completes it: 200, and
// its text is gone from the files.
func TestDeleteItemNotErasedIsRetryable(t *testing.T) {
	path := dbPath(t)
	s, lite := startBusy(t, path, Config{})
	s.createStore("support", nil)
	code, out, _ := s.do("POST", "/memory_stores/support/items", map[string]any{"scope": "alice", "kind": "user_profile", "content": "Plays the Quuxophone daily."})
	require.Equal(t, http.StatusOK, code, "%v", out)
	id := out["memory_id"].(string)

	release := sqlitetest.HoldWAL(t, lite)
	code, out, h := s.do("DELETE", "/memory_stores/support/items/"+id, nil)
	requireRetryable(t, code, out, h)
	release()
	code, out, _ = s.do("DELETE", "/memory_stores/support/items/"+id, nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, true, out["deleted"])
	code, _, _ = s.do("DELETE", "/memory_stores/support/items/"+id, nil)
	assert.Equal(t, http.StatusNotFound, code, "once complete, it is gone")
	s.stop()
	assert.False(t, fileHolds(t, path, "Quuxophone"))
}

// delete_scope of a scope that never held anything writes no deletion-log
// record and answers 404 naming the scope, as the Foundry API does for a
// scope without memories.
func TestDeleteUnknownScopeLogsNothing(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("support", nil)
	for range 3 {
		code, out, _ := s.do("POST", "/memory_stores/support:delete_scope", map[string]any{"scope": "nobody"})
		require.Equal(t, http.StatusNotFound, code, "%v", out)
		assert.Equal(t, "scope", errorParam(t, out))
	}
	recs, err := s.st.(*sqlite.Store).ListDeletions(context.Background(), 0, 0)
	require.NoError(t, err)
	assert.Empty(t, recs, "nothing forgotten, nothing logged")
}

// The sweep whose expiry cannot be erased (a reader holds the WAL)
// reports it, and the next sweep completes it: no byte of the expired
// memory is left.
func TestSweepRetriesAnExpiryNotErased(t *testing.T) {
	clk := &clock{}
	path := dbPath(t)
	s, lite := startBusy(t, path, Config{Now: clk.Now, SweepInterval: time.Hour})
	s.createStore("brief", map[string]any{"default_ttl_seconds": 3600})
	operations(t, s.wait("brief", s.update("brief", "alice", 0, "I keep a Marmorkrebs in a tank.")))
	clk.Add(2 * time.Hour)

	release := sqlitetest.HoldWAL(t, lite)
	err := s.svc.sweep(context.Background())
	require.Error(t, err, "the sweep reports the expiry not erased")
	release()
	require.NoError(t, s.svc.sweep(context.Background()))
	s.stop()
	assert.False(t, fileHolds(t, path, "Marmorkrebs"))
}

// Updating a memory item forgotten between its lookup and its rewrite (it
// waited for the scope's update run) is a 404 naming the item, not a 500.
func TestUpdatingAnItemForgottenMeanwhileIsNotFound(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("support", nil)
	for _, kind := range []string{"user_profile", "chat_summary"} {
		code, out, _ := s.do("POST", "/memory_stores/support/items", map[string]any{"scope": "alice", "kind": kind, "content": "Plays the cello."})
		require.Equal(t, http.StatusOK, code, "%v", out)
		id := out["memory_id"].(string)
		_, _, docID, ok := parseItemID(id)
		require.True(t, ok)

		unlock := s.svc.lockScope("run", UserID("support", "alice")) // as an update run holds it
		type answer struct {
			code int
			out  map[string]any
		}
		done := make(chan answer)
		go func() {
			code, out, _ := s.do("POST", "/memory_stores/support/items/"+id, map[string]any{"content": "Plays the viola."})
			done <- answer{code, out}
		}()
		time.Sleep(100 * time.Millisecond) // the request has found the item and waits for the lock
		k := store.KindInsight
		if kind == "chat_summary" {
			k = store.KindSessionSummary
		}
		require.NoError(t, s.st.DeleteDocument(context.Background(), UserID("support", "alice"), k, docID))
		unlock()
		a := <-done
		assert.Equal(t, http.StatusNotFound, a.code, "%s: %v", kind, a.out)
		if a.code == http.StatusNotFound {
			assert.Equal(t, "memory_id", errorParam(t, a.out))
		}
	}
}

// flakyLog is a real SQLite store whose deletion log refuses the next
// fail appends, as a store whose log write fails would.
type flakyLog struct {
	*sqlite.Store
	fail atomic.Int32
}

func (f *flakyLog) AppendDeletion(ctx context.Context, rec *store.DeletionRecord) error {
	if f.fail.Add(-1) >= 0 {
		return errors.New("flakylog: the log is not writable")
	}
	return f.Store.AppendDeletion(ctx, rec)
}

// A forget whose deletion-log record could not be written
// (provider.ErrNotLogged), and still not when completed at once, is a
// retryable 503 for delete_scope and for an item's delete; the retry
// writes the record, once, and answers 200.
func TestForgetNotLoggedIsRetryable(t *testing.T) {
	path := dbPath(t)
	var lite *flakyLog
	s := startWrapped(t, path, Config{}, func(st *sqlite.Store) store.Store {
		lite = &flakyLog{Store: st}
		return lite
	})
	s.createStore("support", nil)
	code, out, _ := s.do("POST", "/memory_stores/support/items", map[string]any{"scope": "alice", "kind": "user_profile", "content": "Plays the cello."})
	require.Equal(t, http.StatusOK, code, "%v", out)
	id := out["memory_id"].(string)
	code, out, _ = s.do("POST", "/memory_stores/support/items", map[string]any{"scope": "bob", "kind": "user_profile", "content": "Plays the oboe."})
	require.Equal(t, http.StatusOK, code, "%v", out)

	logged := func() map[string]int {
		recs, err := lite.ListDeletions(context.Background(), 0, 0)
		require.NoError(t, err)
		n := map[string]int{}
		for _, r := range recs {
			n[r.Reason]++
		}
		return n
	}
	lite.fail.Store(2) // the forget's own append, and its completion's
	code, out, h := s.do("DELETE", "/memory_stores/support/items/"+id, nil)
	requireRetryable(t, code, out, h)
	assert.Empty(t, logged())
	code, out, _ = s.do("DELETE", "/memory_stores/support/items/"+id, nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, map[string]int{"forget_insight": 1}, logged())

	lite.fail.Store(2)
	code, out, h = s.do("POST", "/memory_stores/support:delete_scope", map[string]any{"scope": "bob"})
	requireRetryable(t, code, out, h)
	code, out, _ = s.do("POST", "/memory_stores/support:delete_scope", map[string]any{"scope": "bob"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, map[string]int{"forget_insight": 1, "forget_user": 1}, logged())
	code, out, _ = s.do("POST", "/memory_stores/support:delete_scope", map[string]any{"scope": "bob"})
	assert.Equal(t, http.StatusNotFound, code, "forgotten already: %v", out)
}

// A forget not yet complete is kept in the store, not in the process
// that answered it: after a restart (or on another replica) the retry
// completes it, 200, and its text is gone from the files.
func TestIncompleteForgetOutlivesItsProcess(t *testing.T) {
	path := dbPath(t)
	s, lite := startBusy(t, path, Config{})
	s.createStore("support", nil)
	code, out, _ := s.do("POST", "/memory_stores/support/items", map[string]any{"scope": "alice", "kind": "user_profile", "content": "Plays the Quuxophone daily."})
	require.Equal(t, http.StatusOK, code, "%v", out)
	id := out["memory_id"].(string)

	release := sqlitetest.HoldWAL(t, lite)
	code, out, h := s.do("DELETE", "/memory_stores/support/items/"+id, nil)
	requireRetryable(t, code, out, h)
	release()
	s.stop()

	s2 := start(t, path, Config{})
	code, out, _ = s2.do("DELETE", "/memory_stores/support/items/"+id, nil)
	require.Equal(t, http.StatusOK, code, "the restarted server completes the forget it did not answer: %v", out)
	assert.Equal(t, true, out["deleted"])
	code, _, _ = s2.do("DELETE", "/memory_stores/support/items/"+id, nil)
	assert.Equal(t, http.StatusNotFound, code, "once complete, it is gone")
	s2.stop()
	assert.False(t, fileHolds(t, path, "Quuxophone"))
}
