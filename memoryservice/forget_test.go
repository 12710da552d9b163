package memoryservice

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// fileHolds reports whether the SQLite file at path (or its WAL) holds
// word, case-insensitively.
func fileHolds(t *testing.T, path, word string) bool {
	t.Helper()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(path + suffix)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		if bytes.Contains(bytes.ToLower(b), []byte(strings.ToLower(word))) {
			return true
		}
	}
	return false
}

// Forgetting a memory item forgets it in the update records too: once the
// chat summary of an update's session is deleted (the session's turns and
// what was drawn from it alone go with it), no poll of the update shows
// its text, and no byte of it is left in the SQLite file.
func TestDeletingAnItemLeavesNoTextInUpdateRecords(t *testing.T) {
	path := dbPath(t)
	s := start(t, path, Config{})
	s.createStore("support", nil)
	id := s.update("support", "alice", 0, "My cat is named Zorblax and he hates the vacuum.")
	done := s.wait("support", id)
	ops := operations(t, done)
	raw, err := json.Marshal(done)
	require.NoError(t, err)
	require.Contains(t, strings.ToLower(string(raw)), "zorblax", "the completed update shows what it stored")
	k := updateKey(id)
	r, err := s.svc.rec.GetRecord(context.Background(), k.user, k.id)
	require.NoError(t, err)
	assert.NotContains(t, strings.ToLower(string(r.Body)), "zorblax", "the record holds neither the items sent nor the memories' text")

	var summary string
	for _, op := range ops {
		if it := op["memory_item"].(map[string]any); it["kind"] == "chat_summary" {
			summary = it["memory_id"].(string)
		}
	}
	require.NotEmpty(t, summary, "the update made a chat summary: %v", ops)
	code, out, _ := s.do("DELETE", "/memory_stores/support/items/"+summary, nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	for _, it := range s.list("support", "alice", "") {
		require.NotContains(t, strings.ToLower(it["content"].(string)), "zorblax", "the memory itself is gone: %v", it)
	}

	code, out, _ = s.do("GET", "/memory_stores/support/updates/"+id, nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "completed", out["status"], "the record stays, without the text")
	raw, err = json.Marshal(out)
	require.NoError(t, err)
	assert.NotContains(t, strings.ToLower(string(raw)), "zorblax", "the poll shows no forgotten text: %s", raw)
	for _, op := range items(out["result"].(map[string]any)["memory_operations"], "") {
		if op["memory_item"].(map[string]any)["memory_id"] == summary {
			assert.Equal(t, "", op["memory_item"].(map[string]any)["content"], "a forgotten item shows with no content")
		}
	}

	s.stop()
	st, err := sqlite.Open(context.Background(), path, sqlite.Config{Logger: quiet()})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	assert.False(t, fileHolds(t, path, "zorblax"), "no byte of the forgotten text is left in the file")
}

// An item forgotten by its store's TTL is forgotten in the update records
// too.
func TestExpiredItemsLeaveNoTextInUpdateRecords(t *testing.T) {
	clk := &clock{}
	s := start(t, dbPath(t), Config{Now: clk.Now, SweepInterval: 1 << 40})
	s.createStore("brief", map[string]any{"default_ttl_seconds": 3600})
	id := s.update("brief", "bob", 0, "My parrot Quillfeather speaks three words.")
	ops := operations(t, s.wait("brief", id))
	require.NotEmpty(t, ops)
	clk.Add(2 * 3600e9)
	require.NoError(t, s.svc.sweep(context.Background()))
	code, out, _ := s.do("GET", "/memory_stores/brief/updates/"+id, nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	raw, err := json.Marshal(out)
	require.NoError(t, err)
	assert.NotContains(t, strings.ToLower(string(raw)), "quillfeather", "the poll shows no expired text: %s", raw)
}

// A finished update's record (completed, failed or superseded) is deleted
// once Config.UpdateRetention has passed since it finished (24 hours when
// zero); an update still queued is kept whatever its age.
func TestFinishedUpdatesAreDeletedAfterTheRetention(t *testing.T) {
	clk := &clock{}
	s := start(t, dbPath(t), Config{Now: clk.Now, SweepInterval: 1 << 40})
	s.createStore("support", nil)
	superseded := s.update("support", "alice", 3600*10, "I live in Porto.")
	code, out, _ := s.do("POST", "/memory_stores/support:update_memories", map[string]any{"scope": "alice",
		"items": []any{user("I am learning the cello.")}, "update_delay": 0})
	require.Equal(t, http.StatusAccepted, code, "%v", out)
	completed := out["update_id"].(string)
	operations(t, s.wait("support", completed))
	queued := s.update("support", "bob", maxUpdateDelay, "I collect stamps.")

	status := func(id string) int {
		code, _, _ := s.do("GET", "/memory_stores/support/updates/"+id, nil)
		return code
	}
	clk.Add(23 * time.Hour)
	require.NoError(t, s.svc.sweep(context.Background()))
	for _, id := range []string{superseded, completed, queued} {
		assert.Equal(t, http.StatusOK, status(id), "within the retention: %s", id)
	}
	clk.Add(2 * time.Hour)
	require.NoError(t, s.svc.sweep(context.Background()))
	assert.Equal(t, http.StatusNotFound, status(superseded), "superseded over a day ago")
	assert.Equal(t, http.StatusNotFound, status(completed), "completed over a day ago")
	_, out, _ = s.do("GET", "/memory_stores/support/updates/"+queued, nil)
	assert.Equal(t, "queued", out["status"], "a queued update is kept")
	assert.NotEmpty(t, s.list("support", "alice", ""), "the memories stay; only the records go")
}

func TestUpdateRetentionIsConfigurable(t *testing.T) {
	clk := &clock{}
	s := start(t, dbPath(t), Config{Now: clk.Now, SweepInterval: 1 << 40, UpdateRetention: time.Hour})
	s.createStore("support", nil)
	id := s.update("support", "alice", 0, "I live in Porto.")
	operations(t, s.wait("support", id))
	clk.Add(50 * time.Minute)
	require.NoError(t, s.svc.sweep(context.Background()))
	code, _, _ := s.do("GET", "/memory_stores/support/updates/"+id, nil)
	assert.Equal(t, http.StatusOK, code)
	clk.Add(20 * time.Minute)
	require.NoError(t, s.svc.sweep(context.Background()))
	code, _, _ = s.do("GET", "/memory_stores/support/updates/"+id, nil)
	assert.Equal(t, http.StatusNotFound, code)
}

// listCounter is a real store that counts the listings of the service's
// registry (every memory store's records at once).
type listCounter struct {
	store.Store
	mu    sync.Mutex
	lists int
}

func (c *listCounter) ListSessions(ctx context.Context, userID string, f store.SessionFilter) ([]*store.Session, error) {
	if userID == RegistryUserID {
		c.mu.Lock()
		c.lists++
		c.mu.Unlock()
	}
	return c.Store.ListSessions(ctx, userID, f)
}

func (c *listCounter) count() int { c.mu.Lock(); defer c.mu.Unlock(); return c.lists }

// delete_scope reads only the scope's update records (named by its scope
// record), never a listing of every update of every store; the other
// scopes' updates stay.
func TestDeleteScopeReadsOnlyItsOwnUpdates(t *testing.T) {
	path := dbPath(t)
	var counter *listCounter
	s := startWrapped(t, path, Config{}, func(st *sqlite.Store) store.Store {
		counter = &listCounter{Store: st}
		return counter
	})
	s.createStore("support", nil)
	alice := s.update("support", "alice", 0, "I live in Porto.")
	queued := s.update("support", "alice", 3600, "I play the cello.")
	bob := s.update("support", "bob", 0, "I collect stamps.")
	operations(t, s.wait("support", alice))
	operations(t, s.wait("support", bob))

	before := counter.count()
	code, out, _ := s.do("POST", "/memory_stores/support:delete_scope", map[string]any{"scope": "alice"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, before, counter.count(), "delete_scope listed the registry")
	for _, id := range []string{alice, queued} {
		code, _, _ = s.do("GET", "/memory_stores/support/updates/"+id, nil)
		assert.Equal(t, http.StatusNotFound, code, "alice's update %s went with her scope", id)
	}
	code, out, _ = s.do("GET", "/memory_stores/support/updates/"+bob, nil)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "completed", out["status"], "bob's update stays")
}
