package store_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
	"github.com/agentmemory/agentmemory/store/driver"
)

func TestDeterministicIDs(t *testing.T) {
	assert.Equal(t, store.InteractionID("s", 1, 10), store.InteractionID("s", 1, 10))
	assert.NotEqual(t, store.InteractionID("s", 1, 10), store.InteractionID("s", 11, 20))
	assert.NotEqual(t, store.InteractionID("s1", 1, 10), store.InteractionID("s", 11, 10))
	assert.NoError(t, store.CheckID("id", store.InteractionID("weird/session?", 1, 2)))
	assert.Equal(t, "longterm-u1", store.LongTermID("u1"))
	assert.Len(t, store.ContentHash("x"), 32)
}

func TestLongTermIDFitsEveryUserID(t *testing.T) {
	// Profiles stored under "longterm-<user>" keep their id.
	assert.Equal(t, "longterm-alice", store.LongTermID("alice"))
	fits := strings.Repeat("u", store.MaxIDBytes-len("longterm-"))
	assert.Equal(t, "longterm-"+fits, store.LongTermID(fits))

	seen := map[string]string{}
	for _, u := range []string{
		fits + "u",
		fits + "v",
		strings.Repeat("u", store.MaxIDBytes),
		strings.Repeat("日", store.MaxIDBytes/3),
		strings.Repeat("🙂", store.MaxIDBytes/4) + "xyz",
	} {
		require.NoError(t, store.CheckUserID(u), "%d bytes", len(u))
		id := store.LongTermID(u)
		require.NoError(t, store.CheckID("profile id", id), "profile of a %d-byte user", len(u))
		assert.True(t, strings.HasPrefix(id, "longterm-sha256-"), id)
		assert.Equal(t, id, store.LongTermID(u), "deterministic")
		require.NoError(t, driver.Validator{}.Insight(u, &store.Insight{ID: id, InsightType: store.InsightLongTerm}))
		assert.NotContains(t, seen, id, "users %q and %q share a profile id", seen[id], u)
		seen[id] = u
	}
}

func TestIDOneByteTooLong(t *testing.T) {
	long := strings.Repeat("u", store.MaxIDBytes+1)
	err := store.CheckUserID(long)
	require.ErrorIs(t, err, store.ErrInvalid)
	assert.ErrorContains(t, err, "user id: 256 bytes, at most 255")
	err = store.CheckID("session id", long)
	require.ErrorIs(t, err, store.ErrInvalid)
	assert.ErrorContains(t, err, "session id: 256 bytes, at most 255")
	require.NoError(t, store.CheckUserID(long[1:]))
}
