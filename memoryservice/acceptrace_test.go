package memoryservice

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/sqlite"
)

// claimer is a real SQLite store on which another replica claims update
// victim the moment an accept is about to supersede it: before the
// batch that supersedes it, or, on records written one by one, before
// that write.
type claimer struct {
	store.Store
	rec    *sqlite.Store
	mu     sync.Mutex
	victim string
}

// claimFirst claims the victim, once, if one of ws supersedes it.
func (c *claimer) claimFirst(t *testing.T, ws ...store.RecordWrite) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.victim == "" {
		return
	}
	k := updateKey(c.victim)
	for _, w := range ws {
		if w.Put == nil || w.UserID != k.user || w.Put.ID != k.id || w.Put.ETag == store.CreateOnly {
			continue
		}
		r, err := c.rec.GetRecord(context.Background(), k.user, k.id)
		require.NoError(t, err)
		var u updateRecord
		require.NoError(t, json.Unmarshal(r.Body, &u))
		u.Claim = &updateClaim{Holder: "replica-elsewhere", Since: time.Now(), Until: time.Now().Add(time.Hour)}
		r.Body, err = json.Marshal(u)
		require.NoError(t, err)
		require.NoError(t, c.rec.PutRecord(context.Background(), k.user, r))
		c.victim = ""
		return
	}
}

// oneByOne has the claimer's records without store.RecordBatch.
type oneByOne struct {
	*claimer
	t *testing.T
}

func (o oneByOne) GetRecord(ctx context.Context, userID, id string) (*store.Record, error) {
	return o.rec.GetRecord(ctx, userID, id)
}

func (o oneByOne) ListRecords(ctx context.Context, userID string, f store.RecordFilter) ([]*store.Record, error) {
	return o.rec.ListRecords(ctx, userID, f)
}

func (o oneByOne) DeleteRecord(ctx context.Context, userID, id string) error {
	return o.rec.DeleteRecord(ctx, userID, id)
}

func (o oneByOne) PutRecord(ctx context.Context, userID string, r *store.Record) error {
	o.claimFirst(o.t, store.RecordWrite{UserID: userID, Put: r})
	return o.rec.PutRecord(ctx, userID, r)
}

// batched has them with it.
type batched struct{ oneByOne }

func (b batched) WriteRecords(ctx context.Context, ws []store.RecordWrite) error {
	b.claimFirst(b.t, ws...)
	return b.rec.WriteRecords(ctx, ws)
}

// An accept whose queued update another replica claims just before it
// is superseded does not continue it: the new update has a session of
// its own, the claimed one runs as it is (not superseded), and the
// scope's queue names the new one. A batch that met the claim is written
// again without the supersession; records written one by one rewrite the
// new update's record.
func TestAcceptMeetsAClaimOfTheUpdateItSupersedes(t *testing.T) {
	for name, wrap := range map[string]func(*claimer, *testing.T) store.Store{
		"batch":      func(c *claimer, t *testing.T) store.Store { return batched{oneByOne{c, t}} },
		"one by one": func(c *claimer, t *testing.T) store.Store { return oneByOne{c, t} },
	} {
		t.Run(name, func(t *testing.T) {
			c := &claimer{}
			s := startWrapped(t, dbPath(t), Config{RateLimit: -1}, func(st *sqlite.Store) store.Store {
				c.Store, c.rec = st, st
				return wrap(c, t)
			})
			s.createStore("support", nil)
			first := s.update("support", "alice", 3600, "I live in Porto.")
			c.mu.Lock()
			c.victim = first
			c.mu.Unlock()
			second := s.update("support", "alice", 3600, "I play the cello.")

			c.mu.Lock()
			require.Empty(t, c.victim, "the claim was made during the accept")
			c.mu.Unlock()
			old, cur := s.record(first), s.record(second)
			assert.Equal(t, statusQueued, old.Status, "the claimed update is not superseded")
			assert.Empty(t, old.SupersededBy)
			require.NotNil(t, old.Claim)
			assert.Equal(t, "replica-elsewhere", old.Claim.Holder)
			assert.NotEqual(t, old.SessionID, cur.SessionID, "the new update has a session of its own")
			assert.Equal(t, 1, cur.Turns, "with its own turn alone")
			turns, err := c.rec.ListTurns(context.Background(), UserID("support", "alice"), old.SessionID, 0)
			require.NoError(t, err)
			require.Len(t, turns, 1, "the claimed update's session holds its own turn alone")
			assert.Equal(t, acceptedMessageID(first, 0), turns[0].Messages[0].ID)
			done, recorded, err := s.svc.acceptanceDone(context.Background(), &cur)
			require.NoError(t, err)
			assert.True(t, done, "its acceptance is done")
			assert.Equal(t, 1, recorded)
			var q scopeQueue
			_, err = s.svc.getRecord(context.Background(), queueKey("support", "alice"), &q)
			require.NoError(t, err)
			assert.Equal(t, second, q.Queued)
		})
	}
}

// writeLog is a real SQLite store that logs the writes made in one
// partition (user): turns and session documents appended or written one
// by one, update records put one by one, and the kinds of the writes of
// each batch that touches it.
type writeLog struct {
	*sqlite.Store
	user string
	mu   sync.Mutex
	log  []string
}

func (w *writeLog) note(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log = append(w.log, s)
}

func (w *writeLog) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.log
	w.log = nil
	return l
}

func (w *writeLog) AppendTurn(ctx context.Context, userID string, t *store.Turn) error {
	if userID == w.user {
		w.note("append turn")
	}
	return w.Store.AppendTurn(ctx, userID, t)
}

func (w *writeLog) PutSession(ctx context.Context, userID string, d *store.Session) error {
	if userID == w.user {
		w.note("put session")
	}
	return w.Store.PutSession(ctx, userID, d)
}

func (w *writeLog) PutRecord(ctx context.Context, userID string, r *store.Record) error {
	if strings.HasPrefix(r.ID, "update.") {
		w.note("put " + r.ID)
	}
	return w.Store.PutRecord(ctx, userID, r)
}

func (w *writeLog) WriteRecords(ctx context.Context, ws []store.RecordWrite) error {
	var kinds []string
	touches := false
	for _, x := range ws {
		switch {
		case x.Put != nil:
			kinds = append(kinds, "put")
		case x.Append != nil:
			kinds = append(kinds, "append")
			touches = touches || x.UserID == w.user
		case x.Check != nil:
			kinds = append(kinds, "check")
		default:
			kinds = append(kinds, "delete")
		}
	}
	if touches {
		w.note("batch " + strings.Join(kinds, " "))
	}
	return w.Store.WriteRecords(ctx, ws)
}

// On SQLite, an accept superseding the scope's queued update is one
// transaction: the queue record, the new update's marker and record, the
// superseded update and the drop of its marker, the turn, and the check
// that the memory store's definition is as the accept read it, in one
// batch; nothing else is written for it, and the update is accepted
// (its record's acceptance done) as it is answered.
func TestAnAcceptIsOneTransactionOnSQLite(t *testing.T) {
	w := &writeLog{user: UserID("support", "alice")}
	s := startWrapped(t, dbPath(t), Config{RateLimit: -1}, func(st *sqlite.Store) store.Store {
		w.Store = st
		return w
	})
	s.createStore("support", nil)
	first := s.update("support", "alice", 3600, "I live in Porto.")
	w.take()
	second := s.update("support", "alice", 3600, "I play the cello.")
	assert.Equal(t, []string{"batch put put put put delete append check"}, w.take())
	cur := s.record(second)
	assert.False(t, cur.Accepting, "accepted as it is answered")
	assert.Equal(t, 2, cur.Turns)
	assert.Equal(t, s.record(first).SessionID, cur.SessionID, "the superseded update's session goes on")
	turns, err := w.ListTurns(context.Background(), w.user, cur.SessionID, 0)
	require.NoError(t, err)
	require.Len(t, turns, 2)
	assert.Equal(t, acceptedMessageID(second, 0), turns[1].Messages[0].ID)
	assert.Equal(t, 2, turns[1].Seq)
}
