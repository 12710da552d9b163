package memoryservice

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

func operations(t *testing.T, out map[string]any) []map[string]any {
	t.Helper()
	require.Equal(t, "completed", out["status"], "%v", out)
	res := out["result"].(map[string]any)
	require.Contains(t, res, "usage")
	return items(res["memory_operations"], "")
}

func TestUpdateSearchListGetDeleteAndDeleteScope(t *testing.T) {
	updateSearchListGetDelete(t, start(t, dbPath(t), Config{}))
}

func updateSearchListGetDelete(t *testing.T, s *server) {
	s.createStore("support", nil)
	id := s.update("support", "alice", 0, "I prefer dark roast coffee every morning.", "I am allergic to peanuts.")
	done := s.wait("support", id)
	ops := operations(t, done)
	t.Logf("operations: %v", ops)
	kinds := map[string]int{}
	for _, op := range ops {
		assert.Equal(t, "create", op["kind"])
		it := op["memory_item"].(map[string]any)
		assert.Equal(t, "alice", it["scope"])
		kinds[it["kind"].(string)]++
	}
	assert.Equal(t, 1, kinds["chat_summary"], "the session's summary")
	assert.GreaterOrEqual(t, kinds["user_profile"], 1, "insights or the profile")

	listed := s.list("support", "alice", "")
	assert.Len(t, listed, len(ops), "every created item is listed")
	assert.Contains(t, contents(listed), "coffee")
	profile := s.list("support", "alice", "?kind=user_profile")
	assert.Len(t, profile, kinds["user_profile"])

	found := s.search("support", "alice", "What coffee does she like?")
	require.NotEmpty(t, found)
	assert.Contains(t, contents(found), "coffee")

	// get and delete an item by its id
	item := profile[0]
	mid := item["memory_id"].(string)
	code, got, _ := s.do("GET", "/memory_stores/support/items/"+mid, nil)
	require.Equal(t, http.StatusOK, code, "%v", got)
	assert.Equal(t, item["content"], got["content"])
	code, del, _ := s.do("DELETE", "/memory_stores/support/items/"+mid, nil)
	require.Equal(t, http.StatusOK, code, "%v", del)
	assert.Equal(t, map[string]any{"object": "memory_store.item.deleted", "memory_id": mid, "deleted": true}, del)
	code, _, _ = s.do("GET", "/memory_stores/support/items/"+mid, nil)
	assert.Equal(t, http.StatusNotFound, code)
	for _, it := range s.list("support", "alice", "") {
		assert.NotEqual(t, mid, it["memory_id"])
	}

	// delete_scope forgets the user whole
	code, out, _ := s.do("POST", "/memory_stores/support:delete_scope", map[string]any{"scope": "alice"})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, map[string]any{"object": "memory_store.scope.deleted", "name": "support", "scope": "alice", "deleted": true}, out)
	assert.Empty(t, s.list("support", "alice", ""))
	assert.Empty(t, s.search("support", "alice", "coffee"))
	ins, err := s.st.ListInsights(context.Background(), UserID("support", "alice"), store.InsightFilter{IncludeSuperseded: true})
	require.NoError(t, err)
	assert.Empty(t, ins)
	code, _, _ = s.do("GET", "/memory_stores/support/updates/"+id, nil)
	assert.Equal(t, http.StatusNotFound, code, "the scope's updates go with it")
}

func TestUpdateDelayDebouncesAScope(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("support", nil)
	first := s.update("support", "bob", 3600, "I live in Lisbon.")
	code, out, _ := s.do("GET", "/memory_stores/support/updates/"+first, nil)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "queued", out["status"], "waits for its delay")

	code, out, _ = s.do("POST", "/memory_stores/support:update_memories", map[string]any{"scope": "bob",
		"items": []any{user("I am saving for a house.")}, "update_delay": 0, "previous_update_id": first})
	require.Equal(t, http.StatusAccepted, code, "%v", out)
	second := out["update_id"].(string)
	done := s.wait("support", second)
	operations(t, done)

	_, old, _ := s.do("GET", "/memory_stores/support/updates/"+first, nil)
	assert.Equal(t, "superseded", old["status"])
	assert.Equal(t, second, old["superseded_by"])

	// both updates' items are turns of one session, ended once
	ss, err := s.st.ListSessions(context.Background(), UserID("support", "bob"), store.SessionFilter{})
	require.NoError(t, err)
	require.Len(t, ss, 1)
	assert.Equal(t, store.SessionCompleted, ss[0].Status)
	turns, err := s.st.ListTurns(context.Background(), UserID("support", "bob"), ss[0].ID, 1)
	require.NoError(t, err)
	require.Len(t, turns, 2)
	assert.Contains(t, turns[0].Messages[0].Content, "Lisbon")
	assert.Contains(t, turns[1].Messages[0].Content, "house")

	// another scope's update is not debounced with bob's
	other := s.update("support", "carol", 3600, "I like jazz.")
	_, out, _ = s.do("GET", "/memory_stores/support/updates/"+other, nil)
	assert.Equal(t, "queued", out["status"])
}

func TestAnAcceptedUpdateCompletesAfterARestart(t *testing.T) {
	path := dbPath(t)
	completesAfterRestart(t, func(cfg Config) *server { return start(t, path, cfg) })
}

func completesAfterRestart(t *testing.T, startFn func(Config) *server) {
	s := startFn(Config{})
	s.createStore("support", nil)
	id := s.update("support", "dana", 3600, "I prefer window seats on long flights.")
	s.stop() // the update is queued, its due time an hour away

	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	s2 := startFn(Config{Now: later})
	done := s2.wait("support", id)
	ops := operations(t, done)
	require.NotEmpty(t, ops)
	assert.Contains(t, contents(s2.list("support", "dana", "")), "window")
}

func TestAnUpdateInProgressAtCrashIsRunAgain(t *testing.T) {
	path := dbPath(t)
	s := start(t, path, Config{})
	s.createStore("support", nil)
	id := s.update("support", "erin", 3600, "I prefer aisle seats.")
	// As a crash mid-run leaves it: marked in progress in the store.
	var rec updateRecord
	_, err := s.svc.getRecord(context.Background(), updateKey(id), &rec)
	require.NoError(t, err)
	rec.Status = statusInProgress
	require.NoError(t, s.svc.putRecord(context.Background(), updateKey(id), "", rec.CreatedAt, true, &rec))
	s.stop()

	s2 := start(t, path, Config{}) // in progress runs at once, whatever its due time
	done := s2.wait("support", id)
	operations(t, done)
	assert.Contains(t, strings.ToLower(contents(s2.list("support", "erin", ""))), "aisle")
}

// A crash after a new update of a scope is written and before the queued
// one it continues is marked superseded leaves two queued updates on one
// session. The restart supersedes the older by the newer, which then runs
// alone and ends the session once.
func TestACrashBeforeSupersedingLeavesOneQueuedUpdate(t *testing.T) {
	path := dbPath(t)
	s := start(t, path, Config{})
	s.createStore("support", nil)
	first := s.update("support", "fay", 3600, "I live in Lisbon.")
	second := s.update("support", "fay", 3600, "I am saving for a house.")
	// As the crash leaves it: the first still queued, on the same session.
	ctx := context.Background()
	var rec updateRecord
	_, err := s.svc.getRecord(ctx, updateKey(first), &rec)
	require.NoError(t, err)
	require.Equal(t, statusSuperseded, rec.Status)
	rec.Status, rec.SupersededBy = statusQueued, ""
	require.NoError(t, s.svc.putRecord(ctx, updateKey(first), "", rec.CreatedAt, true, &rec))
	require.NoError(t, s.svc.putRecord(ctx, activeKey(first), "", rec.CreatedAt, true, struct{}{}), "and its marker")
	s.stop()

	clk := &clock{}
	s2 := start(t, path, Config{Now: clk.Now})
	_, out, _ := s2.do("GET", "/memory_stores/support/updates/"+first, nil)
	assert.Equal(t, "superseded", out["status"], "%v", out)
	assert.Equal(t, second, out["superseded_by"])
	_, out, _ = s2.do("GET", "/memory_stores/support/updates/"+second, nil)
	assert.Equal(t, "queued", out["status"], "the newer waits for its own due time")
	s2.stop()

	clk.Add(2 * time.Hour)
	s3 := start(t, path, Config{Now: clk.Now})
	operations(t, s3.wait("support", second))
	ss, err := s3.st.ListSessions(ctx, UserID("support", "fay"), store.SessionFilter{})
	require.NoError(t, err)
	require.Len(t, ss, 1, "one session")
	turns, err := s3.st.ListTurns(ctx, UserID("support", "fay"), ss[0].ID, 1)
	require.NoError(t, err)
	assert.Len(t, turns, 2, "both updates' items")
	assert.Contains(t, strings.ToLower(contents(s3.list("support", "fay", ""))), "house")
}

// previous_update_id naming a completed update continues its memory
// session: the new items are turns of the same session, which is ended
// again, so its chat summary is updated (one summary of the whole
// conversation) and extraction reads only the new turns. The earlier
// summary stays listed while the new update waits. Without
// previous_update_id an update starts a session of its own.
func TestPreviousUpdateIDContinuesACompletedUpdate(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("support", nil)
	ctx := context.Background()
	first := s.update("support", "gil", 0, "I live in Lisbon.")
	var summary string
	for _, op := range operations(t, s.wait("support", first)) {
		if it := op["memory_item"].(map[string]any); it["kind"] == "chat_summary" {
			summary = it["memory_id"].(string)
		}
	}
	require.NotEmpty(t, summary)

	code, out, _ := s.do("POST", "/memory_stores/support:update_memories", map[string]any{"scope": "gil",
		"items": []any{user("I am saving for a house.")}, "update_delay": 3600, "previous_update_id": first})
	require.Equal(t, http.StatusAccepted, code, "%v", out)
	second := out["update_id"].(string)
	summaries := s.list("support", "gil", "?kind=chat_summary")
	require.Len(t, summaries, 1, "the summary is still listed while the update waits")
	assert.Equal(t, summary, summaries[0]["memory_id"])

	third := s.updateWith("support", "gil", map[string]any{"items": []any{user("My budget is modest.")},
		"update_delay": 0, "previous_update_id": second})
	ops := operations(t, s.wait("support", third))
	var kinds []string
	for _, op := range ops {
		if it := op["memory_item"].(map[string]any); it["memory_id"] == summary {
			kinds = append(kinds, op["kind"].(string))
			assert.Contains(t, it["content"], "house", "the summary covers the new turns")
		}
	}
	assert.Equal(t, []string{"update"}, kinds, "the earlier chat summary is updated, not a new one made: %v", ops)
	summaries = s.list("support", "gil", "?kind=chat_summary")
	require.Len(t, summaries, 1)
	assert.Contains(t, summaries[0]["content"], "Lisbon", "one summary of the whole conversation")

	ss, err := s.st.ListSessions(ctx, UserID("support", "gil"), store.SessionFilter{})
	require.NoError(t, err)
	require.Len(t, ss, 1, "one session")
	assert.Equal(t, store.SessionCompleted, ss[0].Status)
	turns, err := s.st.ListTurns(ctx, UserID("support", "gil"), ss[0].ID, 1)
	require.NoError(t, err)
	require.Len(t, turns, 3)
	assert.Contains(t, turns[2].Messages[0].Content, "budget")

	// without previous_update_id: a session of its own
	operations(t, s.wait("support", s.update("support", "gil", 0, "I swim on Sundays.")))
	assert.Len(t, s.list("support", "gil", "?kind=chat_summary"), 2)
}

// previous_update_id naming an update whose session is gone (its chat
// summary deleted) starts a new session.
func TestPreviousUpdateIDOfAForgottenSessionStartsANewOne(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("support", nil)
	first := s.update("support", "hal", 0, "I live in Lisbon.")
	for _, op := range operations(t, s.wait("support", first)) {
		if it := op["memory_item"].(map[string]any); it["kind"] == "chat_summary" {
			code, out, _ := s.do("DELETE", "/memory_stores/support/items/"+it["memory_id"].(string), nil)
			require.Equal(t, http.StatusOK, code, "%v", out)
		}
	}
	next := s.updateWith("support", "hal", map[string]any{"items": []any{user("I am saving for a house.")},
		"update_delay": 0, "previous_update_id": first})
	operations(t, s.wait("support", next))
	summaries := s.list("support", "hal", "?kind=chat_summary")
	require.Len(t, summaries, 1)
	assert.NotContains(t, summaries[0]["content"], "Lisbon", "nothing of the forgotten session comes back")
}

// A reopened session forgotten while its update waits (its chat summary
// deleted) stays forgotten: the update completes without bringing it
// back.
func TestAReopenedSessionForgottenWhileQueuedStaysForgotten(t *testing.T) {
	s := start(t, dbPath(t), Config{})
	s.createStore("support", nil)
	first := s.update("support", "ida", 0, "I live in Lisbon.")
	operations(t, s.wait("support", first))
	next := s.updateWith("support", "ida", map[string]any{"items": []any{user("I am saving for a house.")},
		"update_delay": 1, "previous_update_id": first})
	summaries := s.list("support", "ida", "?kind=chat_summary")
	require.Len(t, summaries, 1)
	code, out, _ := s.do("DELETE", "/memory_stores/support/items/"+summaries[0]["memory_id"].(string), nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	operations(t, s.wait("support", next))
	assert.Empty(t, s.list("support", "ida", "?kind=chat_summary"))
	ss, err := s.st.ListSessions(context.Background(), UserID("support", "ida"), store.SessionFilter{})
	require.NoError(t, err)
	assert.Empty(t, ss, "no session comes back")
}
