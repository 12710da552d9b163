package sqlite

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

func TestPrefixEnd(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"upd_", "upd`", true},
		{"a", "b", true},
		{"é", "\xc3\xaa", true},
		{"¿", "\xc2\xc0", true}, // not UTF-8: only compared
		{"a\xff", "b", true},
		{"\xff\xff", "", false},
	} {
		got, ok := prefixEnd(c.in)
		assert.Equal(t, c.ok, ok, "%q", c.in)
		assert.Equal(t, c.want, got, "%q", c.in)
	}
}

// A record's write and deletion change no generation: they touch no
// cached set, and a cached set of the user stays current (not reloaded).
func TestRecordsBumpNoGeneration(t *testing.T) {
	ctx := t.Context()
	s, _ := openTest(t)
	require.NoError(t, s.PutInteraction(ctx, "alice", &store.Interaction{ID: "i1", SessionID: "s", Timestamp: time.Now(),
		FirstTurn: 1, LastTurn: 1, Content: "gardens"}))
	require.NotEmpty(t, textHits(t, s, "alice", "gardens")) // the set is cached now
	before, ok := cachedGen(s, "alice", store.KindInteraction)
	require.True(t, ok)
	gens := func() (g string) {
		require.NoError(t, s.r.QueryRowContext(ctx, `SELECT group_concat(kind || ':' || gen, ' ')
FROM (SELECT kind, gen FROM generations WHERE user_id = ? ORDER BY kind)`, "alice").Scan(&g))
		return g
	}
	stored := gens()

	r := &store.Record{ID: "upd_1", Time: time.Now(), Active: true, Body: []byte(`{"n":1}`), ETag: store.CreateOnly}
	require.NoError(t, s.PutRecord(ctx, "alice", r))
	r.Active = false
	require.NoError(t, s.PutRecord(ctx, "alice", r))
	require.NoError(t, s.DeleteRecord(ctx, "alice", "upd_1"))

	assert.Equal(t, stored, gens(), "no generation row changed")
	after, ok := cachedGen(s, "alice", store.KindInteraction)
	require.True(t, ok, "the cached set stays")
	assert.Equal(t, before, after)
}
