package cosmos

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentmemory/agentmemory/store"
)

// The log's items sit in their own partition of the sessions container,
// out of every user's reach; after EraseDeletionNames the stored items hold
// no byte of the clear names, and a user's DeleteUser and DeleteSession
// never reach them.
func TestDeletionLogItems(t *testing.T) {
	ctx := t.Context()
	s := openLauncher(t, nil)
	rec := &store.DeletionRecord{Seq: 1, At: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), Reason: "forget_user",
		Subject: "subj-a", Hash: "h1", UserID: "alice-user",
		Items: []store.DeletedItem{{Kind: store.KindSessionSummary, Action: store.ActionDeleted, Count: 1, IDHash: "idh", ID: "ses-zqxmarker"}}}
	require.NoError(t, s.AppendDeletion(ctx, rec))
	require.NoError(t, s.PutSession(ctx, "alice-user", &store.Session{ID: "ses-zqxmarker"}))

	raw := func() []byte {
		b, _, err := s.read(ctx, store.KindSessionSummary, store.DeletionLogPartition, deletionItemID(1))
		require.NoError(t, err)
		return b
	}
	var item map[string]any
	require.NoError(t, json.Unmarshal(raw(), &item))
	assert.Equal(t, store.DeletionLogPartition, item["user_id"], "the partition key")
	assert.Equal(t, docTypeDeletion, item["doc_type"])
	assert.Equal(t, "alice-user", item["name_user_id"])

	_, err := s.DeleteSession(ctx, "alice-user", "ses-zqxmarker")
	require.NoError(t, err)
	require.NoError(t, s.DeleteUser(ctx, "alice-user"))
	assert.Contains(t, string(raw()), "alice-user", "the log outlives the user")

	n, err := s.EraseDeletionNames(ctx, "subj-a")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	b := raw()
	for _, name := range []string{"alice-user", "zqxmarker"} {
		assert.False(t, bytes.Contains(b, []byte(name)), "%s left in the stored item: %s", name, b)
	}
	assert.True(t, bytes.Contains(b, []byte(`"idh"`)), "the hashes stay")
}
