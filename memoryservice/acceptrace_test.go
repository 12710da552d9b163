package memoryservice

import (
	"context"
	"encoding/json"
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
