package memoryservice

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// An accept writes its update's marker, then its record: a poll of
// another replica in between finds a marker of no record. It leaves the
// marker, so that a poll after the acceptance claims the update (the
// accepting replica's timer may find no worker free); a marker whose
// record never came, its acceptance failed, is dropped once the
// acceptance is past acceptGrace.
func TestAPollDuringAnAcceptKeepsTheMarker(t *testing.T) {
	backends(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		clk := &clock{}
		// The pollers poll when the test says.
		accepting := replica(t, open, "replica-a", nil, Config{Now: clk.Now, PollInterval: time.Hour})
		polling := replica(t, open, "replica-b", nil, Config{Now: clk.Now, PollInterval: time.Hour})
		accepting.createStore("support", nil)

		id := newUpdateID("support", "alice")
		require.NoError(t, accepting.svc.putRecord(ctx, activeKey(id), store.CreateOnly, clk.Now(), true, marker{At: clk.Now()}))
		require.NoError(t, polling.svc.poll(ctx))
		_, err := polling.svc.rec.GetRecord(ctx, activeUser, "update."+id)
		require.NoError(t, err, "the marker of an update being accepted is kept")

		clk.Add(acceptGrace + time.Second)
		require.NoError(t, polling.svc.poll(ctx))
		_, err = polling.svc.rec.GetRecord(ctx, activeUser, "update."+id)
		require.ErrorIs(t, err, store.ErrNotFound, "the marker of an acceptance that failed is dropped")
	})
}

// An accept writes its update's record before it records the turns: no
// replica claims the update until its session holds every one of them,
// or until acceptGrace has passed, when the run has the turns recorded
// (an acceptance cut short by a crash).
func TestAClaimWaitsForTheAcceptancesTurns(t *testing.T) {
	ctx := context.Background()
	clk := &clock{}
	s := start(t, dbPath(t), Config{Now: clk.Now})
	s.createStore("support", nil)
	require.NoError(t, s.svc.Close(ctx)) // no poller or timer claims first
	userID := UserID("support", "alice")
	accepted := func(turns int) (id string) {
		id = newUpdateID("support", "alice")
		now := clk.Now()
		rec := &updateRecord{ID: id, Store: "support", Scope: "alice", SessionID: newID("mss_"), Status: statusQueued,
			CreatedAt: now, DueAt: now, Accepting: true, AcceptTurns: turns, Turns: turns}
		require.NoError(t, s.svc.putRecord(ctx, updateKey(id), store.CreateOnly, now, true, rec))
		return id
	}
	record := func(id string, i int) {
		rec := s.record(id)
		msg := acceptedMessageID(id, i)
		turn := &store.Turn{ID: "turn-" + msg, SessionID: rec.SessionID, Time: clk.Now(),
			Messages: []store.TurnMessage{{ID: msg, Role: "user", Content: "message " + msg}}}
		require.NoError(t, s.st.AppendTurn(ctx, userID, turn))
	}

	id := accepted(2)
	record(id, 0)
	h, err := s.svc.claim(ctx, id, time.Time{})
	require.NoError(t, err)
	require.Nil(t, h, "claimed with one turn of two recorded")
	record(id, 1)
	h, err = s.svc.claim(ctx, id, time.Time{})
	require.NoError(t, err)
	require.NotNil(t, h, "not claimed with both turns recorded")
	rec := s.record(id)
	require.False(t, rec.Accepting, "the claim ends the acceptance")
	require.Equal(t, 2, rec.Turns)

	cut := accepted(2)
	record(cut, 0)
	h, err = s.svc.claim(ctx, cut, time.Time{})
	require.NoError(t, err)
	require.Nil(t, h)
	clk.Add(acceptGrace + time.Second)
	h, err = s.svc.claim(ctx, cut, time.Time{})
	require.NoError(t, err)
	require.NotNil(t, h, "an acceptance cut short is claimed after acceptGrace")
	rec = s.record(cut)
	require.False(t, rec.Accepting)
	require.Equal(t, 1, rec.Turns, "the run has the one turn recorded")
}

// A replica writes an accept under the ETags of the queue record and the
// update it wrote last for the scope, without reading them again; when
// another replica accepted an update of the scope since, or claimed that
// one, the write fails and the accept reads them: the new update
// supersedes the one the queue names now, never the one the first
// replica remembers.
func TestAnAcceptSeesTheScopeAsAnotherReplicaLeftIt(t *testing.T) {
	backends(t, func(t *testing.T, open opener) {
		a := replica(t, open, "replica-a", nil, Config{PollInterval: time.Hour})
		b := replica(t, open, "replica-b", nil, Config{PollInterval: time.Hour})
		a.createStore("support", nil)
		first := a.update("support", "alice", 3600, "I live in Porto.")
		second := b.update("support", "alice", 3600, "I play the cello.")
		third := a.update("support", "alice", 3600, "I drink espresso.")
		assert.Equal(t, second, a.record(first).SupersededBy)
		assert.Equal(t, third, a.record(second).SupersededBy, "the update the queue named, accepted on the other replica")
		assert.Equal(t, statusQueued, a.record(third).Status)
		assert.Equal(t, 3, a.record(third).Turns)
		var q scopeQueue
		_, err := a.svc.getRecord(context.Background(), queueKey("support", "alice"), &q)
		require.NoError(t, err)
		assert.Equal(t, third, q.Queued)

		// The other replica claims the queued update: the next accept here
		// does not supersede it, and has a session of its own.
		ctx := context.Background()
		var u updateRecord
		tag, err := b.svc.getRecord(ctx, updateKey(third), &u)
		require.NoError(t, err)
		now := time.Now()
		u.Status, u.Claim = statusInProgress, &updateClaim{Holder: "replica-b", Since: now, Until: now.Add(time.Hour)}
		require.NoError(t, b.svc.putRecord(ctx, updateKey(third), tag, u.CreatedAt, true, &u))
		fourth := a.update("support", "alice", 3600, "I swim on Sundays.")
		assert.Equal(t, statusInProgress, a.record(third).Status, "a claimed update is not superseded")
		assert.Empty(t, a.record(third).SupersededBy)
		assert.NotEqual(t, a.record(third).SessionID, a.record(fourth).SessionID)
		assert.Equal(t, 1, a.record(fourth).Turns)
	})
}

// An update run since this replica accepted it is not the scope's queued
// update any more: the next accept that names it as previous_update_id
// continues its session, on every backend, whatever this replica
// remembers of the scope.
func TestAnAcceptAfterTheRunContinuesTheSessionItNames(t *testing.T) {
	backends(t, func(t *testing.T, open opener) {
		s := replica(t, open, "replica-a", nil, Config{})
		s.createStore("support", nil)
		first := s.update("support", "alice", 0, "I live in Porto.")
		s.wait("support", first)
		next := s.updateWith("support", "alice", map[string]any{"items": []any{user("I am saving for a house.")},
			"update_delay": 0, "previous_update_id": first})
		s.wait("support", next)
		assert.Equal(t, s.record(first).SessionID, s.record(next).SessionID, "the session of the update it names goes on")
		assert.True(t, s.record(next).Reopened)
	})
}

// An accept writes under the memory store's definition as this replica
// last read it (on SQLite, without reading it again), and checks in its
// batch that it is so still: once another replica deleted the store, the
// accept here is answered 404 and writes nothing of its scope; re-created
// under the same name, or changed, the store accepts again.
func TestAnAcceptChecksTheStoreItRemembers(t *testing.T) {
	backends(t, func(t *testing.T, open opener) {
		a := replica(t, open, "replica-a", nil, Config{PollInterval: time.Hour})
		b := replica(t, open, "replica-b", nil, Config{PollInterval: time.Hour})
		a.createStore("support", nil)
		a.update("support", "alice", 3600, "I live in Porto.")

		code, out, _ := b.do("DELETE", "/memory_stores/support", nil)
		require.Equal(t, http.StatusOK, code, "%v", out)
		body := map[string]any{"scope": "bob", "items": []any{user("I play the cello.")}, "update_delay": 3600}
		code, out, _ = a.do("POST", "/memory_stores/support:update_memories", body)
		assert.Equal(t, http.StatusNotFound, code, "the store is gone: %v", out)
		_, err := a.svc.getRecord(context.Background(), queueKey("support", "bob"), &scopeQueue{})
		require.ErrorIs(t, err, store.ErrNotFound, "nothing of bob's scope is written")

		b.createStore("support", nil) // the same name, another definition
		a.update("support", "bob", 3600, "I play the cello.")
		code, out, _ = b.do("POST", "/memory_stores/support", map[string]any{"description": "changed"})
		require.Equal(t, http.StatusOK, code, "%v", out)
		a.update("support", "bob", 3600, "I swim on Sundays.")
	})
}
